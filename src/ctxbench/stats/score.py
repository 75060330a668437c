"""Score intervals for a ratio of cluster totals, generalizing Tango's paired interval.

Every CEF gate statistic is a ratio of totals over independent clusters i (a task with
all its replicates): ``theta = sum(num_i) / sum(den_i)``. A value ``theta0`` is tested
through the cluster contrasts ``z_i = num_i - theta0 * den_i``, whose mean is zero
exactly when ``theta = theta0`` (Fieller's linearization: no delta method). The test is
the score test of that mean: ``T = mean(z) / sqrt(V / n)`` where ``V = E(z^2)`` under
the distribution closest to the data in likelihood that *satisfies* the null -- the
empirical-likelihood (Owen 2001) constrained maximum-likelihood estimate, i.e. the
data's weights tilted to mean zero.

Bounded scores: when each pair's value lies in ``[lower, upper]`` (task scores in
[0, 1] give deltas in [-1, 1]), the support of the tilted distribution is the observed
values plus two cells with no observations at the ends of the scale: a cluster of
``den`` pairs every one of which lost (``den * lower``) or gained (``den * upper``)
everything. A test of a mean is valid for every distribution only if it uses the bounds
of the scale (Bahadur & Savage 1956): a study that happened to draw no large loss, or
replicates whose largest change is one replicate's, must still be judged as if a
cluster could lose everything. Mass moves to such a cell when that fits the data best.
For one run of binary scores the support is {-1, 0, 1} and the variance is exactly
Tango's (1998). The variance used is the larger of that tilted second moment and the
plain second moment of the contrasts about the null, which guards heavy tails.
On a bounded scale the total contrast is moved toward zero by half of the largest step
one cluster can make (``den.max() * (upper - lower) / 2``) before it is tested: the
continuity correction of the coarsest lattice the totals can lie on. Both are checked
by an exact search over two- and three-point distributions on the scale
(:mod:`ctxbench.calibration.worst_case`, docs/statistics.md).

Unbounded totals (token counts): there is no scale bound, so the empty cells sit at
minus and plus the largest contrast any cluster showed (a task could move the total as
far the other way as the farthest one did). That guards the one-sided test against the
heavy right tail of token counts, where the missing large contrasts would otherwise
make the variance too small; the price is a conservative interval. The interval never
extends beyond the smallest and largest cluster ratio.

The interval is ``{theta0 : |T(theta0)| < t_(1 - alpha, n - 1)}``, found by bracketed
root finding; the Student-t quantile with ``clusters - 1`` degrees of freedom is the
small-sample correction. Each end is the one-sided test at ``alpha = (1 - level) / 2``;
:func:`score_test` gives the statistic and both one-sided decisions at one ``theta0``
(a gate's margin).
References: Tango, T. (1998) Stat. Med. 17:891-908; Owen, A. B. (2001) *Empirical
Likelihood*, ch. 2-3; Fieller, E. C. (1954) JRSS B 16:175-185; Bahadur, R. R. & Savage,
L. J. (1956) Ann. Math. Stat. 27:1115-1122.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.stats._score_one import (
    BISECTION_STEPS,
    LAMBDA_STEPS,
    solve_one,
    statistic_one,
)

__all__ = [
    "ScoreInterval",
    "ScoreTest",
    "continuity_shift",
    "score_interval",
    "score_interval_and_test",
    "score_test",
    "statistic_one",
    "t_quantile",
]

FloatArray = NDArray[np.float64]
_ROOT_STEPS = 200
# Probes of a root's bracket before the regula falsi (see _root).
_PROBES = 3
CONTINUITY = 0.5
"""Continuity correction on bounded scales: this share of the largest step of a cluster."""


@dataclass(frozen=True, slots=True)
class ScoreTest:
    """The score statistic at ``theta0`` and the one-sided tests it decides."""

    theta0: float
    statistic: float
    """``T``; +inf / -inf when every cluster's contrast has one sign (unbounded case)."""
    critical: float
    """Student-t quantile at ``0.5 + level / 2`` with ``clusters - 1`` degrees of freedom."""
    shows_greater: bool
    """H0: theta <= theta0 rejected at one-sided ``(1 - level) / 2``: theta > theta0."""
    shows_less: bool
    """H0: theta >= theta0 rejected at one-sided ``(1 - level) / 2``: theta < theta0."""
    continuity: float = 0.0
    """How far the total contrast was moved toward zero before ``statistic`` was taken
    (bounded scales: half of one full-scale change of the largest cluster; else 0)."""


