"""The per-stratum parts of a CEF report: estimates, hypotheses, comparisons, points.

Each class mirrors one ``$defs`` entry of ``ctxbench.cef-report.v1.json``: its fields are
the definition's members in the order the report writes them; ``to_json()`` writes them
(rounding floats to ``DECIMALS`` places, the only rounding anywhere) and
``from_json(node)`` reads them back, raising a located ``PointerError`` for a missing,
mistyped or unknown member. Full precision is kept in the objects themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ctxbench.core import pointer_join
from ctxbench.core.node import Node
from ctxbench.protocols.cef.model_io import choice, closed, derived, rnd, rnd_or_none

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

_ESTIMATE_GATED = ("degenerate", "bootstrap_low", "bootstrap_high")


@dataclass(frozen=True, slots=True)
class Estimate:
    """One statistic: its point estimate and the interval that is reported for it.

    A gated statistic (``gating``) shows the gate's score interval and carries
    ``degenerate`` and the percentile bootstrap bounds beside it; a statistic that is not
    gated shows its percentile bootstrap interval and has ``degenerate = None``.
    """

    estimate: float | None
    low: float | None
    high: float | None
    interval_method: Literal["score", "percentile"]
    gating: bool
    degenerate: bool | None
    bootstrap_low: float | None
    bootstrap_high: float | None
    standard_error: float | None
    undefined_resamples: int

    OPTIONAL: ClassVar[tuple[str, ...]] = _ESTIMATE_GATED

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"estimate": rnd_or_none(self.estimate),
                               "low": rnd_or_none(self.low), "high": rnd_or_none(self.high),
                               "interval_method": self.interval_method, "gating": self.gating}
        if self.degenerate is not None:
            out.update(degenerate=self.degenerate,
                       bootstrap_low=rnd_or_none(self.bootstrap_low),
                       bootstrap_high=rnd_or_none(self.bootstrap_high))
        out["standard_error"] = rnd_or_none(self.standard_error)
        out["undefined_resamples"] = self.undefined_resamples
        return out

    @classmethod
    def from_json(cls, node: Node) -> Estimate:
        closed(node, ("estimate", "low", "high", "standard_error", "undefined_resamples",
                      "interval_method", "gating", *_ESTIMATE_GATED))
        degenerate = None
        bootstrap_low = bootstrap_high = None
        present = [key for key in _ESTIMATE_GATED if key in node.value]
        if present:
            # The three come together: all of them for a gated statistic, or none.
            degenerate = node.b("degenerate")
            bootstrap_low = node.on("bootstrap_low")
            bootstrap_high = node.on("bootstrap_high")
        return cls(estimate=node.on("estimate"), low=node.on("low"), high=node.on("high"),
                   interval_method=choice(node, "interval_method", ("score", "percentile")),
                   gating=node.b("gating"), degenerate=degenerate,
                   bootstrap_low=bootstrap_low, bootstrap_high=bootstrap_high,
                   standard_error=node.on("standard_error"),
                   undefined_resamples=node.i("undefined_resamples"))


@dataclass(frozen=True, slots=True)
class Confirmation:
    """H4's second bound: the symmetric bootstrap-t of the log ratio of totals."""

    method: Literal["studentized_bootstrap_log_ratio"]
    bound_value: float | None
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "bound_value": rnd_or_none(self.bound_value),
                "passed": self.passed}

    @classmethod
    def from_json(cls, node: Node) -> Confirmation:
        closed(node, ("method", "bound_value", "passed"))
        return cls(choice(node, "method", ("studentized_bootstrap_log_ratio",)),
                   node.on("bound_value"), node.b("passed"))


OutcomeKind = Literal["loss_shown", "inconclusive", "not_evaluable"]


@dataclass(frozen=True, slots=True)
class Outcome:
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

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "supported_margin": rnd_or_none(self.supported_margin),
                "tasks_needed": self.tasks_needed, "power": rnd(self.power)}

    @classmethod
    def from_json(cls, node: Node) -> Outcome:
        closed(node, ("kind", "supported_margin", "tasks_needed", "power"))
        return cls(choice(node, "kind", ("loss_shown", "inconclusive", "not_evaluable")),
                   node.on("supported_margin"), node.oi("tasks_needed"), node.n("power"))


