"""Intervals and tests for proportions: Wilson, paired score intervals, exact McNemar.

* :func:`wilson_interval`: the Wilson (1927) score interval for one binomial proportion.
* :func:`tango_paired_interval`: Tango's (1998) score interval for the difference of two
  paired (matched) proportions, found by inverting the score test with bisection.
* :func:`clustered_tango_interval`: the Tango interval for paired proportions observed
  in clusters (repeated runs of one instance), with the counts divided by the estimated
  design effect (Rao & Scott 1992), the non-inferiority gate for repeated runs.
* :func:`newcombe_paired_interval`: Newcombe's (1998) method 10, the hybrid score
  interval built from the two marginal Wilson intervals with a correlation correction.
* :func:`mcnemar_exact`: the exact McNemar test (two-sided binomial test of the
  discordant pairs against 1/2).

Paired counts follow one convention throughout: of ``n`` pairs, ``only_first`` had the
event under the first condition only and ``only_second`` under the second only; the
difference estimated is ``p_first - p_second = (only_first - only_second) / n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ClusteredDifferenceInterval",
    "McNemarResult",
    "PairedDifferenceInterval",
    "ProportionInterval",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "tango_paired_interval",
    "wilson_interval",
]

_EXACT_LIMIT = 2000
"""Up to this many discordant pairs the McNemar tail is summed in exact rationals."""


@dataclass(frozen=True, slots=True)
class ProportionInterval:
    """A proportion ``successes / n`` and its two-sided ``level`` interval."""

    estimate: float
    low: float
    high: float
    level: float
    method: Literal["wilson"]
    successes: int
    n: int


@dataclass(frozen=True, slots=True)
class PairedDifferenceInterval:
    """The difference ``p_first - p_second`` of paired proportions and its interval."""

    estimate: float
    low: float
    high: float
    level: float
    method: Literal["tango_score", "newcombe_hybrid_score"]
    n: int
    only_first: int
    only_second: int


@dataclass(frozen=True, slots=True)
class ClusteredDifferenceInterval:
    """Paired difference over clustered cells: Tango's interval on design-effect-scaled counts.

    ``design_effect`` is the ratio of the cluster-robust variance of the difference to its
    variance under independent cells, floored at 1 (clustering never narrows the interval).
    """

    estimate: float
    low: float
    high: float
    level: float
    method: Literal["tango_score_design_effect"]
    design_effect: float
    clusters: int
    n: int
    only_first: int
    only_second: int


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Exact McNemar test: two-sided p-value of ``only_first`` vs ``only_second``."""

    only_first: int
    only_second: int
    p_value: float
    method: Literal["exact_binomial"]


def _z(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < level < 1.0:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    from statistics import NormalDist  # here: statistics imports fractions and decimal

    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def _count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"{name}: expected an integer >= 0, got {value!r}")
    return int(value)


def _paired_counts(only_first: int, only_second: int, n: int) -> tuple[int, int, int]:
    b = _count("only_first", only_first)
    c = _count("only_second", only_second)
    total = _count("n", n)
    if total < 1:
        raise ValueError("n: expected at least one pair, got 0")
    if b + c > total:
        raise ValueError(f"only_first + only_second: expected at most n={total}, got {b + c}")
    return b, c, total


def wilson_interval(successes: int, n: int, *, level: float = 0.95) -> ProportionInterval:
    """Wilson score interval for a binomial proportion (Wilson 1927; Newcombe 1998a, method 3).

    The interval is the set of p whose score test is not rejected at ``1 - level``; it
    stays inside [0, 1] and keeps near-nominal coverage for small n and extreme p.
    """
    x = _count("successes", successes)
    total = _count("n", n)
    if total < 1:
        raise ValueError("n: expected at least one trial, got 0")
    if x > total:
        raise ValueError(f"successes: expected at most n={total}, got {x}")
    z = _z(level)
    p = x / total
    z2n = z * z / total
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / total + z2n / (4.0 * total))
    # Exact 0 and n successes have closed-form bounds 0 and 1; keep them exact.
    low = 0.0 if x == 0 else max(0.0, centre - half)
    high = 1.0 if x == total else min(1.0, centre + half)
    return ProportionInterval(p, low, high, level, "wilson", x, total)