def t_quantile(q: float, df: int) -> float:
    """Student-t quantile by the Cornish-Fisher expansion (Hill 1970), df >= 1.

    Abramowitz & Stegun 26.7.5; within 1e-4 of the exact quantile for df >= 9 at the
    levels used here (the CEF floor of 10 clusters gives df >= 9).
    """
    if df < 1:
        raise ValueError(f"df: expected an integer >= 1, got {df!r}")
    from statistics import NormalDist  # here: statistics imports fractions and decimal

    z = NormalDist().inv_cdf(q)
    v = float(df)
    z2 = z * z
    return (z + z * (z2 + 1) / (4 * v)
            + z * (5 * z2 * z2 + 16 * z2 + 3) / (96 * v**2)
            + z * (3 * z2**3 + 19 * z2**2 + 17 * z2 - 15) / (384 * v**3)
            + z * (79 * z2**4 + 776 * z2**3 + 1482 * z2**2 - 1920 * z2 - 945)
            / (92160 * v**4))


@dataclass(frozen=True, slots=True)
class ScoreInterval:
    """``estimate`` and its two-sided ``level`` score interval (None: undefined)."""

    estimate: float
    low: float | None
    high: float | None
    level: float
    n_clusters: int
    degenerate: bool
    """True when the data cannot vary the statistic (every cluster equal, or no
    cluster carries a denominator): no gate may pass on it."""


def _solve_lambda(z: FloatArray, w: FloatArray, lo: FloatArray, hi: FloatArray) -> FloatArray:
    """The root of sum w z / (1 + lambda z) (decreasing) in (lo, hi): Newton, else bisection."""
    if z.shape[0] == 1:
        return np.array([solve_one(z[0], w, lo[0], hi[0])])
    lo0, hi0 = lo, hi
    lam = np.clip(np.zeros(z.shape[0]), lo, hi)
    lam = np.where((lam <= lo) | (lam >= hi), 0.5 * (lo + hi), lam)
    # Loop invariants computed once; w * ratio * ratio is (w * ratio) * ratio, so reusing
    # w * ratio leaves every value bit for bit as it was.
    scale = (w * np.abs(z)).sum(axis=1)
    tolerance = 1e-13 * scale
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(LAMBDA_STEPS):
            ratio = z / (1.0 + lam[:, None] * z)
            weighted = w * ratio
            value = weighted.sum(axis=1)
            slope = -(weighted * ratio).sum(axis=1)
            step = lam - value / slope
            lo = np.where(value > 0, lam, lo)
            hi = np.where(value > 0, hi, lam)
            inside = (step > lo) & (step < hi) & np.isfinite(step)
            new = np.where(inside, step, 0.5 * (lo + hi))
            done = np.all((np.abs(new - lam) <= 1e-12 * np.abs(lam))
                          | (np.abs(value) <= tolerance))
            lam = new
            if done:
                break
        # Rows Newton left short of the root (rare) finish by bisection on their bracket.
        value = (w * z / (1.0 + lam[:, None] * z)).sum(axis=1)
    bad = ~(np.abs(value) <= 1e-9 * scale)
    if bad.any():
        zb = z[bad]
        lo_b, hi_b = lo0[bad].copy(), hi0[bad].copy()
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo_b + hi_b)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                positive = (w * zb / (1.0 + mid[:, None] * zb)).sum(axis=1) > 0
            lo_b = np.where(positive, mid, lo_b)
            hi_b = np.where(positive, hi_b, mid)
        lam[bad] = 0.5 * (lo_b + hi_b)
    return np.asarray(lam, dtype=np.float64)


