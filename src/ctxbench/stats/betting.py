"""Anytime-valid tests of a bounded mean by betting (Waudby-Smith & Ramdas 2023).

Observations ``x_1, x_2, ...`` lie in ``[lower, upper]``. To test ``H0: E(x_i) <= m``
a bettor starts with wealth 1 and at each observation stakes a share ``lambda_i >= 0``
of it, chosen from the observations before it only (predictable), on ``x_i - m``:

    K_n = prod_(i <= n) (1 + lambda_i (x_i - m)),  0 <= lambda_i <= c / (m - lower).

Under H0 (for independent observations whose conditional means are at most ``m``) the
wealth is a nonnegative supermartingale with ``K_0 = 1``, so by Ville's inequality
``P(sup_n K_n >= 1 / alpha) <= alpha``: the test that rejects the first time the wealth
reaches ``1 / alpha`` has type-I error at most ``alpha`` *however often, and whenever,
it is looked at* -- no normal approximation, no lattice correction, for every
distribution on the scale. The bound ``c = 1/2`` keeps every factor at least 1/2.

The stakes are the approximate growth-rate adaptive plug-in (aGRAPA, Waudby-Smith &
Ramdas 2023, sec. 5.3): ``lambda_i = (mu_(i-1) - m) / (sigma2_(i-1) + (mu_(i-1) - m)^2)``
truncated to ``[0, c / (m - lower)]``, with running estimates ``mu`` and ``sigma2`` that
start from the middle of the scale and a quarter of its squared width (one pseudo
observation each), so the first stake is set before any data.

Reference: Waudby-Smith, I. & Ramdas, A. (2023) Estimating means of bounded random
variables by betting. JRSS B 86, 1-27; Ville, J. (1939) *Etude critique de la notion
de collectif*. Gauthier-Villars.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["STAKE_CAP", "crossed", "log_wealth"]

FloatArray = NDArray[np.float64]
STAKE_CAP = 0.5
"""``c``: the largest share of the wealth at risk on one observation's worst case."""


def log_wealth(x: FloatArray, null: float, lower: float, upper: float) -> FloatArray:
    """``log K_n`` for n = 1..len(x) of the bet against ``H0: mean <= null``.

    ``x`` in run order, each in ``[lower, upper]``; ``lower < null < upper``.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("x: expected a 1-D array of observations in run order")
    if not lower < null < upper:
        raise ValueError(f"null: expected a value inside ({lower}, {upper}), got {null!r}")
    if arr.size and (float(arr.min()) < lower - 1e-12 or float(arr.max()) > upper + 1e-12):
        raise ValueError(f"x: expected values in [{lower}, {upper}], got "
                         f"{float(arr.min())!r} .. {float(arr.max())!r}")
    n = arr.shape[0]
    cap = STAKE_CAP / (null - lower)
    # Running mean and variance with one pseudo observation at the middle of the scale.
    mid = 0.5 * (lower + upper)
    count = np.arange(1, n + 1, dtype=np.float64)
    csum = np.concatenate([[0.0], np.cumsum(arr)[:-1]])
    mu = (mid + csum) / count
    # sigma2_(i-1) = (prior + sum_(j < i) (x_j - mu_j)^2) / i, the plug-in of the paper.
    mu_after = (mid + np.cumsum(arr)) / (count + 1.0)
    dev = np.concatenate([[0.0], np.cumsum((arr - mu_after) ** 2)[:-1]])
    sigma2 = (0.25 * (upper - lower) ** 2 + dev) / count
    gap = mu - null
    stake = np.clip(gap / (sigma2 + gap * gap), 0.0, cap)
    factors = 1.0 + stake * (arr - null)
    return np.asarray(np.cumsum(np.log(factors)), dtype=np.float64)


def crossed(log_k: FloatArray, alpha: float) -> NDArray[np.bool_]:
    """Whether the wealth has reached ``1 / alpha`` by each n (once reached, it stays)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    return np.asarray(np.maximum.accumulate(log_k) >= math.log(1.0 / alpha), dtype=np.bool_)
