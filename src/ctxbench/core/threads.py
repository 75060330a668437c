"""Run a few calls in plain threads and re-raise the first error in the caller's thread.

For work that releases the GIL (hashing, numpy): one thread per call, no executor (a
future per call costs as much as hashing a small file, and ``concurrent.futures`` costs
its import, logging included, on every start-up that reaches it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["run_threads"]


def run_threads(target: Callable[..., object], calls: Sequence[tuple[Any, ...]]) -> None:
    """``target(*args)`` for each ``args`` of ``calls``, each in its own thread; returns
    when all have finished, raising the first error any of them raised (a MemoryError)."""
    failures: list[BaseException] = []

    def work(*args: Any) -> None:
        try:
            target(*args)
        except BaseException as exc:  # re-raised in the caller's thread below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=args, daemon=True) for args in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