@dataclass(frozen=True, slots=True)
class Hypothesis:
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
    confirmation: Confirmation | None = None
    """H4 only."""
    outcome: Outcome | None = None
    """Failed hypotheses only (absent in reports written before outcomes existed)."""

    OPTIONAL: ClassVar[tuple[str, ...]] = ("confirmation", "outcome")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "name": self.name, "statistic": self.statistic,
            "bound": self.bound, "bound_value": rnd_or_none(self.bound_value),
            "comparison": self.comparison, "threshold": rnd(self.threshold),
            "method": self.method, "test_statistic": rnd_or_none(self.test_statistic),
            "critical_value": rnd_or_none(self.critical_value), "evaluable": self.evaluable,
            "passed": self.passed}
        if self.confirmation is not None:
            out["confirmation"] = self.confirmation.to_json()
        if self.outcome is not None:
            out["outcome"] = self.outcome.to_json()
        return out

    @classmethod
    def from_json(cls, node: Node) -> Hypothesis:
        closed(node, ("id", "name", "statistic", "bound", "bound_value", "comparison",
                      "threshold", "passed", "method", "test_statistic", "critical_value",
                      "evaluable", "confirmation", "outcome"))
        # Absent for H1-H3; when present it must be an object (null is not "absent").
        confirmation = node.at("confirmation") if "confirmation" in node.value else None
        outcome = node.at("outcome") if "outcome" in node.value else None
        return cls(
            id=choice(node, "id", ("H1", "H2", "H3", "H4")), name=node.s("name"),
            statistic=choice(node, "statistic", GATED_STATISTICS),
            bound=choice(node, "bound", ("lower", "upper")), bound_value=node.on("bound_value"),
            comparison=choice(node, "comparison", (">=", "<=", ">")),
            threshold=node.n("threshold"), method=choice(node, "method", ("score",)),
            test_statistic=node.on("test_statistic"), critical_value=node.on("critical_value"),
            evaluable=node.b("evaluable"), passed=node.b("passed"),
            confirmation=None if confirmation is None else Confirmation.from_json(confirmation),
            outcome=None if outcome is None else Outcome.from_json(outcome))


@dataclass(frozen=True, slots=True)
class FailedPairs:
    """Pairs with a failure (credited zero reduction), and which side failed."""

    either_side: int
    candidate_failed: int
    baseline_failed: int

    def to_json(self) -> dict[str, Any]:
        return {"either_side": self.either_side, "candidate_failed": self.candidate_failed,
                "baseline_failed": self.baseline_failed}

    @classmethod
    def from_json(cls, node: Node) -> FailedPairs:
        closed(node, ("either_side", "candidate_failed", "baseline_failed"))
        return cls(node.i("either_side"), node.i("candidate_failed"), node.i("baseline_failed"))


_COMPARISON = ("condition", "baseline", "paired_units", "pairs", "evaluable_units",
               *STATISTICS, "failed_pairs", "hypotheses", "min_savings", "min_paired_units",
               "enough_units", "claimed", "quality_preserving_context_win", "claim", "reasons")


