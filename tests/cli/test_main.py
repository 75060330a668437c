"""The top-level command: lazy registration, static help, no heavy import on --help."""

from __future__ import annotations

import subprocess
import sys

import click

from ctxbench.cli.main import COMMANDS, cli

HEAVY = ("numpy", "bm25s", "jsonschema", "tiktoken", "httpx", "rich")


def test_help_and_version_import_no_heavy_dependency() -> None:
    code = (
        "import sys\n"
        "from ctxbench.cli.main import main\n"
        "try:\n"
        f"    main([sys.argv[1]])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    for flag in ("--help", "--version"):
        done = subprocess.run([sys.executable, "-c", code, flag], capture_output=True,
                              text=True, check=True)
        assert done.stdout.strip().endswith("[]"), (flag, done.stdout[-300:])
        if flag == "--help":
            for name in COMMANDS:
                assert f"  {name} " in done.stdout


def test_every_lazy_command_resolves_to_its_click_command() -> None:
    ctx = click.Context(cli)
    for name, (module, attr, short) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command), name
        assert command.name == name, (module, attr)
        assert short.endswith(".") and len(short) < 80
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    assert cli.get_command(ctx, "no-such-command") is None
