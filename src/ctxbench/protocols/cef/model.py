"""The typed ``ctxbench.cef-report.v1`` report: what the analysis returns and render reads.

    from ctxbench.core import load_json_document
    from ctxbench.core.node import Node
    from ctxbench.protocols.cef.model import CefReport

    report = CefReport.from_json(Node("report.json", "", load_json_document("report.json")))
    report.aggregate.comparisons[0].claim   # 'quality_preserving_context_win' or 'NO CLAIM'

Every member of the JSON Schema is a field here or in the classes this module re-exports
(per-stratum parts: :mod:`~ctxbench.protocols.cef.model_blocks`; settings and inputs:
:mod:`~ctxbench.protocols.cef.model_inputs`). ``to_json()`` writes the exact document
(rounding happens there and nowhere else); ``from_json`` reads one back and raises a
located :class:`~ctxbench.core.PointerError` for a missing, mistyped or unknown member,
or for a ``schema_version`` other than this one. Two members are free-form by design and
kept as decoded: ``methodology.invocation`` (what the caller declared) and
``preregistration.document`` (its own schema, ``ctxbench.cef-prereg.v1``).

The claim is decided once, by :mod:`ctxbench.protocols.cef.hypotheses`, and carried as
each comparison's ``quality_preserving_context_win``. ``claim``, ``summary`` and
``headlines`` are derived from it on writing, and checked against it on reading.
No numpy here: reading and rendering a report stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ctxbench.core import PointerError, describe_value
from ctxbench.core.node import Node
from ctxbench.protocols.cef.model_blocks import (
    AggregateComparison,
    Comparison,
    Confirmation,
    Estimate,
    FailedPairs,
    Hypothesis,
    OperatingPoint,
    Outcome,
    StratumComparison,
    StratumKey,
)
from ctxbench.protocols.cef.model_inputs import (
    ClaimClass,
    CostReference,
    Exclusion,
    Failures,
    FailureScores,
    Inputs,
    Methodology,
    OverriddenScores,
    PreregistrationRecord,
    Protocol,
)
from ctxbench.protocols.cef.model_io import closed, derived, rnd

__all__ = [
    "REPORT_SCHEMA",
    "Aggregate",
    "AggregateComparison",
    "CefReport",
    "ClaimClass",
    "Comparison",
    "Confirmation",
    "CostReference",
    "Estimate",
    "Exclusion",
    "FailedPairs",
    "FailureScores",
    "Failures",
    "Hypothesis",
    "Inputs",
    "Methodology",
    "OperatingPoint",
    "Outcome",
    "OverriddenScores",
    "PreregistrationRecord",
    "Protocol",
    "Stratum",
    "StratumComparison",
    "StratumKey",
    "Summary",
    "SummaryClaim",
]

REPORT_SCHEMA = "ctxbench.cef-report.v1"


@dataclass(frozen=True, slots=True)
class Stratum:
    """One (provider, model, workload, workload_version, scorer) stratum."""

    label: str
    key: StratumKey
    tasks: int
    paired_units: int
    min_savings: float
    operating_points: tuple[OperatingPoint, ...]
    pareto_frontier: tuple[str, ...]
    comparisons: tuple[StratumComparison, ...]

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "key": self.key.to_json(), "tasks": self.tasks,
                "paired_units": self.paired_units, "min_savings": rnd(self.min_savings),
                "operating_points": [p.to_json() for p in self.operating_points],
                "pareto_frontier": list(self.pareto_frontier),
                "comparisons": [c.to_json() for c in self.comparisons]}

    @classmethod
    def from_json(cls, node: Node) -> Stratum:
        closed(node, ("label", "key", "tasks", "paired_units", "min_savings",
                      "operating_points", "pareto_frontier", "comparisons"))
        return cls(
            label=node.s("label"), key=StratumKey.from_json(node.at("key")),
            tasks=node.i("tasks"), paired_units=node.i("paired_units"),
            min_savings=node.n("min_savings"),
            operating_points=tuple(OperatingPoint.from_json(p)
                                   for p in node.at("operating_points").items()),
            pareto_frontier=node.at("pareto_frontier").texts(),
            comparisons=tuple(StratumComparison.from_json(c)
                              for c in node.at("comparisons").items()))


@dataclass(frozen=True, slots=True)
class Aggregate:
    """The result over all strata (the single stratum's result when there is one)."""

    strata: int
    tasks: int
    paired_units: int
    min_savings: float
    resampling: str
    operating_points: tuple[OperatingPoint, ...]
    pareto_frontier: tuple[str, ...]
    comparisons: tuple[AggregateComparison, ...]

    def to_json(self) -> dict[str, Any]:
        return {"strata": self.strata, "tasks": self.tasks, "paired_units": self.paired_units,
                "min_savings": rnd(self.min_savings), "resampling": self.resampling,
                "operating_points": [p.to_json() for p in self.operating_points],
                "pareto_frontier": list(self.pareto_frontier),
                "comparisons": [c.to_json() for c in self.comparisons]}

    @classmethod
    def from_json(cls, node: Node) -> Aggregate:
        closed(node, ("strata", "tasks", "paired_units", "min_savings", "resampling",
                      "operating_points", "pareto_frontier", "comparisons"))
        return cls(
            strata=node.i("strata"), tasks=node.i("tasks"), paired_units=node.i("paired_units"),
            min_savings=node.n("min_savings"), resampling=node.s("resampling"),
            operating_points=tuple(OperatingPoint.from_json(p)
                                   for p in node.at("operating_points").items()),
            pareto_frontier=node.at("pareto_frontier").texts(),
            comparisons=tuple(AggregateComparison.from_json(c)
                              for c in node.at("comparisons").items()))


@dataclass(frozen=True, slots=True)
class SummaryClaim:
    condition: str
    claimed: bool
    holds: bool
    failed_strata: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"condition": self.condition, "claimed": self.claimed, "holds": self.holds,
                "failed_strata": list(self.failed_strata)}


