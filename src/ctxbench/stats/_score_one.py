"""The score statistic of one null, for the root finding of :mod:`ctxbench.stats.score`.

The regula falsi of a score interval evaluates one null per step, hundreds of times per
gate; these are the batched functions of that module for a single null, in the same
floating-point operations (1-D arrays and numpy scalars instead of one-row matrices and
one-element arrays, whose per-call overhead was most of the time).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["BISECTION_STEPS", "LAMBDA_STEPS", "solve_one", "statistic_one", "tilted_one"]

FloatArray = NDArray[np.float64]
LAMBDA_STEPS = 50
BISECTION_STEPS = 80


def solve_one(z: FloatArray, w: FloatArray, lo: np.float64, hi: np.float64) -> np.float64:
    """``score._solve_lambda`` for one null, with the bracket kept as numpy scalars.

    The same steps in the same floating-point operations (numpy scalars follow the array
    arithmetic bit for bit), without a one-element array per step: a score interval
    solves one null at a time, hundreds of times.
    """
    lo0, hi0 = lo, hi
    lam = min(max(np.float64(0.0), lo), hi)
    if lam <= lo or lam >= hi:
        lam = 0.5 * (lo + hi)
    scale = (w * np.abs(z)).sum()
    tolerance = 1e-13 * scale
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(LAMBDA_STEPS):
            ratio = z / (1.0 + lam * z)
            weighted = w * ratio
            value = weighted.sum()
            slope = -(weighted * ratio).sum()
            step = lam - value / slope
            if value > 0:
                lo = lam
            else:
                hi = lam
            new = step if (lo < step < hi and np.isfinite(step)) else 0.5 * (lo + hi)
            done = abs(new - lam) <= 1e-12 * abs(lam) or abs(value) <= tolerance
            lam = new
            if done:
                break
        value = (w * z / (1.0 + lam * z)).sum()
    if abs(value) <= 1e-9 * scale:
        return np.float64(lam)
    # Newton left it short of the root (rare): bisection on the bracket.
    lo_b, hi_b = lo0, hi0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo_b + hi_b)
            if (w * z / (1.0 + mid * z)).sum() > 0:
                lo_b = mid
            else:
                hi_b = mid
    return np.float64(0.5 * (lo_b + hi_b))


def statistic_one(num: FloatArray, den: FloatArray, w: FloatArray, theta0: float,
                   extremes: tuple[float, float] | None, shift: float = 0.0) -> float:
    """``score._statistics`` for one null, in the same floating-point operations.

    One-dimensional arrays and numpy scalars instead of one-row matrices and one-element
    arrays (reductions over a row and over a 1-D array are the same pairwise sums), and
    a branch not taken is not computed: the regula falsi of a score interval evaluates
    one null per step. ``shift`` (>= 0) moves the total contrast that far toward zero
    (the continuity correction of ``score.continuity_shift``).
    """
    n = float(w.sum())
    z = num - theta0 * den
    if extremes is not None:
        low, high = extremes
        dmax = float(den.max())
        a = np.float64(dmax * (low - theta0))
        b = np.float64(dmax * (high - theta0))
    else:
        largest = np.abs(z).max()
        a, b = -largest, largest
    mean = (w * z).sum() / n
    if shift > 0.0:
        mean = np.sign(mean) * max(abs(mean) - shift / n, 0.0)
    var = tilted_one(z, w, a, b, n)
    if np.isnan(var):
        t = math.inf if mean > 0 else (-math.inf if mean < 0 else 0.0)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = float(mean / np.sqrt(var / n))
    return 0.0 if (mean == 0 and not var > 0) else t


def tilted_one(z: FloatArray, w: FloatArray, a: np.float64, b: np.float64,
                n: float) -> np.float64:
    """``score._tilted_variance`` for one null (``a`` < 0 < ``b`` given)."""
    low_end = np.minimum(a, z.min())
    high_end = np.maximum(b, z.max())
    if not (low_end < 0 and high_end > 0):
        return np.float64(np.nan)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hi = -1.0 / low_end
        lo = -1.0 / high_end

        def total(lam: np.float64) -> np.float64:
            den = 1.0 + lam * z
            terms = np.where(den > 0, z / np.where(den > 0, den, 1.0),
                             np.where(z > 0, np.inf, -np.inf))
            return np.float64((w * terms).sum())

        if total(hi) >= 0:
            e = a
        elif total(lo) <= 0:
            e = b
        else:
            lam = solve_one(z, w, lo, hi)
            p = w / (1.0 + lam * z)
            out = (p * z**2).sum() / p.sum()
            return np.float64(np.maximum(out, (w * z * z).sum() / n))
        # KKT solution with a zero-count extreme cell e (see score._tilted_variance).
        p = (w / n) * e / (e - z)
    p_ext = np.clip(1.0 - p.sum(), 0.0, 1.0)
    out = (p * z * z).sum() + p_ext * e * e
    return np.float64(np.maximum(out, (w * z * z).sum() / n))
