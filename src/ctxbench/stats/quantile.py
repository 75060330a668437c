"""Percentiles of resampled statistics, computed as ``numpy.percentile`` computes them.

:func:`percentiles` is numpy's default ("linear", Hyndman & Fan's method 7) for a 1-D
array of finite values, in the same floating-point operations: the percent divided by
100, the virtual index ``(n - 1) * q``, its floor and the weight ``index - floor``, and
numpy's two-sided interpolation (``a + (b - a) * t`` below ``t = 0.5``, ``b - (b - a) *
(1 - t)`` from it on). It gives the same bits without what ``numpy.percentile`` does
besides: argument handling, and an ``np.unique`` of the indices whose first call imports
``numpy.ma`` (15 ms, about a fortieth of an analysis of 10,000 trials).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["percentiles"]


def percentiles(values: NDArray[np.float64], percents: Sequence[float]) -> list[float]:
    """The ``percents`` (each in [0, 100]) of ``values`` (1-D, finite, not empty)."""
    n = values.shape[0]
    if values.ndim != 1 or n == 0:
        raise ValueError(f"values: expected a non-empty 1-D array, got shape {values.shape}")
    points: list[tuple[float, int, int, float]] = []
    for percent in percents:
        if not 0.0 <= percent <= 100.0:
            raise ValueError(f"percents: expected numbers in [0, 100], got {percent!r}")
        index = (n - 1) * (percent / 100.0)
        below = math.floor(index)
        if index >= n - 1:
            below = above = -1
        else:
            above = below + 1
        points.append((index, below, above, index - below))
    ordered = np.partition(values, sorted({k for p in points for k in (p[1], p[2])}))
    out = []
    for _, below, above, weight in points:
        a, b = float(ordered[below]), float(ordered[above])
        diff = b - a
        out.append(b - diff * (1.0 - weight) if weight >= 0.5 else a + diff * weight)
    return out
