"""The exact type-I error of a spending design on two-point distributions, every look.

For a study whose task means take two values ``lo < margin < hi`` (a lattice, the
family where the fixed design's exact worst case sits: :mod:`ctxbench.calibration.
worst_case`), the statistic at a look depends only on how many tasks took ``lo``. The
probability of a claim at *any* look is then a sum over the counts' paths, computed by
carrying the distribution of the count among the studies not yet stopped from look to
look (a binomial convolution per look) and removing, at each look, the counts the gate
passes at that look's nominal level (:func:`ctxbench.calibration.worst_case.passes_many`,
the gate's own statistic for every count at once). No Monte Carlo; terms are exact up
to floating point. The betting method is not covered (its decision depends on the
order of the tasks, not only on the counts; it is valid by Ville's inequality).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ctxbench.calibration.worst_case import MARGIN, passes_many
from ctxbench.stats.planning import binomial_pmf
from ctxbench.stats.score import t_quantile
from ctxbench.stats.sequential import efficacy_boundaries

__all__ = ["SEARCH", "SequentialWorst", "exact_two_point", "markdown_sequential_worst",
           "worst_two_point"]

SEARCH = ((300, 5, 0), (1000, 10, 10))
"""(max tasks, looks, lattice) of ``calibrate --sequential --worst-case``: 5 looks on the
0.05 grid (420 distributions), 10 looks on the 0.1 lattice (110)."""


def _supports(lattice: int) -> list[tuple[float, float]]:
    """Two grid points either side of the margin: the 0.05 grid or ``k / lattice``."""
    grid = (np.arange(-lattice, lattice + 1) / lattice if lattice > 0
            else np.round(np.linspace(-1.0, 1.0, 41), 10))
    return [(float(lo), float(hi)) for lo in grid[grid < -MARGIN] for hi in grid[grid > -MARGIN]]


def exact_two_point(lo: float, hi: float, looks: Sequence[int], max_tasks: int, *,
                    method: str, alpha: float = 0.025) -> float:
    """P(claim at any look) when each task mean is ``lo`` or ``hi`` with mean -MARGIN."""
    b = efficacy_boundaries([n / max_tasks for n in looks], alpha=alpha,
                            method="pocock" if method == "pocock" else "obrien_fleming")
    p_lo = (hi + MARGIN) / (hi - lo)
    values = np.array([lo, hi])
    dist: np.ndarray | None = None
    claimed = 0.0
    before = 0
    for n, nominal in zip(looks, b.nominal, strict=True):
        step = binomial_pmf(n - before, p_lo)
        dist = step if dist is None else np.convolve(dist, step)
        before = n
        if nominal <= 0.0:
            continue
        j = np.arange(n + 1, dtype=np.float64)
        crit = t_quantile(1.0 - nominal, n - 1)
        passed = passes_many(values, np.column_stack([j, n - j]), -MARGIN, crit)
        claimed += float(dist[passed].sum())
        dist = np.where(passed, 0.0, dist)
    return claimed


@dataclass(frozen=True, slots=True)
class SequentialWorst:
    """The largest exact false-pass probability found over one family and design."""

    method: str
    max_tasks: int
    looks: int
    distributions: int
    type_i: float
    support: tuple[float, float]


def worst_two_point(max_tasks: int, looks: int, method: str, *,
                    lattice: int = 0) -> SequentialWorst:
    """The largest exact type-I over two-point distributions with their mean at the
    margin: on the 0.05 grid (``lattice = 0``) or the lattice ``k / lattice``."""
    every = max_tasks // looks
    marks = [every * (k + 1) for k in range(looks - 1)] + [max_tasks]
    found = (0.0, (0.0, 0.0))
    dists = _supports(lattice)
    for lo, hi in dists:
        rate = exact_two_point(lo, hi, marks, max_tasks, method=method)
        if rate > found[0]:
            found = (rate, (lo, hi))
    return SequentialWorst(method, max_tasks, looks, len(dists), found[0], found[1])


def markdown_sequential_worst(rows: Sequence[SequentialWorst]) -> str:
    lines = ["| method | max tasks | looks | distributions | largest exact type-I | where |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.method} | {r.max_tasks} | {r.looks} | {r.distributions} | "
                     f"{100 * r.type_i:.2f}% | two points {r.support[0]:g} / "
                     f"{r.support[1]:g} |")
    return "\n".join(lines) + "\n"
