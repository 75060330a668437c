"""The largest type-I error of a bounded-score gate over two- and three-point distributions.

A test of a mean cannot be valid for every distribution unless it uses the bounds of
the scale (Bahadur & Savage 1956), and the distributions that come nearest to breaking a
test that does are the ones with few support points: a rare large loss beside many small
gains (two points), or that plus a lattice of no change (three points). For a cluster
mean ``x`` on the scale ``[-1, 1]`` (a task's average change over its replicates), each
distribution here puts its mass on two or three grid points with its mean exactly at the
margin, and the false-pass probability of the gate is computed **exactly**: the sum of
the multinomial probabilities of the counts that pass, where each count vector is judged
by the statistic of :func:`ctxbench.stats.score.score_test`, the function the CEF gates
(H1-H3) and the public-eval quality gate call (:func:`type_i_exact` one count vector at
a time; :func:`type_i_fast`, which the search uses, every count vector at once, with
the same decisions). Count vectors of probability below ``1e-12`` are skipped
(their total is bounded and reported with the result).

Replicates: with ``r`` replicates per task the cluster total is ``r x`` over ``r`` pairs;
the score statistic, its extreme cells and its continuity correction all scale by ``r``,
so the test of cluster means is the same (``tests/stats/test_score.py`` checks this).
The search therefore covers replicates through the support grid: ``replicates = r``
restricts the grid to the lattice ``k / r`` a task of ``r`` binary replicates can take,
and ``replicates = 0`` to a continuous grid of step 0.05.

H3 (a rise in the unsupported-claim rate is the harm) is H1 mirrored: reflecting every
value (``x -> -x``) maps its null onto H1's, and the statistic is odd under it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.stats.score import continuity_shift, statistic_one, t_quantile

__all__ = ["SEARCH", "Family", "WorstCase", "markdown_worst", "passes_many", "search",
           "type_i_exact", "type_i_fast", "worst_case", "worst_json"]

FloatArray = NDArray[np.float64]
_PRUNE = 1e-12
MARGIN = 0.01
_BOUNDS = (-1.0, 1.0)
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class WorstCase:
    """The largest exact false-pass probability found over one family of distributions."""

    gate: str
    n: int
    replicates: int
    """0: a continuous grid of cluster means; r: the lattice of r binary replicates."""
    points: int
    distributions: int
    support: tuple[float, ...]
    probabilities: tuple[float, ...]
    type_i: float
    skipped_mass: float


def _log_factorials(n: int) -> FloatArray:
    """log(k!) for k = 0..n."""
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])


def _passes(values: FloatArray, counts: FloatArray, theta0: float, crit: float,
            n: int) -> bool:
    """H1's decision on clusters of one pair taking ``values`` ``counts`` times.

    The steps of :func:`score_test` (distinct clusters, then the one-null statistic)
    without repeating each value ``counts`` times first.
    """
    keep = counts > 0
    num = values[keep]
    ones = np.ones_like(num)
    t = statistic_one(num, ones, counts[keep], theta0, _BOUNDS, continuity_shift(ones, _BOUNDS))
    return bool(t >= crit)


def type_i_exact(support: Sequence[float], probabilities: Sequence[float], n: int, *,
                 margin: float = MARGIN, level: float = LEVEL) -> tuple[float, float]:
    """P(H1 passes) for n clusters drawn from the distribution; and the mass skipped.

    H1: the task-score delta's lower bound at or above ``-margin``; the distribution's
    mean should be ``-margin`` for this to be a type-I error.
    """
    x = np.asarray(support, dtype=np.float64)
    p = np.asarray(probabilities, dtype=np.float64)
    # A point without mass is no support point (a three-point family at share 0, or a
    # point whose mass the mean constraint left at rounding level).
    keep = p > 1e-12
    x, p = x[keep], p[keep] / p[keep].sum()
    crit = t_quantile(0.5 + level / 2.0, n - 1)
    theta0 = -margin
    total = 0.0
    seen = 0.0
    lf = _log_factorials(n)
    if x.shape[0] == 2:
        k = np.arange(n + 1, dtype=np.float64)
        logp = lf[n] - lf - lf[::-1] + k * math.log(p[0]) + (n - k) * math.log(p[1])
        probs = np.exp(logp)
        for kk in np.flatnonzero(probs >= _PRUNE):
            seen += probs[kk]
            if _passes(x, np.array([kk, n - kk], dtype=np.float64), theta0, crit, n):
                total += probs[kk]
        return total, max(0.0, 1.0 - seen)
    k0 = np.arange(n + 1, dtype=np.float64)
    marginal = np.exp(lf[n] - lf - lf[::-1] + k0 * math.log(p[0])
                      + (n - k0) * math.log1p(-p[0]))
    q = p[1] / (p[1] + p[2])
    for a in np.flatnonzero(marginal >= _PRUNE):
        # P(k0 = a) times P(k1 = b | k0 = a): binomial within the rest.
        rest = n - int(a)
        b = np.arange(rest + 1, dtype=np.float64)
        lb = lf[rest] - lf[: rest + 1] - lf[rest::-1] + b * math.log(q) \
            + (rest - b) * math.log1p(-q)
        probs = marginal[a] * np.exp(lb)
        for bb in np.flatnonzero(probs >= _PRUNE):
            seen += probs[bb]
            counts = np.array([a, bb, rest - bb], dtype=np.float64)
            if _passes(x, counts, theta0, crit, n):
                total += probs[bb]
    return total, max(0.0, 1.0 - seen)


_BISECTION = 200


def passes_many(values: FloatArray, counts: FloatArray, theta0: float,
                crit: float) -> NDArray[np.bool_]:
    """H1's decision for each row of ``counts`` (m, k): clusters taking ``values`` (k,).

    :func:`_passes` over every count vector at once: the same statistic (the tilted
    variance with the scale's ends as the empty cells, the continuity correction), the
    root of the tilted variance found by bisection to adjacent doubles on every row
    together instead of Newton steps row by row. A zero count is no cluster (its term is
    left out, as :func:`_passes` drops it). Every value lies on the scale, so the ends
    ``a``, ``b`` bound the contrasts and the tilted variance is always defined.
    """
    w = counts
    n = w.sum(axis=1)
    z = values - theta0
    a = _BOUNDS[0] - theta0
    b = _BOUNDS[1] - theta0
    shift = continuity_shift(np.ones(1), _BOUNDS)
    mean = (w * z).sum(axis=1) / n
    mean = np.sign(mean) * np.maximum(np.abs(mean) - shift / n, 0.0)
    present = w > 0
    lo0, hi0 = -1.0 / b, -1.0 / a

    def total(lam: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            den = 1.0 + lam[:, None] * z
            terms = np.where(den > 0, z / np.where(den > 0, den, 1.0),
                             np.where(z > 0, np.inf, -np.inf))
            out: FloatArray = np.where(present, w * terms, 0.0).sum(axis=1)
        return out

    m = w.shape[0]
    low_case = total(np.full(m, hi0)) >= 0
    high_case = ~low_case & (total(np.full(m, lo0)) <= 0)
    lo, hi = np.full(m, lo0), np.full(m, hi0)
    for _ in range(_BISECTION):
        mid = 0.5 * (lo + hi)
        up = total(mid) > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    lam = 0.5 * (lo + hi)
    floor = (w * z * z).sum(axis=1) / n
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p = w / (1.0 + lam[:, None] * z)
        inner = (p * z * z).sum(axis=1) / p.sum(axis=1)
        e = np.where(low_case, a, b)[:, None]
        pk = np.where(present, (w / n[:, None]) * e / (e - z), 0.0)
    p_ext = np.clip(1.0 - pk.sum(axis=1), 0.0, 1.0)
    kkt = (pk * z * z).sum(axis=1) + p_ext * e[:, 0] ** 2
    var = np.maximum(np.where(low_case | high_case, kkt, inner), floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where((mean == 0) & ~(var > 0), 0.0, mean / np.sqrt(var / n))
    result: NDArray[np.bool_] = t >= crit
    return result


def _count_vectors(p: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """Every count vector of n draws from ``p`` (2 or 3 points) of probability >= 1e-12."""
    lf = _log_factorials(n)
    k0 = np.arange(n + 1, dtype=np.float64)
    if p.shape[0] == 2:
        probs = np.exp(lf[n] - lf - lf[::-1] + k0 * math.log(p[0])
                       + (n - k0) * math.log(p[1]))
        keep = probs >= _PRUNE
        return np.stack([k0[keep], n - k0[keep]], axis=1), probs[keep]
    marginal = np.exp(lf[n] - lf - lf[::-1] + k0 * math.log(p[0])
                      + (n - k0) * math.log1p(-p[0]))
    q = p[1] / (p[1] + p[2])
    rows: list[FloatArray] = []
    masses: list[FloatArray] = []
    for a in np.flatnonzero(marginal >= _PRUNE):
        rest = n - int(a)
        b = np.arange(rest + 1, dtype=np.float64)
        probs = marginal[a] * np.exp(lf[rest] - lf[: rest + 1] - lf[rest::-1]
                                     + b * math.log(q) + (rest - b) * math.log1p(-q))
        keep = probs >= _PRUNE
        bb = b[keep]
        rows.append(np.stack([np.full(bb.shape, float(a)), bb, rest - bb], axis=1))
        masses.append(probs[keep])
    return np.concatenate(rows), np.concatenate(masses)


def type_i_fast(support: Sequence[float], probabilities: Sequence[float], n: int, *,
                margin: float = MARGIN, level: float = LEVEL) -> tuple[float, float]:
    """:func:`type_i_exact` with every count vector judged at once (:func:`passes_many`).

    The same count vectors, the same pruning and the same decisions (checked against
    :func:`type_i_exact` in ``tests/calibration/test_worst_case.py``); fast enough for
    three-point distributions at n = 1000 (about 10^5 count vectors each).
    """
    x = np.asarray(support, dtype=np.float64)
    p = np.asarray(probabilities, dtype=np.float64)
    keep = p > 1e-12
    x, p = x[keep], p[keep] / p[keep].sum()
    crit = t_quantile(0.5 + level / 2.0, n - 1)
    counts, probs = _count_vectors(p, n)
    passed = passes_many(x, counts, -margin, crit)
    return float(probs[passed].sum()), max(0.0, 1.0 - float(probs.sum()))


def _grid(replicates: int) -> FloatArray:
    if replicates > 0:
        return np.arange(-replicates, replicates + 1, dtype=np.float64) / replicates
    return np.round(np.linspace(-1.0, 1.0, 41), 10)


Distribution = tuple[tuple[float, ...], tuple[float, ...]]


def _two_point(grid: FloatArray, theta0: float) -> list[Distribution]:
    out: list[Distribution] = []
    for lo in grid[grid < theta0]:
        for hi in grid[grid > theta0]:
            p_lo = (hi - theta0) / (hi - lo)
            out.append(((float(lo), float(hi)), (p_lo, 1.0 - p_lo)))
    return out


def _three_point(grid: FloatArray, theta0: float,
                 middles: Sequence[float]) -> list[Distribution]:
    """Three points: a loss, a middle value and a gain; the middle's mass over a grid."""
    out: list[Distribution] = []
    for lo in grid[grid < theta0]:
        for hi in grid[grid > theta0]:
            for mid in grid[(grid > lo) & (grid < hi)]:
                for share in middles:
                    # share of the mass on mid; lo and hi split the rest to keep the mean.
                    rest = 1.0 - share
                    target = (theta0 - share * mid) / rest
                    if not lo < target < hi:
                        continue
                    p_lo = rest * (hi - target) / (hi - lo)
                    out.append(((float(lo), float(mid), float(hi)),
                                (p_lo, share, rest - p_lo)))
    return out


def worst_case(sizes: Sequence[int], *, points: int, replicates: int,
               coarse: int = 1, middles: Sequence[float] = (0.5, 0.9, 0.97),
               gate: str = "cef.H1-H3") -> list[WorstCase]:
    """The largest exact type-I of H1 at the margin for each n, over the support grid.

    ``coarse`` keeps every ``coarse``-th grid point (a sparser grid for large n).
    """
    theta0 = -MARGIN
    grid = _grid(replicates)[::coarse]
    if grid[-1] != 1.0:
        grid = np.append(grid, 1.0)
    family = _two_point(grid, theta0) if points == 2 else _three_point(grid, theta0, middles)
    out = []
    for n in sizes:
        best: tuple[float, float, tuple[float, ...], tuple[float, ...]] = (-1.0, 0.0, (), ())
        for support, probs in family:
            rate, skipped = type_i_fast(support, probs, n)
            if rate > best[0]:
                best = (rate, skipped, support, probs)
        out.append(WorstCase(gate, n, replicates, points,
                             len(family), best[2], tuple(round(p, 6) for p in best[3]),
                             best[0], best[1]))
    return out


def worst_json(rows: Sequence[WorstCase]) -> list[dict[str, object]]:
    """The rows as JSON members (rates unrounded)."""
    return [{"gate": r.gate, "n": r.n, "replicates": r.replicates, "points": r.points,
             "distributions": r.distributions, "support": list(r.support),
             "probabilities": list(r.probabilities), "type_i": r.type_i,
             "skipped_mass": r.skipped_mass, "within_goal": r.type_i <= 0.025}
            for r in rows]


def markdown_worst(rows: Sequence[WorstCase]) -> str:
    lines = ["| gate | n | replicates | points | distributions | worst support | "
             "probabilities | exact type-I | goal |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        reps = "continuous grid" if r.replicates == 0 else f"{r.replicates} binary"
        verdict = "within goal" if r.type_i <= 0.025 else "OUTSIDE goal"
        lines.append(f"| {r.gate} | {r.n} | {reps} | {r.points} | {r.distributions} | "
                     f"{', '.join(f'{v:g}' for v in r.support)} | "
                     f"{', '.join(f'{v:g}' for v in r.probabilities)} | "
                     f"{r.type_i * 100:.3f}% | <= 2.5% ({verdict}) |")
    return "\n".join(lines) + "\n"


_SHARES = tuple(float(v) for v in np.round(np.linspace(0.0, 0.96, 25), 4))
_FINE_SHARES = tuple(float(v) for v in np.round(np.linspace(0.0, 0.96, 97), 4))


@dataclass(frozen=True, slots=True)
class Family:
    """One family of distributions searched, and the study sizes it is searched at."""

    gate: str
    sizes: tuple[int, ...]
    points: int
    replicates: int
    coarse: int = 1
    middles: tuple[float, ...] = (0.5, 0.9, 0.97)


_BINARY = "cef.H1-H3 / public_eval.quality"
_SIZES = (10, 20, 50, 100, 200, 500, 1000)
SEARCH: tuple[Family, ...] = (
    # Binary single runs: the trinomial {-1, 0, 1} with the no-change mass over a grid
    # (every discordance from 4% to 100%, in steps of 1%).
    Family(f"{_BINARY}, binary pairs", (10, 20, 30, 50, 100, 200, 500, 1000), 3, 1,
           middles=_FINE_SHARES),
    # Two points anywhere on a 0.05 grid of cluster means.
    Family("cef.H1-H3, continuous", _SIZES, 2, 0),
    # Three points on a 0.1 grid up to n = 200, on a 0.2 grid up to n = 1000.
    Family("cef.H1-H3, continuous", (10, 20, 50, 100, 200), 3, 0, coarse=2),
    Family("cef.H1-H3, continuous", _SIZES, 3, 0, coarse=4),
    # Tasks of 3 binary replicates: cluster means on the lattice k / 3.
    Family(f"{_BINARY}, 3 binary replicates", _SIZES, 2, 3),
    Family(f"{_BINARY}, 3 binary replicates", _SIZES, 3, 3),
)
"""The families ``ctxbench calibrate --worst-case`` searches."""


def search(max_n: int | None = None) -> list[WorstCase]:
    """Every family of :data:`SEARCH` (sizes above ``max_n`` left out)."""
    out: list[WorstCase] = []
    for f in SEARCH:
        chosen = [n for n in f.sizes if max_n is None or n <= max_n]
        out.extend(worst_case(chosen, points=f.points, replicates=f.replicates,
                              coarse=f.coarse, middles=f.middles, gate=f.gate))
    return out
