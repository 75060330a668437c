"""H1-H4 exactly as the CEF protocol states them, and the claim they decide.

* H1 task quality: lower bound of the task-score delta interval >= -tolerance;
* H2 evidence: lower bound of the evidence-recall delta interval >= -tolerance;
* H3 grounding: upper bound of the unsupported-claim-rate delta interval <= tolerance;
* H4 context: lower bound of the context-reduction interval > the workload's
  preregistered minimum savings (0 unless declared).

``quality_preserving_context_win`` holds only when all four pass and the number of
paired units reaches the preregistered minimum; otherwise the result is NO CLAIM with a
reason for each failed condition. Each bound of a two-sided ``level`` interval acts as a
one-sided test at ``(1 - level) / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxbench.protocols.cef.compare import ConditionResult
from ctxbench.protocols.cef.prereg import Preregistration

__all__ = ["HYPOTHESES", "Judgement", "judge"]

# (id, name, statistic, bound, comparison)
HYPOTHESES = (
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

    hypotheses: tuple[dict[str, Any], ...]
    enough_units: bool
    win: bool
    reasons: tuple[str, ...]


def _threshold(stat: str, prereg: Preregistration, min_savings: float) -> float:
    if stat == "context_reduction":
        return min_savings
    if stat == "unsupported_claim_rate_delta":
        return prereg.quality_tolerance
    return -prereg.quality_tolerance


def judge(result: ConditionResult, prereg: Preregistration, min_savings: float) -> Judgement:
    """Decide H1-H4 and the claim for one condition's bootstrap result."""
    hypotheses = []
    reasons = []
    for hid, name, stat, side, op in HYPOTHESES:
        est = result.estimates[stat]
        bound = est.low if side == "lower" else est.high
        threshold = _threshold(stat, prereg, min_savings)
        if bound is None:
            passed = False
            reasons.append(f"{hid} ({name}) failed: the {_LABEL[stat]} interval is undefined "
                           f"({est.undefined_resamples} of {est.n_resamples} resamples "
                           "undefined)")
        else:
            passed = {">=": bound >= threshold, "<=": bound <= threshold,
                      ">": bound > threshold}[op]
            if not passed:
                negated = {">=": "<", "<=": ">", ">": "<="}[op]
                reasons.append(f"{hid} ({name}) failed: {side} bound of the {_LABEL[stat]} "
                               f"{bound:.4f} {negated} {threshold:g}")
        hypotheses.append({
            "id": hid,
            "name": name,
            "statistic": stat,
            "bound": side,
            "bound_value": bound,
            "comparison": op,
            "threshold": threshold,
            "passed": passed,
        })
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
    win = enough and all(h["passed"] for h in hypotheses)
    return Judgement(tuple(hypotheses), enough, win, tuple(reasons))