@dataclass(frozen=True, slots=True)
class Comparison:
    """One condition against the baseline in a stratum or the aggregate.

    ``quality_preserving_context_win`` is the claim as :mod:`ctxbench.protocols.cef.
    hypotheses` decided it; ``claim`` is only its name and is never stored.
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
    hypotheses: tuple[Hypothesis, ...]
    min_savings: float
    min_paired_units: int
    enough_units: bool
    claimed: bool
    quality_preserving_context_win: bool
    reasons: tuple[str, ...]

    DERIVED: ClassVar[tuple[str, ...]] = ("claim",)

    @property
    def claim(self) -> Claim:
        return claim_name(self.quality_preserving_context_win)

    def statistic(self, name: str) -> Estimate:
        """The estimate of the statistic ``name`` (one of ``STATISTICS``)."""
        if name not in STATISTICS:
            raise KeyError(name)
        value: Estimate = getattr(self, name)
        return value

    def hypothesis(self, hid: str) -> Hypothesis:
        return next(h for h in self.hypotheses if h.id == hid)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"condition": self.condition, "baseline": self.baseline,
                               "paired_units": self.paired_units, "pairs": self.pairs,
                               "evaluable_units": self.evaluable_units}
        for name in STATISTICS:
            out[name] = self.statistic(name).to_json()
        out.update(failed_pairs=self.failed_pairs.to_json(),
                   hypotheses=[h.to_json() for h in self.hypotheses],
                   min_savings=rnd(self.min_savings), min_paired_units=self.min_paired_units,
                   enough_units=self.enough_units, claimed=self.claimed,
                   quality_preserving_context_win=self.quality_preserving_context_win,
                   claim=self.claim, reasons=list(self.reasons))
        return out

    @staticmethod
    def _fields(node: Node) -> dict[str, Any]:
        hypotheses = node.at("hypotheses").items()
        if len(hypotheses) != 4:
            raise node.at("hypotheses").fail("an array of the four hypotheses H1-H4")
        win = node.b("quality_preserving_context_win")
        derived(node, "claim", claim_name(win),
                pointer_join(node.pointer, "quality_preserving_context_win"))
        out: dict[str, Any] = {
            "condition": node.s("condition"), "baseline": node.s("baseline"),
            "paired_units": node.i("paired_units"), "pairs": node.i("pairs"),
            "evaluable_units": node.i("evaluable_units")}
        for name in STATISTICS:
            out[name] = Estimate.from_json(node.at(name))
        out.update(failed_pairs=FailedPairs.from_json(node.at("failed_pairs")),
                   hypotheses=tuple(Hypothesis.from_json(h) for h in hypotheses),
                   min_savings=node.n("min_savings"), min_paired_units=node.i("min_paired_units"),
                   enough_units=node.b("enough_units"), claimed=node.b("claimed"),
                   quality_preserving_context_win=win, reasons=node.at("reasons").texts())
        return out


@dataclass(frozen=True, slots=True)
class StratumComparison(Comparison):
    """A comparison inside one stratum; ``headline`` is its claim sentence, when it has one."""

    headline: str | None = None

    # Optional in the shared schema definition (aggregate comparisons have none); a
    # stratum comparison always writes it, null when it has no headline.
    OPTIONAL: ClassVar[tuple[str, ...]] = ("headline",)

    def to_json(self) -> dict[str, Any]:
        return {**self._json(), "headline": self.headline}

    @classmethod
    def from_json(cls, node: Node) -> StratumComparison:
        closed(node, (*_COMPARISON, "headline"))
        headline = node.at("headline")
        return cls(**cls._fields(node),
                   headline=None if headline.value is None else headline.text())


@dataclass(frozen=True, slots=True)
class AggregateComparison(Comparison):
    """A comparison over all strata; ``failed_strata`` names the strata whose claim failed."""

    failed_strata: tuple[str, ...] = ()

    OPTIONAL: ClassVar[tuple[str, ...]] = ("failed_strata",)

    def to_json(self) -> dict[str, Any]:
        return {**self._json(), "failed_strata": list(self.failed_strata)}

    @classmethod
    def from_json(cls, node: Node) -> AggregateComparison:
        closed(node, (*_COMPARISON, "failed_strata"))
        return cls(**cls._fields(node), failed_strata=node.at("failed_strata").texts())


@dataclass(frozen=True, slots=True)
class OperatingPoint:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "condition": self.condition, "trials": self.trials, "failures": self.failures,
            "task_score": rnd(self.task_score), "evidence_recall": rnd(self.evidence_recall),
            "unsupported_claim_rate": rnd(self.unsupported_claim_rate),
            "context_tokens_total": self.context_tokens_total,
            "context_tokens_mean": rnd(self.context_tokens_mean),
            "billed_cost_usd_total": rnd(self.billed_cost_usd_total),
            "billed_cost_usd_mean": rnd(self.billed_cost_usd_mean),
            "latency_ms_mean": rnd(self.latency_ms_mean),
            "on_pareto_frontier": self.on_pareto_frontier}

    @classmethod
    def from_json(cls, node: Node) -> OperatingPoint:
        closed(node, ("condition", "trials", "failures", "task_score", "evidence_recall",
                      "unsupported_claim_rate", "context_tokens_total", "context_tokens_mean",
                      "billed_cost_usd_total", "billed_cost_usd_mean", "latency_ms_mean",
                      "on_pareto_frontier"))
        return cls(
            condition=node.s("condition"), trials=node.i("trials"),
            failures=node.i("failures"), task_score=node.n("task_score"),
            evidence_recall=node.n("evidence_recall"),
            unsupported_claim_rate=node.n("unsupported_claim_rate"),
            context_tokens_total=node.i("context_tokens_total"),
            context_tokens_mean=node.n("context_tokens_mean"),
            billed_cost_usd_total=node.n("billed_cost_usd_total"),
            billed_cost_usd_mean=node.n("billed_cost_usd_mean"),
            latency_ms_mean=node.n("latency_ms_mean"),
            on_pareto_frontier=node.b("on_pareto_frontier"))


@dataclass(frozen=True, slots=True)
class StratumKey:
    """What a stratum holds fixed."""

    provider: str
    model: str
    workload: str
    workload_version: str
    scorer: str

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "workload": self.workload,
                "workload_version": self.workload_version, "scorer": self.scorer}

    @classmethod
    def from_json(cls, node: Node) -> StratumKey:
        closed(node, ("provider", "model", "workload", "workload_version", "scorer"))
        return cls(node.s("provider"), node.s("model"), node.s("workload"),
                   node.s("workload_version"), node.s("scorer"))
