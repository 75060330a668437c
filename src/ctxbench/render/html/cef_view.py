"""What the CEF page reads from a ``ctxbench.cef-report.v1`` document, and nothing more.

Every field the page shows is read here, once, into frozen records; the page modules never
index the JSON themselves. When the report format changes, this is the module to adapt.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.core.node import Node, read_notes

__all__ = ["CefView", "read_cef"]


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class Hypothesis:
    id: str
    name: str
    statistic: str
    bound: str
    bound_value: float | None
    comparison: str
    threshold: float
    passed: bool


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    condition: str
    trials: int
    failures: int
    task_score: float | None
    evidence_recall: float | None
    unsupported_claim_rate: float | None
    context_tokens_mean: float | None
    cost_usd_mean: float | None
    latency_ms_mean: float | None
    on_frontier: bool


@dataclass(frozen=True, slots=True)
class Comparison:
    condition: str
    paired_units: int
    evaluable_units: int
    claim: str
    win: bool
    reasons: tuple[str, ...]
    hypotheses: tuple[Hypothesis, ...]
    intervals: tuple[tuple[str, Interval], ...]
    failed_pairs: int

    def interval(self, statistic: str) -> Interval:
        for name, value in self.intervals:
            if name == statistic:
                return value
        raise KeyError(statistic)


@dataclass(frozen=True, slots=True)
class Block:
    """A stratum or the aggregate: operating points, frontier, paired comparisons."""

    anchor: str
    title: str
    nav: str
    points: tuple[OperatingPoint, ...]
    frontier: tuple[str, ...]
    comparisons: tuple[Comparison, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    condition: str
    claimed: bool
    holds: bool
    failed_strata: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Exclusion:
    task_id: str
    workload: str | None
    reason: str
    trials_removed: int


@dataclass(frozen=True, slots=True)
class CefView:
    protocol: str
    version: str
    baseline: str
    trials_analyzed: int
    trials_excluded: int
    claim_class: str
    headlines: tuple[str, ...]
    claims: tuple[Claim, ...]
    check_passed: bool
    confidence: float
    strata: tuple[Block, ...]
    aggregate: Block
    trials_failed: int
    failed_by_condition: tuple[tuple[str, int], ...]
    overridden_trials: int
    failed_pairs_zero: tuple[tuple[str, int], ...]
    exclusions: tuple[Exclusion, ...]
    caveats: tuple[str, ...]
    method_lines: tuple[tuple[str, str], ...]
    reproduce: str | None
    notes: tuple[str, ...]


_INTERVALS = ("task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
              "context_reduction", "mean_pair_context_reduction", "cost_reduction",
              "latency_reduction")


def _interval(node: Node) -> Interval:
    return Interval(node.on("estimate"), node.on("low"), node.on("high"))


def _comparison(node: Node) -> Comparison:
    hyps = tuple(Hypothesis(h.s("id"), h.s("name"), h.s("statistic"), h.s("bound"),
                            h.on("bound_value"), h.s("comparison"), h.n("threshold"),
                            h.b("passed"))
                 for h in node.at("hypotheses").items())
    return Comparison(
        condition=node.s("condition"), paired_units=node.i("paired_units"),
        evaluable_units=node.i("evaluable_units"), claim=node.s("claim"),
        win=node.b("quality_preserving_context_win"), reasons=node.at("reasons").texts(),
        hypotheses=hyps,
        intervals=tuple((name, _interval(node.at(name))) for name in
                        dict.fromkeys([*_INTERVALS, *(h.statistic for h in hyps)])),
        failed_pairs=node.at("failed_pairs").i("either_side"))


def _point(node: Node) -> OperatingPoint:
    return OperatingPoint(
        condition=node.s("condition"), trials=node.i("trials"), failures=node.i("failures"),
        task_score=node.on("task_score"), evidence_recall=node.on("evidence_recall"),
        unsupported_claim_rate=node.on("unsupported_claim_rate"),
        context_tokens_mean=node.on("context_tokens_mean"),
        cost_usd_mean=node.on("billed_cost_usd_mean"), latency_ms_mean=node.on("latency_ms_mean"),
        on_frontier=node.b("on_pareto_frontier"))


def _block(node: Node, anchor: str, title: str, nav: str) -> Block:
    return Block(anchor=anchor, title=title, nav=nav,
                 points=tuple(_point(p) for p in node.at("operating_points").items()),
                 frontier=node.at("pareto_frontier").texts(),
                 comparisons=tuple(_comparison(c) for c in node.at("comparisons").items()))


def _pairs(node: Node) -> tuple[tuple[str, int], ...]:
    return tuple((key, value.int_()) for key, value in node.entries())


def _method_lines(m: Node) -> list[tuple[str, str]]:
    """Every plain member of ``methodology`` as written (the methodology text may grow)."""
    out = []
    for key, node in m.entries():
        value = node.value
        if key in ("invocation", "reproduce") or value is None:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            shown = ", ".join(value) or "none"
        elif isinstance(value, dict) and all(isinstance(v, str | int | float)
                                             for v in value.values()):
            shown = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in value.items()) or "none"
        elif isinstance(value, str | int | float):
            shown = f"{value:g}" if isinstance(value, float) else str(value)
        else:
            continue
        out.append((key.replace("_", " "), shown))
    return out


def read_cef(doc: Node) -> CefView:
    """Read the fields the CEF page shows; a missing required field raises PointerError."""
    m = doc.at("methodology")
    inputs = doc.at("inputs")
    strata = tuple(
        _block(s, f"stratum-{i + 1}", f"Stratum: {s.s('label')} ({s.i('tasks')} tasks)",
               f"Stratum {i + 1}")
        for i, s in enumerate(doc.at("strata").items()))
    agg = doc.at("aggregate")
    aggregate = _block(agg, "aggregate", f"Aggregate over {agg.i('strata')} stratum/strata "
                                         f"({agg.s('resampling')})", "Aggregate")
    failures = doc.at("failures")
    claims = tuple(Claim(c.s("condition"), c.b("claimed"), c.b("holds"),
                         c.at("failed_strata").texts())
                   for c in doc.at("summary").at("claims").items())
    exclusions = tuple(Exclusion(e.s("task_id"), None if e.opt("workload") is None
                                 else e.s("workload"), e.s("reason"), e.i("trials_removed"))
                       for e in doc.at("exclusions").items())
    prereg = doc.at("preregistration")
    method = (("preregistration", f"{prereg.s('source')} (BLAKE3 "
                                  f"{prereg.s('digest_blake3')})"),
              *_method_lines(m))
    reproduce = m.opt("reproduce")
    return CefView(
        protocol=doc.at("protocol").s("name"), version=doc.at("protocol").s("version"),
        baseline=m.s("baseline"), trials_analyzed=inputs.i("trials_analyzed"),
        trials_excluded=inputs.i("trials_excluded"),
        claim_class=doc.at("claim_class").s("class"), headlines=doc.at("headlines").texts(),
        claims=claims, check_passed=doc.at("summary").b("check_passed"),
        confidence=m.n("confidence_level"), strata=strata, aggregate=aggregate,
        trials_failed=failures.i("trials_failed"),
        failed_by_condition=_pairs(failures.at("by_condition")),
        overridden_trials=failures.at("overridden_failure_scores").i("trials"),
        failed_pairs_zero=_pairs(failures.at("failed_pairs_credited_zero_reduction")),
        exclusions=exclusions, caveats=doc.at("caveats").texts(), method_lines=method,
        reproduce=None if reproduce is None else reproduce.text(), notes=read_notes(doc))
