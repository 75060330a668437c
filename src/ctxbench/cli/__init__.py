"""ctxbench.cli: thin click commands; each parses, calls one library function, prints, exits."""

import os
import signal
import sys
import threading
from types import FrameType


def _interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    # Only modules are being imported: nothing was opened or written, so the process ends
    # here. An exception would have to cross import machinery and third-party module
    # initialisation, which may turn it into another exception or swallow it.
    sys.stderr.write("ctxbench: interrupted while starting; nothing was run or written\n")
    sys.stderr.flush()
    os._exit(130)


def is_the_program() -> bool:
    """True when this process is the ``ctxbench`` command (not a library user's)."""
    parts = sys.argv[0].replace("\\", "/").split("/") if sys.argv else []
    return bool(parts) and (parts[-1] in ("ctxbench", "ctxbench.exe") or
                            parts[-2:] == ["ctxbench", "__main__.py"])


def starting_is_over() -> None:
    """Ctrl-C raises KeyboardInterrupt from now on (a command is about to run)."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# Ctrl-C while the command line and the command's modules are still being imported exits
# 130 with one line instead of a traceback; ``LazyGroup.get_command`` calls
# ``starting_is_over`` once the command's module is loaded, before it runs.
if is_the_program() and threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
