"""The top-level command: lazy registration, static help, no heavy import on --help."""

from __future__ import annotations

import os
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


def test_analysis_commands_set_one_blas_thread_before_numpy_loads() -> None:
    code = (
        "import importlib, os, sys\n"
        "import ctxbench.cli.main\n"
        "assert 'numpy' not in sys.modules\n"
        "importlib.import_module(sys.argv[1])\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for module in ("ctxbench.cli.cef", "ctxbench.cli.public_eval"):
        done = subprocess.run([sys.executable, "-c", code, module], capture_output=True,
                              text=True, check=True, env=env)
        assert done.stdout.strip() == "1", (module, done.stderr[-300:])
        # A value the user chose is kept.
        done = subprocess.run([sys.executable, "-c", code, module], capture_output=True,
                              text=True, check=True, env={**env, "OPENBLAS_NUM_THREADS": "3"})
        assert done.stdout.strip() == "3", (module, done.stderr[-300:])


def test_the_program_starts_without_the_cyclic_collector_and_runs_with_it() -> None:
    # The program (argv[0] is the console script): no collection while modules load;
    # the command runs with the collector on, the start-up's objects frozen out of it.
    code = (
        "import gc, sys\n"
        "sys.argv[0] = sys.argv[1]\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: collections.append(phase))\n"
        "import ctxbench.cli\n"
        "before = len(collections)\n"
        "import ctxbench.cli.main as m\n"
        "import click\n"
        "print(gc.isenabled(), len(collections) - before)\n"
        "m.cli.get_command(click.Context(m.cli), 'cef')\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 0, len(collections) - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, "/usr/bin/ctxbench"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["False 0", "True True 0"], done.stderr[-300:]
    # A library user's process keeps the collector as it had it.
    done = subprocess.run([sys.executable, "-c", code, "python"], capture_output=True,
                          text=True, check=True)
    first, second = done.stdout.split("\n")[:2]
    assert first.startswith("True ") and second.startswith("True False "), done.stdout