@dataclass(frozen=True, slots=True)
class Summary:
    """Derived from the aggregate comparisons; never stored (see ``CefReport.summary``)."""

    claims: tuple[SummaryClaim, ...]
    check_passed: bool

    def to_json(self) -> dict[str, Any]:
        return {"claims": [c.to_json() for c in self.claims],
                "check_passed": self.check_passed}


_TOP = ("schema_version", "protocol", "methodology", "preregistration", "inputs",
        "claim_class", "headlines", "summary", "strata", "aggregate", "exclusions",
        "failures", "caveats", "notes")


@dataclass(frozen=True, slots=True)
class CefReport:
    """A whole ``ctxbench.cef-report.v1`` document (``SCHEMA_VERSION``)."""

    protocol: Protocol
    methodology: Methodology
    preregistration: PreregistrationRecord
    inputs: Inputs
    claim_class: ClaimClass
    strata: tuple[Stratum, ...]
    aggregate: Aggregate
    exclusions: tuple[Exclusion, ...]
    failures: Failures
    caveats: tuple[str, ...]
    notes: tuple[str, ...] | None = None
    """Notes a run attached (absent from the document when None)."""

    SCHEMA_VERSION: ClassVar[str] = REPORT_SCHEMA
    DERIVED: ClassVar[tuple[str, ...]] = ("schema_version", "headlines", "summary")
    OPTIONAL: ClassVar[tuple[str, ...]] = ("notes",)

    @property
    def schema_version(self) -> str:
        return self.SCHEMA_VERSION

    @property
    def headlines(self) -> tuple[str, ...]:
        """The headline of every claimed stratum comparison that has one, in order."""
        return tuple(c.headline for s in self.strata for c in s.comparisons
                     if c.claimed and c.headline is not None)

    @property
    def summary(self) -> Summary:
        """Each aggregate comparison's decided claim; ``check_passed`` when all claimed hold."""
        claims = tuple(SummaryClaim(c.condition, c.claimed, c.quality_preserving_context_win,
                                    c.failed_strata) for c in self.aggregate.comparisons)
        return Summary(claims, all(c.holds for c in claims if c.claimed))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": self.SCHEMA_VERSION, "protocol": self.protocol.to_json(),
            "methodology": self.methodology.to_json(),
            "preregistration": self.preregistration.to_json(),
            "inputs": self.inputs.to_json(), "claim_class": self.claim_class.to_json(),
            "headlines": list(self.headlines), "summary": self.summary.to_json(),
            "strata": [s.to_json() for s in self.strata],
            "aggregate": self.aggregate.to_json(),
            "exclusions": [e.to_json() for e in self.exclusions],
            "failures": self.failures.to_json(), "caveats": list(self.caveats)}
        if self.notes is not None:
            out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_json(cls, node: Node) -> CefReport:
        """Read a decoded report; every problem is a ``PointerError`` naming its place."""
        version = node.at("schema_version")
        if version.value != REPORT_SCHEMA:
            raise PointerError(node.path, version.pointer,
                               f"expected {REPORT_SCHEMA!r} (the version this ctxbench reads), "
                               f"got {describe_value(version.value)}")
        closed(node, _TOP)
        notes = node.at("notes").texts() if "notes" in node.value else None
        if notes is not None and not all(notes):
            raise node.at("notes").fail("an array of non-empty strings")
        strata = node.at("strata").items()
        if not strata:
            raise node.at("strata").fail("an array of at least one stratum")
        report = cls(
            protocol=Protocol.from_json(node.at("protocol")),
            methodology=Methodology.from_json(node.at("methodology")),
            preregistration=PreregistrationRecord.from_json(node.at("preregistration")),
            inputs=Inputs.from_json(node.at("inputs")),
            claim_class=ClaimClass.from_json(node.at("claim_class")),
            strata=tuple(Stratum.from_json(s) for s in strata),
            aggregate=Aggregate.from_json(node.at("aggregate")),
            exclusions=tuple(Exclusion.from_json(e) for e in node.at("exclusions").items()),
            failures=Failures.from_json(node.at("failures")),
            caveats=node.at("caveats").texts(), notes=notes)
        node.at("headlines").texts()
        derived(node, "headlines", list(report.headlines),
                "the claimed stratum comparisons' headlines")
        derived(node, "summary", report.summary.to_json(), "/aggregate/comparisons")
        return report

    def rounded(self) -> CefReport:
        """This report as its JSON holds it: every float rounded as written."""
        return CefReport.from_json(Node("<report>", "", self.to_json()))
