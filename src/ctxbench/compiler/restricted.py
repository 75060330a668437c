"""Find restricted text in what a strategy writes: the bytes of the artifacts it may not read.

Built by :func:`~ctxbench.compiler.plugins.compile_with_strategy` from ctxbench's own index
and the task's policy *before* any strategy code runs, so nothing a plugin changes later
(a monkeypatched ``Policy.permits``) moves the line. :meth:`RestrictedText.holds` is true
when a text shares a run of :data:`WINDOW` characters with a denied or disallowed
artifact that no permitted artifact also holds, compared after dropping whitespace and
ASCII case (re-spaced or re-cased copies are found too). Encoded or paraphrased text is
not found: that is what the worker process and the permitted-text-only request are for.
The denied bytes are read only when there is free text to check.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ctxbench.compiler.index import ContextIndex

__all__ = ["WINDOW", "RestrictedText", "shares_restricted_run"]

#: Characters (whitespace dropped) a text must share with restricted bytes to hold them.
WINDOW = 16
_DROP = bytes(range(0x21)) + b"\x7f"
_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
_BASE = np.uint64(1_000_003)


def _normal(data: bytes) -> bytes:
    return data.translate(_LOWER, _DROP)


def _windows(data: bytes) -> np.ndarray:
    """A 64-bit polynomial hash of every WINDOW-byte run of ``data`` (wrapping arithmetic)."""
    if len(data) < WINDOW:
        return np.zeros(0, dtype=np.uint64)
    values = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    powers = _BASE ** np.arange(WINDOW - 1, -1, -1, dtype=np.uint64)
    view = np.lib.stride_tricks.sliding_window_view(values, WINDOW)
    with np.errstate(over="ignore"):
        return np.asarray((view * powers).sum(axis=1, dtype=np.uint64), dtype=np.uint64)


def shares_restricted_run(texts: Iterable[str], denied: Iterable[bytes],
                          permitted: Iterable[bytes]) -> bool:
    """True when one of ``texts`` shares a :data:`WINDOW`-character run with some
    ``denied`` bytes that none of the ``permitted`` bytes holds (whitespace and ASCII case
    ignored); each input is read once, ``permitted`` only when there is such a run."""
    mine = np.unique(np.concatenate([np.zeros(0, dtype=np.uint64), *(
        _windows(_normal(t.encode("utf-8", "replace"))) for t in texts)]))
    if not len(mine):
        return False
    hits = np.zeros(0, dtype=np.uint64)
    for data in denied:
        hits = np.union1d(hits, mine[np.isin(mine, _windows(_normal(data)))])
    if not len(hits):
        return False
    for data in permitted:  # a run that permitted text also holds is not restricted
        hits = hits[~np.isin(hits, _windows(_normal(data)))]
        if not len(hits):
            return False
    return True


class RestrictedText:
    """The restricted bytes of one (index, policy): every artifact not in ``allowed``."""

    def __init__(self, index: ContextIndex, allowed: Collection[int], *,
                 trusted: bool = False) -> None:
        """``trusted``: the text comes from ctxbench itself, nothing is searched."""
        self._index = index
        self._allowed = tuple(sorted(allowed))
        self._denied = () if trusted else tuple(
            i for i in range(len(index.corpus.artifacts)) if i not in allowed)

    def holds(self, *texts: str) -> bool:
        """True when one of ``texts`` holds restricted text (see the module docstring)."""
        if not self._denied:
            return False
        return shares_restricted_run(texts, (self._read(p) for p in self._denied),
                                     (self._read(p) for p in self._allowed))

    def _read(self, position: int) -> bytes:
        # ctxbench's own digest-checked read; a denied artifact's bytes stay in this process
        return self._index.source(position)
