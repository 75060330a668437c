"""Sorted distinct integer codes, as ``np.unique`` gives them, without ``np.unique``.

``np.unique`` without index or count outputs first asks ``numpy.ma`` whether its input
is masked, and the first such call imports ``numpy.ma`` (about 15 ms of an analysis's
start-up). These are the two uses the analyses have: distinct codes, and distinct pairs
of codes in lexicographic order.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["distinct_codes", "distinct_pairs"]

IntArray = NDArray[np.int64]


def distinct_codes(values: IntArray) -> IntArray:
    """The distinct values of a 1-D integer array, ascending (``np.unique(values)``)."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.shape[0] < 2:
        return ordered
    keep = np.empty(ordered.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def distinct_pairs(first: IntArray, second: IntArray) -> IntArray:
    """The distinct (first, second) rows, lexicographic: ``np.unique(rows, axis=0)``."""
    order = np.lexsort((second, first))
    a, b = np.asarray(first)[order], np.asarray(second)[order]
    keep = np.ones(a.shape[0], dtype=bool)
    keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return np.column_stack([a[keep], b[keep]])
