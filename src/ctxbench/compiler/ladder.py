"""The budget ladder a ``compiled`` packet grows along: more budget never loses evidence.

A packet at a budget above ``SEED_BASE`` starts from the packet of the ladder step below
it, the largest ``SEED_BASE * 2**k`` under the budget (:func:`step_below`), itself built the
same way, so every byte the packet at a step holds is held at every larger budget.
:class:`StepMemo` keeps the last steps built, so a ladder compiled budget by budget (as
``ctxbench compile evaluate`` does) builds each step once.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

__all__ = ["SEED_BASE", "StepMemo", "step_below"]

SEED_BASE = 128
T = TypeVar("T")


def step_below(budget: int) -> int | None:
    """The largest ``SEED_BASE * 2**k`` below ``budget``, or None at or below SEED_BASE."""
    step = SEED_BASE
    while 2 * step < budget:
        step *= 2
    return step if step < budget else None


class StepMemo(Generic[T]):
    """The last ``size`` values per (owner object, key); the owner is held, so its id is
    never reused for another object while the entry lives."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: dict[tuple[int, tuple[object, ...]], tuple[object, T]] = {}

    def get(self, owner: object, key: tuple[object, ...]) -> T | None:
        with self._lock:
            hit = self._items.get((id(owner), key))
        return hit[1] if hit is not None and hit[0] is owner else None

    def clear(self) -> None:
        """Forget every value (a benchmark timing a packet built from nothing)."""
        with self._lock:
            self._items.clear()

    def put(self, owner: object, key: tuple[object, ...], value: T) -> None:
        with self._lock:
            if len(self._items) >= self._size:
                self._items.pop(next(iter(self._items)))
            self._items[(id(owner), key)] = (owner, value)
