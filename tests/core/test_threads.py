"""run_threads: every call runs, in threads of its own, and an error reaches the caller."""

from __future__ import annotations

import threading

import pytest

from ctxbench.core.threads import run_threads


def test_every_call_runs_in_a_thread_of_its_own() -> None:
    seen: dict[int, int] = {}

    def work(k: int) -> None:
        seen[k] = threading.get_ident()

    run_threads(work, [(k,) for k in range(4)])
    assert sorted(seen) == [0, 1, 2, 3]
    assert threading.get_ident() not in seen.values()


def test_the_first_error_reaches_the_caller_after_all_have_finished() -> None:
    done: list[int] = []

    def work(k: int) -> None:
        if k == 1:
            raise MemoryError("no room")
        done.append(k)

    with pytest.raises(MemoryError, match="no room"):
        run_threads(work, [(0,), (1,), (2,)])
    assert sorted(done) == [0, 2]
