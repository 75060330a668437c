"""H1-H4 as the CEF protocol states them, decided by score tests, and the one claim.

* H1 task quality: the task-score delta is shown >= -tolerance;
* H2 evidence: the evidence-recall delta is shown >= -tolerance;
* H3 grounding: the unsupported-claim-rate delta is shown <= tolerance;
* H4 context: the context reduction is shown > the workload's preregistered minimum
  savings (0 unless declared).

"Shown" means the one-sided score test over independent clusters (tasks) rejects the
opposite at ``(1 - level) / 2`` (:mod:`ctxbench.stats.score`); the reported bound is the
matching end of the two-sided score interval. A gate never passes on a degenerate
statistic (no variation the data could show, e.g. every pair identical).

:func:`judge` decides a stratum's claim; :func:`decide_aggregate` decides the aggregate
claim, which also requires every stratum's claim. Nothing else decides a claim: the
report only reads these results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from ctxbench.protocols.cef.compare import ConditionResult, Gate
from ctxbench.protocols.cef.model_blocks import (
    Confirmation,
    GatedStatistic,
    Hypothesis,
    Outcome,
)
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.stats.planning import normal_tasks

__all__ = ["HYPOTHESES", "OUTCOME_POWER", "Judgement", "classify", "decide_aggregate", "judge"]

OUTCOME_POWER = 0.8
"""The power an inconclusive hypothesis's ``tasks_needed`` is for."""

# (id, name, statistic, bound, comparison)
HYPOTHESES: tuple[tuple[Literal["H1", "H2", "H3", "H4"], str, GatedStatistic,
                        Literal["lower", "upper"], Literal[">=", "<=", ">"]], ...] = (
    ("H1", "task quality", "task_score_delta", "lower", ">="),
    ("H2", "evidence recall", "evidence_recall_delta", "lower", ">="),
    ("H3", "grounding", "unsupported_claim_rate_delta", "upper", "<="),
    ("H4", "context reduction", "context_reduction", "lower", ">"),
)
_LABEL = {
    "task_score_delta": "task-score delta",
    "evidence_recall_delta": "evidence-recall delta",
    "unsupported_claim_rate_delta": "unsupported-claim-rate delta",
    "context_reduction": "context reduction",
}


@dataclass(frozen=True, slots=True)
class Judgement:
    """The hypotheses' outcomes for one condition and the resulting claim."""

    hypotheses: tuple[Hypothesis, ...]
    enough_units: bool
    win: bool
    reasons: tuple[str, ...]
    failed_strata: tuple[str, ...] = ()


def _threshold(stat: str, prereg: Preregistration, min_savings: float) -> float:
    if stat == "context_reduction":
        return min_savings
    if stat == "unsupported_claim_rate_delta":
        return prereg.quality_tolerance
    return -prereg.quality_tolerance


def classify(gate: Gate, side: Literal["lower", "upper"], threshold: float,
             level: float) -> Outcome:
    """What a failed gate's interval showed about its margin (unrounded values).

    ``loss_shown`` when the interval lies wholly beyond the threshold, ``inconclusive``
    when it straddles it (or clears it while the test at the threshold does not: then no
    supported margin is given), ``not_evaluable`` without an interval. For an inconclusive
    gate, the planner's normal approximation (:func:`ctxbench.stats.planning.
    normal_tasks`) gives the tasks the declared threshold needs for ``OUTCOME_POWER`` if
    the truth were the estimate, with the spread the gate itself saw: the distance from
    the estimate to the bound times sqrt(clusters) over the critical value (so the
    gate's own conservatism is carried over).
    """
    interval = gate.interval
    bound = interval.low if side == "lower" else interval.high
    far = interval.high if side == "lower" else interval.low
    if bound is None or far is None or interval.degenerate:
        return Outcome("not_evaluable", None, None, OUTCOME_POWER)
    sign = 1.0 if side == "lower" else -1.0
    if gate.confirm_low is not None and side == "lower":
        bound = min(bound, gate.confirm_low)  # H4 needs both of its bounds
    if sign * (far - threshold) < 0:
        return Outcome("loss_shown", bound, None, OUTCOME_POWER)
    if sign * (bound - threshold) >= 0:
        # The interval clears the threshold but the test at the threshold does not (the
        # two can disagree at few clusters): no margin is shown supported.
        return Outcome("inconclusive", None, None, OUTCOME_POWER)
    distance = sign * (interval.estimate - bound)
    tasks = None
    if distance > 0 and math.isfinite(gate.test.critical) and gate.test.critical > 0:
        sd = distance * math.sqrt(interval.n_clusters) / gate.test.critical
        tasks = normal_tasks(sign * threshold, sign * interval.estimate, sd, level=level,
                             power=OUTCOME_POWER)
    return Outcome("inconclusive", bound, tasks, OUTCOME_POWER)


def _shown(stat: str, value: float) -> str:
    """A bound or margin in the units the reports show the statistic in."""
    return f"{value * 100:.1f}%" if stat == "context_reduction" else f"{value:+.4f}"


