"""The decision of one gate at one look of a sequential design, and of the whole claim.

A gate tests one statistic against its margin in one direction (H1, H2 and public-eval's
quality gate: the delta is shown above ``-margin``; H3: the unsupported-claim delta below
``+margin``; H4: the ratio of candidate to baseline tokens below ``1 - min_savings``). At
look ``k`` with ``n_k`` clusters (tasks, in run order) it is decided by one of:

* ``spending``: the gate's own score test (:func:`ctxbench.stats.score.score_test`, with
  its scale bounds, empty cells, continuity correction and Student-t critical value)
  at the look's nominal one-sided level ``1 - Phi(c_k)`` of the Lan-DeMets boundary
  (:mod:`ctxbench.stats.sequential`): **claim** when the test of the margin rejects
  toward the claim, **loss shown** when the test of the margin rejects the other way
  (the same boundary mirrored);
* ``betting`` (bounded gates only): the anytime-valid betting tests of
  :mod:`ctxbench.stats.betting` on the cluster means, one against the claim's null and
  one against the loss's, each at one-sided ``alpha``: claim or loss shown once its
  wealth has reached ``1 / alpha`` at any cluster up to ``n_k``.

**Futility** (non-binding, when the design asks for it), at every look but the last:
the point estimate is no better than the margin (the score statistic at the margin,
signed toward the claim, is below zero; the continuity correction moves a statistic within
half a task's change of the margin to zero, which does not stop). A conditional-power rule
(:func:`ctxbench.stats.sequential.conditional_power`) was tried first and stopped most
studies that the fixed design would pass: the bounded gates' continuity correction
(half of one task's full change, ``1 / n`` of the mean) dominates the statistic at
early looks. Futility never enters the boundaries, so it can only lower the type-I
error. A decided gate keeps its decision at later looks: its error is that of *ever*
crossing, which the boundaries bound.

**The whole claim** (:func:`claim_decision`): every gate of a claim must be claimed
(an intersection-union test: its type-I error is at most the largest gate's, Berger
1982). The claim is *claimed* when every gate is, *loss shown* as soon as any gate
shows loss (the claim can no longer be made), *futile* as soon as any gate is futile
and not claimed, *not shown* at the last look otherwise, and *continues* otherwise.

Reference: Berger, R. L. (1982) Multiparameter hypothesis testing and acceptance
sampling. Technometrics 24, 295-300.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ctxbench.stats.betting import crossed, log_wealth
from ctxbench.stats.score import score_interval, score_test

__all__ = [
    "DECISIONS",
    "Decision",
    "GateLook",
    "betting_looks",
    "carry",
    "claim_decision",
    "gate_looks",
    "score_look",
]

FloatArray = NDArray[np.float64]
Decision = Literal["claimed", "loss_shown", "futile", "not_shown", "continue"]
DECISIONS: tuple[Decision, ...] = ("claimed", "loss_shown", "futile", "not_shown", "continue")
Direction = Literal["greater", "less"]


@dataclass(frozen=True, slots=True)
class GateLook:
    """One gate at one look: the statistic, its threshold and what they decide."""

    tasks: int
    statistic: float
    """The score statistic at the margin, signed so that large values favour the claim."""
    critical: float
    """The claim threshold on ``statistic`` at this look (``inf``: none yet)."""
    nominal: float
    """The look's one-sided level (``spending``) or ``alpha`` (``betting``)."""
    low: float | None
    high: float | None
    """The two-sided interval at ``1 - 2 nominal`` (``spending``; None when not asked)."""
    claimed: bool
    loss_shown: bool
    futile: bool
    log_wealth_claim: float | None = None
    log_wealth_loss: float | None = None
    """``betting``: log of the wealth against the claim's and the loss's null."""


def _oriented(t: float, direction: Direction) -> float:
    return t if direction == "greater" else -t


def _degenerate(num: FloatArray, den: FloatArray) -> bool:
    total = float(den.sum())
    if total <= 0:
        return True
    z = num - (float(num.sum()) / total) * den
    return bool(np.all(np.abs(z) <= 1e-12 * max(1.0, float(np.abs(num).max()))))


def _futile(statistic: float, fraction: float, final: float, futility: bool) -> bool:
    """No better than the margin at a look before the last (``final`` is unused)."""
    del final
    return futility and fraction < 1.0 and statistic < 0.0