def _tango_z(delta: float, b: float, c: float, n: float) -> float:
    """Tango's (1998) score statistic for H0: p_first - p_second = delta."""
    w = -b - c + (2 * n - b + c) * delta
    root = math.sqrt(max(0.0, w * w + 8.0 * n * c * delta * (1.0 - delta)))
    q21 = (root - w) / (4.0 * n)  # restricted MLE of the second-only cell probability
    variance = n * (2.0 * q21 + delta * (1.0 - delta))
    numerator = b - c - n * delta
    if variance <= 0.0:
        if numerator == 0:
            return 0.0
        return math.inf if numerator > 0 else -math.inf
    return numerator / math.sqrt(variance)


def _bisect(fn: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of a decreasing function on [lo, hi] (fn(lo) > 0 >= fn(hi)) by bisection."""
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if fn(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def tango_paired_interval(only_first: int, only_second: int, n: int, *,
                          level: float = 0.95) -> PairedDifferenceInterval:
    """Tango (1998) score interval for the difference of two paired proportions.

    Inverts the score test of H0: p_first - p_second = delta, whose variance uses the
    maximum likelihood estimate of the discordant cell restricted to delta: the interval
    is {delta : |Z(delta)| < z_(1-alpha/2)}. Z is decreasing in delta, so each bound is
    found by bisection between the estimate and -1 or 1. Tango, T. (1998) Equivalence
    test and confidence interval for the difference in proportions for the paired-sample
    design. Statistics in Medicine 17, 891-908.
    """
    b, c, total = _paired_counts(only_first, only_second, n)
    low, high = _tango_bounds(float(b), float(c), float(total), _z(level))
    return PairedDifferenceInterval((b - c) / total, low, high, level, "tango_score", total,
                                    b, c)


def _tango_bounds(b: float, c: float, n: float, z: float) -> tuple[float, float]:
    """Tango's bounds for (possibly fractional, design-effect-scaled) counts."""
    estimate = (b - c) / n

    def upper_fn(delta: float) -> float:
        return _tango_z(delta, b, c, n) + z

    def lower_fn(delta: float) -> float:
        return _tango_z(delta, b, c, n) - z

    low = -1.0 if lower_fn(-1.0) <= 0.0 else _bisect(lower_fn, -1.0, estimate)
    high = 1.0 if upper_fn(1.0) >= 0.0 else _bisect(upper_fn, estimate, 1.0)
    return low, high


def clustered_tango_interval(only_first: NDArray[np.int64], only_second: NDArray[np.int64],
                             cells: NDArray[np.int64], *,
                             level: float = 0.95) -> ClusteredDifferenceInterval:
    """Tango's interval for paired proportions whose pairs come in clusters.

    Cluster i holds ``cells[i]`` pairs, ``only_first[i]`` and ``only_second[i]`` of them
    discordant each way. The design effect is the cluster-robust (sandwich) variance of
    the difference, ``k/(k-1) * sum((x_i - d * m_i)^2) / N^2`` with ``x_i`` the cluster's
    net difference, divided by the multinomial variance ``((b + c)/N - d^2)/N``; the
    counts b, c and N are divided by it (floored at 1) and Tango's score interval is
    inverted on the scaled counts: the Rao & Scott (1992) first-order correction,
    applied to the matched-pair score test (Obuchowski 1998 gives the clustered
    McNemar variance it generalizes). Rao, J. N. K. & Scott, A. J. (1992) A simple
    method for the analysis of clustered binary data. Biometrics 48, 577-585.
    """
    first = np.asarray(only_first, dtype=np.int64)
    second = np.asarray(only_second, dtype=np.int64)
    sizes = np.asarray(cells, dtype=np.int64)
    if not first.shape == second.shape == sizes.shape or first.ndim != 1:
        raise ValueError("only_first, only_second, cells: expected 1-D arrays of one length")
    if first.shape[0] < 1 or np.any(sizes < 1) or np.any(first < 0) or np.any(second < 0) \
            or np.any(first + second > sizes):
        raise ValueError("cells: expected clusters of >= 1 pair with at most that many "
                         "discordant pairs")
    b, c, total = int(first.sum()), int(second.sum()), int(sizes.sum())
    k = first.shape[0]
    estimate = (b - c) / total
    independent = ((b + c) / total - estimate * estimate) / total
    resid = (first - second) - estimate * sizes
    robust = (k / (k - 1) if k > 1 else 1.0) * float(np.sum(resid * resid)) / total**2
    deff = max(1.0, robust / independent) if independent > 0.0 else 1.0
    low, high = _tango_bounds(b / deff, c / deff, total / deff, _z(level))
    return ClusteredDifferenceInterval(estimate, low, high, level, "tango_score_design_effect",
                                       deff, k, total, b, c)


def newcombe_paired_interval(only_first: int, only_second: int, n: int, *,
                             both: int | None = None,
                             level: float = 0.95) -> PairedDifferenceInterval:
    """Newcombe (1998b) method 10: hybrid score interval for paired proportions.

    Combines the Wilson intervals of the two marginal proportions ("square and add")
    with the phi correlation of the 2x2 table, corrected as Newcombe prescribes
    (Fagerland, Lydersen & Laake 2014 recommend it). ``both`` (pairs with the
    event under both conditions) enters through the marginals; if omitted it is 0.
    Newcombe, R. G. (1998) Improved confidence intervals for the difference between
    binomial proportions based on paired data. Statistics in Medicine 17, 2635-2650.
    """
    b, c, total = _paired_counts(only_first, only_second, n)
    a = 0 if both is None else _count("both", both)
    if a + b + c > total:
        raise ValueError(f"both + only_first + only_second: expected at most n={total}, "
                         f"got {a + b + c}")
    d = total - a - b - c
    first = wilson_interval(a + b, total, level=level)
    second = wilson_interval(a + c, total, level=level)
    p1, p2 = first.estimate, second.estimate
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    # Newcombe's correction of the correlation: ad - bc shrinks by n/2 towards 0 when
    # positive (0 inside [0, n/2]); negative values stay. Without it the interval is too
    # narrow for positively correlated pairs.
    cross = a * d - b * c
    if cross > total / 2:
        shrunk = cross - total / 2
    elif cross >= 0:
        shrunk = 0.0
    else:
        shrunk = float(cross)
    phi = 0.0 if denominator == 0 else shrunk / math.sqrt(denominator)
    estimate = p1 - p2
    d1l, d1u = p1 - first.low, first.high - p1
    d2l, d2u = p2 - second.low, second.high - p2
    low = estimate - math.sqrt(max(0.0, d1l * d1l - 2.0 * phi * d1l * d2u + d2u * d2u))
    high = estimate + math.sqrt(max(0.0, d1u * d1u - 2.0 * phi * d1u * d2l + d2l * d2l))
    return PairedDifferenceInterval(estimate, max(-1.0, low), min(1.0, high), level,
                                    "newcombe_hybrid_score", total, b, c)


def mcnemar_exact(only_first: int, only_second: int) -> McNemarResult:
    """Exact McNemar test: two-sided binomial test of the discordant pairs against 1/2.

    p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2) (McNemar 1947; the
    exact conditional form). With no discordant pairs there is no evidence either way
    and p = 1. Up to 2000 discordant pairs the tail is an exact rational sum; above, a
    log-space sum of the binomial terms.
    """
    b = _count("only_first", only_first)
    c = _count("only_second", only_second)
    k, total = min(b, c), b + c
    if total == 0 or b == c:
        return McNemarResult(b, c, 1.0, "exact_binomial")
    if total <= _EXACT_LIMIT:
        tail = Fraction(sum(math.comb(total, i) for i in range(k + 1)), 2**total)
        p = float(min(Fraction(1), 2 * tail))
    else:
        i = np.arange(k + 1, dtype=np.float64)
        log_terms = (math.lgamma(total + 1) - _lgamma(i + 1.0) - _lgamma(total - i + 1.0)
                     - total * math.log(2.0))
        peak = float(log_terms.max())
        log_tail = peak + math.log(float(np.exp(log_terms - peak).sum()))
        p = min(1.0, 2.0 * math.exp(log_tail))
    return McNemarResult(b, c, p, "exact_binomial")


_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def _lgamma(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(_LGAMMA(x), dtype=np.float64)
