"""The ``ctxbench`` command: command groups are registered here, one module each."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence

import click

from ctxbench import __version__
from ctxbench.cli.errors import run_guarded

COMMAND_MODULES: tuple[tuple[str, str], ...] = (
    ("ctxbench.cli.schema", "schema"),
    ("ctxbench.cli.compile", "compile_group"),
    ("ctxbench.cli.strategies", "strategies"),
    ("ctxbench.cli.public_eval", "public_eval"),
    ("ctxbench.cli.cef", "cef"),
    ("ctxbench.cli.eceb", "eceb"),
    ("ctxbench.cli.run", "run"),
    ("ctxbench.cli.demo", "demo"),
    ("ctxbench.cli.importer", "import_group"),
    ("ctxbench.cli.report", "report"),
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ctxbench")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Audit whether a context-control system sends less context without losing quality.

    \b
    Example:
      ctxbench cef analyze trials.jsonl --output report.json
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _register() -> None:
    import importlib

    for module_name, attr in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        command = getattr(module, attr)
        cli.add_command(command)


_register()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning ctxbench errors into one line and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)  # see ctxbench/cli/__init__
    sys.exit(run_guarded(cli, args, debug="--debug" in args))
