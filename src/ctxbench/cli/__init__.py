"""ctxbench.cli: thin click commands; each parses, calls one library function, prints, exits."""

import signal
import sys
import threading
from types import FrameType


def _interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write("ctxbench: interrupted while starting; nothing was run or written\n")
    raise SystemExit(130)


def _is_the_program() -> bool:
    """True when this process is the ``ctxbench`` command (not a library user's)."""
    parts = sys.argv[0].replace("\\", "/").split("/") if sys.argv else []
    return bool(parts) and (parts[-1] in ("ctxbench", "ctxbench.exe") or
                            parts[-2:] == ["ctxbench", "__main__.py"])


# Ctrl-C while the commands' modules are still being imported exits 130 with one line
# instead of a traceback; ``main`` restores KeyboardInterrupt before any command runs.
if _is_the_program() and threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