def _tilted_variance(z: FloatArray, w: FloatArray, a: FloatArray | None,
                     b: FloatArray | None) -> FloatArray:
    """E(z^2) under the constrained maximum-likelihood distribution of mean zero.

    ``z`` is (g, k), one row per null, over k distinct clusters observed ``w`` times
    (``w.sum() = n``); ``a`` < 0 < ``b`` (g,) are the extreme contrasts
    a cluster could take (None: unbounded). The support is the observed contrasts plus
    the extremes as cells with no observations (Tango's multinomial when scores are
    binary); an extreme receives mass only when the likelihood is best served that way.
    Returns NaN where no distribution on the support has mean zero.
    """
    g = z.shape[0]
    n = float(w.sum())
    zmin = z.min(axis=1)
    zmax = z.max(axis=1)
    low_end = zmin if a is None else np.minimum(a, zmin)
    high_end = zmax if b is None else np.maximum(b, zmax)
    ok = (low_end < 0) & (high_end > 0)
    # Lambda keeps 1 + lambda * v > 0 on the support [low_end, high_end].
    with np.errstate(divide="ignore", invalid="ignore"):
        hi = np.where(ok, -1.0 / np.where(ok, low_end, -1.0), 0.0)
        lo = np.where(ok, -1.0 / np.where(ok, high_end, 1.0), 0.0)

    def total(lam: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            den = 1.0 + lam[:, None] * z
            terms = np.where(den > 0, z / np.where(den > 0, den, 1.0),
                             np.where(z > 0, np.inf, -np.inf))
        return np.asarray((w * terms).sum(axis=1), dtype=np.float64)

    on_a = ok & (a is not None) & (total(hi) >= 0)
    on_b = ok & (b is not None) & ~on_a & (total(lo) <= 0)
    inner = ok & ~on_a & ~on_b
    out = np.full(g, np.nan)
    if inner.any():
        lam = _solve_lambda(z[inner], w, lo[inner], hi[inner])
        with np.errstate(divide="ignore", invalid="ignore"):
            p = w / (1.0 + lam[:, None] * z[inner])
            tilted = (p * z[inner] ** 2).sum(axis=1) / p.sum(axis=1)
        out[inner] = tilted
    for mask, ext in ((on_a, a), (on_b, b)):
        if ext is None or not mask.any():
            continue
        e = ext[mask]
        zm = z[mask]
        # KKT solution with a zero-count extreme cell e: p_i = (1/n) e / (e - z_i), and
        # the extreme takes the rest.
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (w / n) * e[:, None] / (e[:, None] - zm)
        p_ext = np.clip(1.0 - p.sum(axis=1), 0.0, 1.0)
        out[mask] = (p * zm * zm).sum(axis=1) + p_ext * e * e
    # The plain second moment about the null guards heavy tails, where the tilt
    # (which down-weights the extreme clusters) understates the variance.
    return np.where(ok, np.maximum(out, (w * z * z).sum(axis=1) / n), out)


def _extremes(bounds: tuple[float, float]) -> tuple[float, float]:
    """The zero-count extreme cells: the ends of the declared scale of one pair's value.

    Never the largest change observed: a study that drew no large loss must still be
    judged as if one were possible (Bahadur & Savage 1956), and a cluster's extreme is
    every one of its pairs at the scale's end, not one replicate's change.
    """
    lower, upper = bounds
    return float(lower), float(upper)


def continuity_shift(den: FloatArray, bounds: tuple[float, float] | None) -> float:
    """How far the total contrast moves toward zero before it is tested (bounded scales).

    Half of the largest step one cluster can move the total, ``den.max() * (upper -
    lower)``: the continuity correction of the coarsest lattice the totals can lie on
    (two-point scores at the scale's ends). Without it the score test of a lattice
    distribution over-rejects on one side (exact type-I 2.5-2.7% at the margin for some
    two-point distributions, n = 50-1000; docs/statistics.md). Zero for unbounded totals.
    """
    if bounds is None:
        return 0.0
    lower, upper = bounds
    return CONTINUITY * float(den.max()) * (upper - lower)


def _statistics(num: FloatArray, den: FloatArray, w: FloatArray, theta0: FloatArray,
                extremes: tuple[float, float] | None, shift: float = 0.0) -> FloatArray:
    """``T(theta0)`` for each null in ``theta0`` (g,); clusters ``(num, den)`` seen ``w`` times."""
    n = float(w.sum())
    z = num[None, :] - theta0[:, None] * den[None, :]
    if extremes is not None:
        low, high = extremes
        dmax = float(den.max())
        a = dmax * (low - theta0)
        b = dmax * (high - theta0)
    else:
        # Unbounded: the empty cells mirror the largest contrast any cluster showed.
        largest = np.abs(z).max(axis=1)
        a, b = -largest, largest
    mean = (w * z).sum(axis=1) / n
    if shift > 0.0:
        mean = np.sign(mean) * np.maximum(np.abs(mean) - shift / n, 0.0)
    var = _tilted_variance(z, w, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    # Outside the support's range: every contrast has one sign (or all are zero).
    signed_inf = np.where(mean > 0, np.inf, np.where(mean < 0, -np.inf, 0.0))
    t = np.where(np.isnan(var), signed_inf, t)
    return np.where((mean == 0) & ~(var > 0), 0.0, t)


def _distinct(num: FloatArray, den: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distinct clusters and how often each occurs (binary scores have at most three).

    The rows of ``np.unique(np.column_stack([num, den]), axis=0, return_counts=True)``,
    in its order (ascending by ``num``, then ``den``), from one stable ``lexsort`` of
    the two columns: np.unique sorts the rows as records, 1.5 ms per call at 2,500
    clusters against 0.05 ms (benchmarks/RESULTS.md).
    """
    order = np.lexsort((den, num))
    a, b = num[order], den[order]
    first = np.empty(a.shape[0], dtype=bool)
    first[:1] = True
    np.not_equal(a[1:], a[:-1], out=first[1:])
    first[1:] |= b[1:] != b[:-1]
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, a.shape[0]))
    return a[starts], b[starts], counts.astype(np.float64)


def _check(num: FloatArray, den: FloatArray) -> tuple[FloatArray, FloatArray]:
    n_arr = np.asarray(num, dtype=np.float64)
    d_arr = np.asarray(den, dtype=np.float64)
    if n_arr.ndim != 1 or n_arr.shape != d_arr.shape:
        raise ValueError("num, den: expected two 1-D arrays of one value per cluster")
    if n_arr.shape[0] < 1:
        raise ValueError("num, den: expected at least one cluster, got none")
    if not (np.all(np.isfinite(n_arr)) and np.all(np.isfinite(d_arr))):
        raise ValueError("num, den: expected finite values, got NaN or infinity")
    if np.any(d_arr < 0):
        raise ValueError("den: expected non-negative cluster denominators")
    return n_arr, d_arr


def score_test(num: FloatArray, den: FloatArray, theta0: float, *, level: float = 0.95,
               bounds: tuple[float, float] | None = None) -> ScoreTest:
    """One-sided score tests of ``sum(num) / sum(den)`` against ``theta0`` over clusters.

    ``bounds`` = (lower, upper): each pair's value lies in this range and each
    cluster's ``den`` counts its pairs (so ``num_i`` lies in ``den_i * [lower, upper]``).
    """
    _check_level(level)
    n_arr, d_arr = _check(num, den)
    extremes = None if bounds is None else _extremes(bounds)
    return _test(_distinct(n_arr, d_arr), extremes, theta0, level, n_arr.shape[0],
                 continuity_shift(d_arr, bounds))


def score_interval_and_test(num: FloatArray, den: FloatArray, theta0: float, *,
                            level: float = 0.95, bounds: tuple[float, float] | None = None,
                            ) -> tuple[ScoreInterval, ScoreTest]:
    """:func:`score_interval` and :func:`score_test` of the same clusters, checked once."""
    _check_level(level)
    n_arr, d_arr = _check(num, den)
    extremes = None if bounds is None else _extremes(bounds)
    distinct = _distinct(n_arr, d_arr)
    shift = continuity_shift(d_arr, bounds)
    return (_interval(n_arr, d_arr, distinct, extremes, level, bounds, shift),
            _test(distinct, extremes, theta0, level, n_arr.shape[0], shift))


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")


def _test(distinct: tuple[FloatArray, FloatArray, FloatArray],
          extremes: tuple[float, float] | None, theta0: float, level: float,
          clusters: int, shift: float) -> ScoreTest:
    u_num, u_den, w = distinct
    t = statistic_one(u_num, u_den, w, theta0, extremes, shift)
    crit = _critical(level, clusters)
    return ScoreTest(theta0=theta0, statistic=t, critical=crit, shows_greater=t >= crit,
                     shows_less=t <= -crit, continuity=shift)


def _critical(level: float, clusters: int) -> float:
    q = 0.5 + level / 2.0
    return t_quantile(q, clusters - 1) if clusters > 1 else math.inf


def _root(num: FloatArray, den: FloatArray, w: FloatArray, target: float, lo: float,
          hi: float, extremes: tuple[float, float] | None, shift: float,
          guess: float | None = None) -> float:
    """theta0 in [lo, hi] where T crosses ``target`` (T decreases in theta0).

    ``guess`` (a point near the root: the normal approximation's bound) only narrows the
    first bracket: the root is the same to the loop's tolerance, found in fewer steps than
    from an end where T is far from the target or infinite.
    """
    t_lo = statistic_one(num, den, w, lo, extremes, shift)
    t_hi = statistic_one(num, den, w, hi, extremes, shift)
    if t_lo <= target:
        return lo
    if t_hi >= target:
        return hi
    # Probes narrow the bracket while one end's T is infinite (the regula falsi would
    # creep from the other end): the guess, then the secant through the last two finite
    # values, carried 10% past the target so that it brackets the root.
    known = (lo, t_lo) if math.isfinite(t_lo) else (hi, t_hi)
    for _ in range(_PROBES):
        if guess is None or not lo < guess < hi or (
                math.isfinite(t_lo) and math.isfinite(t_hi)):
            break
        t_guess = statistic_one(num, den, w, guess, extremes, shift)
        if not math.isfinite(t_guess):
            break
        if t_guess == target:
            return guess
        if t_guess > target:
            lo, t_lo = guess, t_guess
        else:
            hi, t_hi = guess, t_guess
        (x, t_x), known = known, (guess, t_guess)
        if t_guess == t_x:
            break
        guess = x + (guess - x) * 1.1 * (target - t_x) / (t_guess - t_x)
    # Regula falsi with the Illinois modification on f = T - target, which keeps the
    # root bracketed and converges superlinearly; one null per step keeps memory at
    # one row of clusters however many there are.
    f_lo, f_hi = float(t_lo) - target, float(t_hi) - target
    if not math.isfinite(f_lo):
        f_lo = 1e6
    if not math.isfinite(f_hi):
        f_hi = -1e6
    side = 0
    for _ in range(_ROOT_STEPS):
        if hi - lo <= 1e-10 * max(1.0, abs(lo), abs(hi)):
            break
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
        f_mid = statistic_one(num, den, w, mid, extremes, shift) - target
        if not math.isfinite(f_mid):
            f_mid = 1e6 if f_mid > 0 else -1e6
        if f_mid > 0:
            lo, f_lo = mid, f_mid
            if side == 1:
                f_hi *= 0.5
            side = 1
        elif f_mid < 0:
            hi, f_hi = mid, f_mid
            if side == -1:
                f_lo *= 0.5
            side = -1
        else:
            return mid
    return 0.5 * (lo + hi)


def score_interval(num: FloatArray, den: FloatArray, *, level: float = 0.95,
                   bounds: tuple[float, float] | None = None) -> ScoreInterval:
    """Two-sided ``level`` score interval for ``sum(num) / sum(den)`` over clusters.

    With ``bounds`` the interval lies inside them; without, it lies between the
    smallest and largest cluster ratio ``num_i / den_i``.
    """
    _check_level(level)
    n_arr, d_arr = _check(num, den)
    extremes = None if bounds is None else _extremes(bounds)
    return _interval(n_arr, d_arr, None, extremes, level, bounds, continuity_shift(d_arr, bounds))


def _interval(n_arr: FloatArray, d_arr: FloatArray,
              distinct: tuple[FloatArray, FloatArray, FloatArray] | None,
              extremes: tuple[float, float] | None, level: float,
              bounds: tuple[float, float] | None, shift: float) -> ScoreInterval:
    total = float(d_arr.sum())
    n = n_arr.shape[0]
    if total <= 0:
        return ScoreInterval(math.nan, None, None, level, n, True)
    estimate = float(n_arr.sum()) / total
    crit = _critical(level, n)
    if bounds is not None:
        lo_end, hi_end = bounds
    else:
        has = d_arr > 0
        ratios = n_arr[has] / d_arr[has]
        lo_end, hi_end = float(ratios.min()), float(ratios.max())
    z = n_arr - estimate * d_arr
    degenerate = bool(np.all(np.abs(z) <= 1e-12 * max(1.0, float(np.abs(n_arr).max()))))
    u_num, u_den, w = _distinct(n_arr, d_arr) if distinct is None else distinct
    # The normal approximation's half-width (the delta method's standard error of the
    # ratio): where each search starts looking.
    half = crit * float(np.sqrt((z * z).sum())) / total if math.isfinite(crit) else None
    low = _root(u_num, u_den, w, crit, lo_end, estimate, extremes, shift,
                None if half is None else estimate - half)
    high = _root(u_num, u_den, w, -crit, estimate, hi_end, extremes, shift,
                 None if half is None else estimate + half)
    return ScoreInterval(estimate, low, high, level, n, degenerate)