def score_look(num: FloatArray, den: FloatArray, theta0: float, *, direction: Direction,
               nominal: float, bounds: tuple[float, float] | None, fraction: float,
               final: float, futility: bool, interval: bool = False) -> GateLook:
    """The ``spending`` decision at one look over the clusters seen so far.

    ``nominal`` is the look's one-sided level; ``final`` the last look's boundary on the
    normal scale (for the conditional power). A statistic the data cannot vary
    (identical clusters) claims nothing, as in the fixed design; it may show a loss.
    """
    n = int(num.shape[0])
    if nominal <= 0.0 or n < 2:
        t = 0.0 if n < 2 else _oriented(score_test(num, den, theta0, level=0.95,
                                                   bounds=bounds).statistic, direction)
        return GateLook(n, t, math.inf, nominal, None, None, False, False,
                        _futile(t, fraction, final, futility) if n >= 2 else False)
    level = 1.0 - 2.0 * nominal
    test = score_test(num, den, theta0, level=level, bounds=bounds)
    t = _oriented(test.statistic, direction)
    flat = _degenerate(num, den)
    claim = (test.shows_greater if direction == "greater" else test.shows_less) and not flat
    # A loss may be shown on identical clusters (every task lost as much); a claim not.
    loss = test.shows_less if direction == "greater" else test.shows_greater
    low = high = None
    if interval:
        iv = score_interval(num, den, level=level, bounds=bounds)
        low, high = iv.low, iv.high
    return GateLook(n, t, test.critical, nominal, low, high, bool(claim), bool(loss),
                    not claim and not loss and _futile(t, fraction, final, futility))


def betting_looks(means: FloatArray, margin: float, looks: Sequence[int], *,
                  direction: Direction, alpha: float, bounds: tuple[float, float],
                  statistics: Sequence[float], fractions: Sequence[float], final: float,
                  futility: bool) -> list[GateLook]:
    """The ``betting`` decisions at every look of the cluster means in run order.

    ``statistics`` are the score statistics at the margin at each look (oriented), used
    for futility only.
    """
    lower, upper = bounds
    x = means if direction == "greater" else -means
    m = margin if direction == "greater" else -margin
    lo, hi = (lower, upper) if direction == "greater" else (-upper, -lower)
    wealth_claim = log_wealth(x, m, lo, hi)
    wealth_loss = log_wealth(-x, -m, -hi, -lo)
    up, down = crossed(wealth_claim, alpha), crossed(wealth_loss, alpha)
    out = []
    for n, t, f in zip(looks, statistics, fractions, strict=True):
        i = n - 1
        claim, loss = bool(up[i]), bool(down[i]) and not bool(up[i])
        out.append(GateLook(n, t, math.log(1.0 / alpha), alpha, None, None, claim, loss,
                            not claim and not loss and _futile(t, f, final, futility),
                            float(wealth_claim[i]), float(wealth_loss[i])))
    return out


def claim_decision(gates: Sequence[Decision], *, last: bool) -> Decision:
    """The whole claim from its gates' decisions (each carried forward once decided)."""
    if any(g == "loss_shown" for g in gates):
        return "loss_shown"
    if all(g == "claimed" for g in gates):
        return "claimed"
    if any(g == "futile" for g in gates):
        return "futile"
    return "not_shown" if last else "continue"


def carry(previous: Decision | None, look: GateLook, *, last: bool) -> Decision:
    """A gate's decision at a look, given its decision at the look before."""
    if previous in ("claimed", "loss_shown"):
        return previous
    if look.claimed:
        return "claimed"
    if look.loss_shown:
        return "loss_shown"
    if look.futile:
        return "futile"
    return "not_shown" if last else "continue"


def gate_looks(num: FloatArray, den: FloatArray, theta0: float, looks: Sequence[int], *,
               max_tasks: int, direction: Direction, bounds: tuple[float, float] | None,
               method: str, alpha: float, futility: bool,
               interval: bool = False) -> list[GateLook]:
    """One gate at each of ``looks`` (cluster counts) over clusters in run order.

    ``method``: ``obrien_fleming`` or ``pocock`` (spending on the score test), or
    ``betting`` (bounded gates only; unbounded ones then spend by ``obrien_fleming``).
    Looks beyond the clusters given are not taken.
    """
    from ctxbench.stats.sequential import efficacy_boundaries

    planned = [n for n in looks if n <= max_tasks]
    fractions = [n / max_tasks for n in planned]
    spending = "obrien_fleming" if method == "betting" else method
    if spending not in ("obrien_fleming", "pocock"):
        raise ValueError(f"method: expected obrien_fleming, pocock or betting, got {method!r}")
    b = efficacy_boundaries(fractions, alpha=alpha,
                            method="pocock" if spending == "pocock" else "obrien_fleming")
    taken = [(k, n) for k, n in enumerate(planned) if n <= num.shape[0]]
    if method == "betting" and bounds is not None:
        stats = [_oriented(score_test(num[:n], den[:n], theta0, bounds=bounds).statistic,
                           direction) for _, n in taken]
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        return betting_looks(means, theta0, [n for _, n in taken], direction=direction,
                             alpha=alpha, bounds=bounds, statistics=stats,
                             fractions=[fractions[k] for k, _ in taken], final=b.z[-1],
                             futility=futility)
    return [score_look(num[:n], den[:n], theta0, direction=direction,
                       nominal=b.nominal[k], bounds=bounds, fraction=fractions[k],
                       final=b.z[-1], futility=futility, interval=interval)
            for k, n in taken]
