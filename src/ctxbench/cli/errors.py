"""The one boundary where errors become a line on stderr and an exit code.

Exit codes: 0 done; 1 a gate or claim failed and ``--check`` was given; 2 invalid input
or usage; 3 a provider or runtime failure; 130 interrupted.
"""

from __future__ import annotations

import errno
import sys

import click

from ctxbench.core.errors import CtxbenchError

__all__ = ["EXIT_CHECK_FAILED", "EXIT_INPUT", "EXIT_OK", "EXIT_RUNTIME", "run_guarded"]

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_INPUT = 2
EXIT_RUNTIME = 3
EXIT_INTERRUPTED = 130


def run_guarded(command: click.Command, args: list[str], *, debug: bool = False) -> int:
    """Run a click command; return the exit code instead of raising."""
    try:
        result = command.main(args=args, prog_name="ctxbench", standalone_mode=False)
    except CtxbenchError as exc:
        if debug:
            raise
        click.echo(f"ctxbench: error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("ctxbench: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return EXIT_INPUT
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("ctxbench: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # Not translated below (a write to a full disk, an unwritable output): one line.
        if debug:
            raise
        code = errno.errorcode.get(exc.errno or 0, "")
        where = f"{str(exc.filename)[:300]}: " if exc.filename is not None else ""
        reason = exc.strerror or str(exc)[:300]
        click.echo(f"ctxbench: error: {where}{reason}{f' ({code})' if code else ''}", err=True)
        return EXIT_INPUT
    if isinstance(result, int):
        return result
    return EXIT_OK


def fail_check(message: str) -> int:
    """Print why a ``--check`` gate failed and return exit code 1."""
    click.echo(f"ctxbench: check failed: {message}", err=True)
    sys.stderr.flush()
    return EXIT_CHECK_FAILED
