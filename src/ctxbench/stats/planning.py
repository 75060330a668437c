"""Sample sizes for a non-inferiority gate: exact power for binary pairs, and the search.

* :func:`exact_binary_power`: the exact power of a gate on ``n`` binary pairs. Of ``n``
  independent pairs, each is a gain (baseline 0, candidate 1) with probability
  ``p_gain``, a loss with ``p_loss`` and tied otherwise; the number of discordant pairs
  ``K`` is Binomial(n, p_gain + p_loss) and, given ``K = k``, the gains are
  Binomial(k, p_gain / (p_gain + p_loss)). The gate is a black box ``passes(gains,
  losses, n)``, assumed monotone in the gains for a fixed ``k`` (one more gain in place
  of a loss never turns a pass into a failure), so for each ``k`` only the smallest
  passing number of gains is searched; the power is the exact sum over the multinomial
  distribution (terms below ``1e-12`` in probability are left out, so the power is exact
  to that).
* :func:`normal_tasks`: the normal-approximation sample size
  ``((z_(1 - alpha) + z_power) * sd / (difference - margin))^2``, the starting point
  of the searches and the "about how many tasks" of an inconclusive report.
* :func:`smallest_n`: the smallest ``n`` at which a power function reaches a target,
  by doubling from a start and bisection. Exact power is not monotone in ``n`` (it
  saw-tooths with the discrete support, Chernick & Liu 2002); the result is the first
  ``n`` of the bisection that reaches the target, and its power is reported with it.

References: Chernick, M. R. & Liu, C. Y. (2002) The saw-toothed behavior of power versus
sample size and software solutions. The American Statistician 56, 149-155; Julious, S.
A. (2004) Sample sizes for clinical trials with Normal data. Stat. Med. 23, 1921-1986.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["binomial_pmf", "exact_binary_power", "normal_tasks", "smallest_n"]

_TAIL = 1e-12
"""Discordant counts less probable than this are left out of the exact sum."""


def _probability(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}")
    return float(value)


def binomial_pmf(n: int, p: float) -> NDArray[np.float64]:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p), in log space (no overflow at large n)."""
    if n < 0:
        raise ValueError(f"n: expected an integer >= 0, got {n!r}")
    p = _probability("p", p)
    k = np.arange(n + 1, dtype=np.float64)
    if p in (0.0, 1.0):
        out = np.zeros(n + 1)
        out[0 if p == 0.0 else n] = 1.0
        return out
    log_choose = (math.lgamma(n + 1) - np.vectorize(math.lgamma)(k + 1.0)
                  - np.vectorize(math.lgamma)(n - k + 1.0))
    return np.asarray(np.exp(log_choose + k * math.log(p) + (n - k) * math.log1p(-p)),
                      dtype=np.float64)


def exact_binary_power(n: int, p_gain: float, p_loss: float,
                       passes: Callable[[int, int, int], bool]) -> float:
    """The exact probability that ``passes(gains, losses, n)`` on ``n`` binary pairs."""
    if n < 1:
        raise ValueError(f"n: expected an integer >= 1, got {n!r}")
    p_gain = _probability("p_gain", p_gain)
    p_loss = _probability("p_loss", p_loss)
    discordance = p_gain + p_loss
    if discordance > 1.0 + 1e-12:
        raise ValueError(f"p_gain + p_loss: expected at most 1, got {discordance!r}")
    discordance = min(discordance, 1.0)
    pmf_k = binomial_pmf(n, discordance)
    share = p_gain / discordance if discordance > 0 else 0.0
    power = 0.0
    threshold: int | None = None
    for k in range(n + 1):
        if pmf_k[k] < _TAIL:
            continue
        threshold = _smallest_gains(k, n, passes, threshold)
        if threshold > k:
            continue
        pmf_g = binomial_pmf(k, share)
        power += float(pmf_k[k] * pmf_g[threshold:].sum())
    return min(power, 1.0)


def _smallest_gains(k: int, n: int, passes: Callable[[int, int, int], bool],
                    hint: int | None) -> int:
    """The fewest gains of ``k`` discordant pairs that pass (``k + 1``: none passes).

    Walks from ``hint`` (the answer for ``k - 1``, which moves by a step or two), using
    the monotonicity in the gains; without a hint, bisection.
    """
    def ok(g: int) -> bool:
        return passes(g, k - g, n)

    if hint is None or hint > k + 1:
        lo, hi = 0, k + 1  # ok(hi) is taken as true: k + 1 gains is "none passes"
        if not ok(k):
            return k + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo
    g = min(hint, k)
    if ok(g):
        while g > 0 and ok(g - 1):
            g -= 1
        return g
    while g < k:
        g += 1
        if ok(g):
            return g
    return k + 1


MAX_ROOT = 1e6
"""``normal_tasks`` answers None past ``MAX_ROOT ** 2`` (10^12) tasks: no study reaches it."""


def normal_tasks(margin: float, difference: float, sd: float, *, level: float,
                 power: float) -> int | None:
    """Tasks for ``power`` by the normal approximation; None when no n can reach it.

    ``difference`` is the true mean change per task, ``margin`` the gate's (the change
    must be shown above it), ``sd`` the spread of one task's change; the one-sided test
    is at ``(1 - level) / 2``.
    """
    from statistics import NormalDist  # here: statistics imports fractions and decimal

    if not 0.0 < level < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"level, power: expected numbers in (0, 1), got {level!r}, {power!r}")
    if not sd >= 0.0 or not math.isfinite(sd):
        raise ValueError(f"sd: expected a finite number >= 0, got {sd!r}")
    gap = difference - margin
    if gap <= 0.0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2.0) + NormalDist().inv_cdf(power)
    root = z * sd / gap
    if not root <= MAX_ROOT:  # over 10^12 tasks (a spread of 1e303 once overflowed here)
        return None
    return max(2, math.ceil(root ** 2))


def smallest_n(power_at: Callable[[int], float], target: float, *, start: int,
               n_min: int, n_max: int) -> tuple[int, float] | None:
    """The smallest ``n`` in [n_min, n_max] found with ``power_at(n) >= target``.

    Doubles from ``start`` until the target is reached (None past ``n_max``), then
    bisects between the last miss and the first hit. Returns ``(n, power_at(n))``.
    """
    if not n_min <= n_max:
        raise ValueError(f"n_min, n_max: expected n_min <= n_max, got {n_min}, {n_max}")
    cache: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in cache:
            cache[n] = power_at(n)
        return cache[n]

    n = min(max(start, n_min), n_max)
    miss = n_min - 1
    while at(n) < target:
        if n >= n_max:
            return None
        miss = n
        n = min(2 * n, n_max)
    hit = n
    while hit - miss > 1:
        mid = (miss + hit) // 2
        if at(mid) >= target:
            hit = mid
        else:
            miss = mid
    return hit, at(hit)
