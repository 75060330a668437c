"""The per-stratum parts of a CEF report: estimates, hypotheses, comparisons, points.

Each class mirrors one ``$defs`` entry of ``ctxbench.cef-report.v1.json``: its fields are
the definition's members in the order the report writes them, declared once
(:class:`~ctxbench.core.jsonmodel.JsonModel`); floats are rounded to ``DECIMALS`` places
only when written and kept at full precision in the objects themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxbench.core.jsonmodel import check, derived, optional
from ctxbench.protocols.cef.model_io import CefModel

__all__ = [
    "GATED_STATISTICS",
    "STATISTICS",
    "AggregateComparison",
    "Comparison",
    "Confirmation",
    "Estimate",
    "FailedPairs",
    "Hypothesis",
    "OperatingPoint",
    "Outcome",
    "StratumComparison",
    "StratumKey",
    "claim_name",
]

STATISTICS = (
    "task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
    "context_reduction", "mean_pair_context_reduction", "cost_reduction", "latency_reduction",
)
GatedStatistic = Literal["task_score_delta", "evidence_recall_delta",
                         "unsupported_claim_rate_delta", "context_reduction"]
GATED_STATISTICS: tuple[GatedStatistic, ...] = (
    "task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
    "context_reduction")
Claim = Literal["quality_preserving_context_win", "NO CLAIM"]


def claim_name(win: bool) -> Claim:
    """The ``claim`` a comparison shows for its decided ``quality_preserving_context_win``."""
    return "quality_preserving_context_win" if win else "NO CLAIM"


# --- the parts -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Estimate(CefModel):
    """One statistic: its point estimate and the interval that is reported for it.

    A gated statistic (``gating``) shows the gate's score interval and carries
    ``degenerate`` and the percentile bootstrap bounds beside it (the three come together);
    a statistic that is not gated shows its percentile bootstrap interval and has
    ``degenerate = None`` (the three are absent).
    """

    estimate: float | None
    low: float | None
    high: float | None
    interval_method: Literal["score", "percentile"]
    gating: bool
    degenerate: bool | None = field(metadata=optional())
    bootstrap_low: float | None = field(metadata=optional(along_with="degenerate"))
    bootstrap_high: float | None = field(metadata=optional(along_with="degenerate"))
    standard_error: float | None
    undefined_resamples: int


@dataclass(frozen=True, slots=True)
class Confirmation(CefModel):
    """H4's second bound: the symmetric bootstrap-t of the log ratio of totals."""

    method: Literal["studentized_bootstrap_log_ratio"]
    bound_value: float | None
    passed: bool


OutcomeKind = Literal["loss_shown", "inconclusive", "not_evaluable"]


@dataclass(frozen=True, slots=True)
class Outcome(CefModel):
    """Why a hypothesis was not shown: what the interval did show about its margin.

    ``loss_shown``: the interval lies wholly beyond the margin; ``inconclusive``: it
    straddles the margin; ``not_evaluable``: the data cannot give the interval.
    ``supported_margin`` is the gate's bound, the strictest margin this study could
    have supported; ``tasks_needed`` (inconclusive only) is about how many tasks the
    declared margin needs for ``power`` if the truth were the estimate and the spread
    as observed (None: the estimate itself is beyond the margin).
    """

    kind: OutcomeKind
    supported_margin: float | None
    tasks_needed: int | None
    power: float


@dataclass(frozen=True, slots=True)
class Hypothesis(CefModel):
    """One of H1-H4 as decided by its score test (``passed`` is the gate's outcome)."""

    id: Literal["H1", "H2", "H3", "H4"]
    name: str
    statistic: GatedStatistic
    bound: Literal["lower", "upper"]
    bound_value: float | None
    comparison: Literal[">=", "<=", ">"]
    threshold: float
    method: Literal["score"]
    test_statistic: float | None
    """None when infinite: every cluster's contrast has one sign."""
    critical_value: float | None
    evaluable: bool
    passed: bool
    confirmation: Confirmation | None = field(default=None, metadata=optional())
    """H4 only."""
    outcome: Outcome | None = field(default=None, metadata=optional())
    """Failed hypotheses only (absent in reports written before outcomes existed)."""


@dataclass(frozen=True, slots=True)
class FailedPairs(CefModel):
    """Pairs with a failure (credited zero reduction), and which side failed."""

    either_side: int
    candidate_failed: int
    baseline_failed: int


def _claim(comparison: Comparison) -> Claim:
    return claim_name(comparison.quality_preserving_context_win)


@dataclass(frozen=True, slots=True)
class Comparison(CefModel):
    """One condition against the baseline in a stratum or the aggregate.

    ``quality_preserving_context_win`` is the claim as :mod:`ctxbench.protocols.cef.
    hypotheses` decided it; ``claim`` is only its name, derived from it.
    """

    condition: str
    baseline: str
    paired_units: int
    pairs: int
    evaluable_units: int
    task_score_delta: Estimate
    evidence_recall_delta: Estimate
    unsupported_claim_rate_delta: Estimate
    context_reduction: Estimate
    mean_pair_context_reduction: Estimate
    cost_reduction: Estimate
    latency_reduction: Estimate
    failed_pairs: FailedPairs
    hypotheses: tuple[Hypothesis, ...] = field(metadata=check(
        lambda h: len(h) == 4, "an array of the four hypotheses H1-H4"))
    min_savings: float
    min_paired_units: int
    enough_units: bool
    claimed: bool
    quality_preserving_context_win: bool
    claim: Claim = field(init=False, compare=False, metadata=derived(
        _claim, ("quality_preserving_context_win",)))
    reasons: tuple[str, ...]

    def statistic(self, name: str) -> Estimate:
        """The estimate of the statistic ``name`` (one of ``STATISTICS``)."""
        if name not in STATISTICS:
            raise KeyError(name)
        value: Estimate = getattr(self, name)
        return value

    def hypothesis(self, hid: str) -> Hypothesis:
        return next(h for h in self.hypotheses if h.id == hid)


@dataclass(frozen=True, slots=True)
class StratumComparison(Comparison):
    """A comparison inside one stratum; ``headline`` is its claim sentence, when it has one.

    The shared schema definition makes ``headline`` optional (aggregate comparisons have
    none); a stratum comparison always writes it, null when it has no headline.
    """

    headline: str | None = None


@dataclass(frozen=True, slots=True)
class AggregateComparison(Comparison):
    """A comparison over all strata; ``failed_strata`` names the strata whose claim failed."""

    failed_strata: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OperatingPoint(CefModel):
    """One condition's descriptive totals and means (failure scores applied)."""

    condition: str
    trials: int
    failures: int
    task_score: float
    evidence_recall: float
    unsupported_claim_rate: float
    context_tokens_total: int
    context_tokens_mean: float
    billed_cost_usd_total: float
    billed_cost_usd_mean: float
    latency_ms_mean: float
    on_pareto_frontier: bool


@dataclass(frozen=True, slots=True)
class StratumKey(CefModel):
    """What a stratum holds fixed."""

    provider: str
    model: str
    workload: str
    workload_version: str
    scorer: str