def _not_shown(hid: str, name: str, stat: str, side: str, op: str, bound: float,
               threshold: float, gate: Gate) -> str:
    """Why a score test at the margin did not show the hypothesis, quoting what it tested.

    The test decides. Its interval is the run of margins around the estimate that it does
    not reject; for a ratio of totals over few clusters the statistic need not be monotone
    in the margin, so that run can exclude a margin the test still does not reject.
    """
    test = f"T = {gate.test.statistic:.3f}, critical {gate.test.critical:.3f}"
    negated = {">=": "<", "<=": ">", ">": "<="}[op]
    clears = {">=": bound >= threshold, "<=": bound <= threshold, ">": bound > threshold}[op]
    if not clears:
        return (f"{hid} ({name}) failed: {side} bound of the {_LABEL[stat]} "
                f"{_shown(stat, bound)} {negated} {_shown(stat, threshold)} (score test at "
                f"the margin: {test})")
    return (f"{hid} ({name}) failed: the score test at the margin does not show the "
            f"{_LABEL[stat]} {op} {_shown(stat, threshold)} ({test}), although the "
            f"interval's {side} bound {_shown(stat, bound)} is {op} it: over "
            f"{gate.interval.n_clusters} clusters the statistic need not be monotone in the "
            "margin, and the test decides")


def judge(result: ConditionResult, prereg: Preregistration, min_savings: float) -> Judgement:
    """Decide H1-H4 and the claim for one condition's result (unrounded values)."""
    hypotheses: list[Hypothesis] = []
    reasons = []
    for hid, name, stat, side, op in HYPOTHESES:
        gate = result.gates[stat]
        bound = gate.interval.low if side == "lower" else gate.interval.high
        threshold = _threshold(stat, prereg, min_savings)
        if bound is None:
            reasons.append(f"{hid} ({name}) failed: the {_LABEL[stat]} is undefined (no "
                           "cluster has a denominator)")
        elif gate.interval.degenerate:
            reasons.append(f"{hid} ({name}) failed: not evaluable, the {_LABEL[stat]} is the "
                           "same in every cluster, so the data cannot show its uncertainty")
        elif not gate.passed and gate.confirm_passed is False and gate.test.shows_less:
            shown_low = ("undefined" if gate.confirm_low is None
                         else _shown(stat, gate.confirm_low))
            reasons.append(f"{hid} ({name}) failed: the score test passed, but the "
                           f"studentized bootstrap bound of the {_LABEL[stat]} ({shown_low}, "
                           f"at one-sided {(1 - prereg.confidence_level) / 2:g}) is not above "
                           f"{_shown(stat, threshold)}")
        elif not gate.passed:
            reasons.append(_not_shown(hid, name, stat, side, op, bound, threshold, gate))
        confirmation = None
        if gate.confirm_passed is not None:
            confirmation = Confirmation("studentized_bootstrap_log_ratio", gate.confirm_low,
                                        gate.confirm_passed)
        hypotheses.append(Hypothesis(
            id=hid, name=name, statistic=stat, bound=side, bound_value=bound, comparison=op,
            threshold=threshold, method="score",
            # None: infinite, every cluster's contrast has one sign.
            test_statistic=(gate.test.statistic if math.isfinite(gate.test.statistic)
                            else None),
            critical_value=gate.test.critical if math.isfinite(gate.test.critical) else None,
            evaluable=bound is not None and not gate.interval.degenerate,
            passed=gate.passed, confirmation=confirmation,
            outcome=None if gate.passed else classify(gate, side, threshold,
                                                      prereg.confidence_level)))
    # The minimum applies to units in which both sides succeeded: a pair with a failure
    # is credited zero reduction, so the reduction estimate rests on the others alone.
    enough = result.evaluable_units >= prereg.min_paired_units
    if result.units < prereg.min_paired_units:
        reasons.append(f"too few paired units: {result.units} < the preregistered minimum "
                       f"{prereg.min_paired_units}")
    elif not enough:
        reasons.append(f"too few paired units in which both sides succeeded: "
                       f"{result.evaluable_units} of {result.units} < the preregistered "
                       f"minimum {prereg.min_paired_units} (the reduction rests on them alone)")
    win = enough and all(h.passed for h in hypotheses)
    return Judgement(tuple(hypotheses), enough, win, tuple(reasons))


def decide_aggregate(judgement: Judgement, stratum_wins: list[tuple[str, bool]]) -> Judgement:
    """The aggregate claim: its own gates and, with several strata, every stratum's claim."""
    failed = tuple(label for label, win in stratum_wins if not win)
    if not failed or len(stratum_wins) <= 1:
        return replace(judgement, failed_strata=failed)
    reason = (f"the claim failed in {len(failed)} of {len(stratum_wins)} strata: "
              + "; ".join(failed))
    return replace(judgement, win=False, reasons=(*judgement.reasons, reason),
                   failed_strata=failed)
