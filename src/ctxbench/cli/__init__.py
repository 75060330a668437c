"""ctxbench.cli: thin click commands; each parses, calls one library function, prints, exits."""

import gc
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
    """Ctrl-C raises KeyboardInterrupt from now on (a command is about to run).

    The cyclic garbage collector, off while the modules loaded, is switched on, with
    what they built (classes, functions, tables: kept for the whole process) moved out of
    its reach (``gc.freeze``), so no later collection scans them again.
    """
    if _COLLECTOR_PAUSED and not gc.isenabled():
        gc.freeze()
        gc.enable()
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# While the program starts it only imports modules, whose objects live as long as the
# process: the cyclic collector would run about 60 times over them for nothing (15 ms of
# CPU of a 0.5 s `cef analyze`, benchmarks/RESULTS.md). ``starting_is_over`` turns it on.
_COLLECTOR_PAUSED = is_the_program() and gc.isenabled()
if _COLLECTOR_PAUSED:
    gc.disable()

# Ctrl-C while the command line and the command's modules are still being imported exits
# 130 with one line instead of a traceback; ``LazyGroup.get_command`` calls
# ``starting_is_over`` once the command's module is loaded, before it runs.
if is_the_program() and threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
