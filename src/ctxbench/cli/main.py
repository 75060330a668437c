"""The ``ctxbench`` command: command groups are registered here, one module each.

Commands are registered lazily: a group's module (and whatever it imports: numpy, bm25s,
jsonschema, tiktoken, httpx) is imported only when that command runs, so
``ctxbench --help`` and ``ctxbench --version`` start in well under a quarter second
(``benchmarks/bench_cli_startup.py``).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence

import click

from ctxbench import __version__
from ctxbench.cli import is_the_program, starting_is_over
from ctxbench.cli.errors import EXIT_INTERRUPTED, run_guarded

# name -> (module, attribute, one-line help shown by ``ctxbench --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "schema": ("ctxbench.cli.schema", "schema",
               "Print or list the JSON Schemas that ship with ctxbench."),
    "compile": ("ctxbench.cli.compile", "compile_group",
                "Compile a policy-aware, budgeted context packet and its commit."),
    "strategies": ("ctxbench.cli.strategies", "strategies",
                   "List the installed context strategies and where each came from."),
    "context-managers": ("ctxbench.cli.context_managers", "context_managers",
                         "List the installed agent context managers and their source."),
    "public-eval": ("ctxbench.cli.public_eval", "public_eval",
                    "Compare two public-eval row files under the public-eval protocol."),
    "cef": ("ctxbench.cli.cef", "cef",
            "Analyze paired context-efficiency trials under the CEF protocol."),
    "eceb": ("ctxbench.cli.eceb", "eceb",
             "Register, evaluate and render ECEB-0.1 benchmarks and runs."),
    "run": ("ctxbench.cli.run", "run",
            "Run a paired experiment from a spec TOML file."),
    "demo": ("ctxbench.cli.demo", "demo",
             "Run the embedded end-to-end demonstration offline."),
    "import": ("ctxbench.cli.importer", "import_group",
               "Import Inspect AI, SWE-bench or lm-eval logs as trials or rows."),
    "report": ("ctxbench.cli.report", "report",
               "Render report JSON files or run directories as one self-contained HTML page."),
    "view": ("ctxbench.cli.view", "view",
             "Serve the run pages under a directory on 127.0.0.1, read-only."),
    "calibrate": ("ctxbench.cli.calibrate", "calibrate",
                  "Measure each gate's false-pass rate and interval coverage by simulation."),
    "plan": ("ctxbench.cli.plan", "plan",
             "Tasks a CEF quality gate needs for 80% and 90% power (exact or simulated)."),
}
# Kept for callers that list the modules (module, attribute).
COMMAND_MODULES: tuple[tuple[str, str], ...] = tuple(
    (module, attr) for module, attr, _help in COMMANDS.values())


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (click's lazy pattern)."""

    def __init__(self, *args: object, lazy: dict[str, tuple[str, str, str]],
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module_name, attr, _help = self.lazy[cmd_name]
            try:
                module = importlib.import_module(module_name)
            except KeyboardInterrupt:
                # Ctrl-C while the command's own modules load: nothing has run yet.
                sys.stderr.write("ctxbench: interrupted while starting; nothing was run or "
                                 "written\n")
                raise SystemExit(EXIT_INTERRUPTED) from None
            starting_is_over()
            command = getattr(module, attr)
            if not isinstance(command, click.Command):
                raise TypeError(f"{module_name}.{attr} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing uses the static one-line help, so --help imports no command module.
        rows = [(name, self.lazy[name][2] if name in self.lazy and name not in self.commands
                 else (self.commands[name].get_short_help_str(limit=80)))
                for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning ctxbench errors into one line and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    code = run_guarded(cli, args, debug="--debug" in args)
    if is_the_program():
        # The command is done and every file it wrote is closed (trial lines are fsynced
        # as they are written): a Ctrl-C now would only turn this exit code into a
        # SIGINT death during interpreter teardown.
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if code == EXIT_INTERRUPTED:
            # An interrupt that import machinery swallowed earlier would otherwise make
            # the interpreter end itself with SIGINT instead of this code.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
