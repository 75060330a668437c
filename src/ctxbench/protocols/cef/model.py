"""The typed ``ctxbench.cef-report.v1`` report: what the analysis returns and render reads.

    from ctxbench.core import load_json_document
    from ctxbench.core.node import Node
    from ctxbench.protocols.cef.model import CefReport

    report = CefReport.from_json(Node("report.json", "", load_json_document("report.json")))
    report.aggregate.comparisons[0].claim   # 'quality_preserving_context_win' or 'NO CLAIM'

Every member of the JSON Schema is a field here or in the classes this module re-exports
(per-stratum parts: :mod:`~ctxbench.protocols.cef.model_blocks`; settings and inputs:
:mod:`~ctxbench.protocols.cef.model_inputs`), declared once
(:class:`~ctxbench.core.jsonmodel.JsonModel`). ``to_json()`` writes the exact document
(rounding happens there and nowhere else); ``from_json`` reads one back and raises a
located :class:`~ctxbench.core.PointerError` for a missing, mistyped or unknown member,
or for a ``schema_version`` other than this one. Two members are free-form by design and
kept as decoded: ``methodology.invocation`` (what the caller declared) and
``preregistration.document`` (its own schema, ``ctxbench.cef-prereg.v1``).

The claim is decided once, by :mod:`ctxbench.protocols.cef.hypotheses`, and carried as
each comparison's ``quality_preserving_context_win``. ``claim``, ``summary`` and
``headlines`` are derived from it (``derived`` fields), and checked against it on reading.
No numpy here: reading and rendering a report stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ctxbench.core.jsonmodel import check, derived, optional, version
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
from ctxbench.protocols.cef.model_io import REPORT_SCHEMA, CefModel

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


@dataclass(frozen=True, slots=True)
class Stratum(CefModel):
    """One (provider, model, workload, workload_version, scorer) stratum."""

    label: str
    key: StratumKey
    tasks: int
    paired_units: int
    min_savings: float
    operating_points: tuple[OperatingPoint, ...]
    pareto_frontier: tuple[str, ...]
    comparisons: tuple[StratumComparison, ...]


@dataclass(frozen=True, slots=True)
class Aggregate(CefModel):
    """The result over all strata (the single stratum's result when there is one)."""

    strata: int
    tasks: int
    paired_units: int
    min_savings: float
    resampling: str
    operating_points: tuple[OperatingPoint, ...]
    pareto_frontier: tuple[str, ...]
    comparisons: tuple[AggregateComparison, ...]


@dataclass(frozen=True, slots=True)
class SummaryClaim(CefModel):
    condition: str
    claimed: bool
    holds: bool
    failed_strata: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Summary(CefModel):
    """Derived from the aggregate comparisons; never stored (see ``CefReport.summary``)."""

    claims: tuple[SummaryClaim, ...]
    check_passed: bool


def _headlines(report: CefReport) -> tuple[str, ...]:
    return tuple(c.headline for s in report.strata for c in s.comparisons
                 if c.claimed and c.headline is not None)


def _summary(report: CefReport) -> Summary:
    claims = tuple(SummaryClaim(c.condition, c.claimed, c.quality_preserving_context_win,
                                c.failed_strata) for c in report.aggregate.comparisons)
    return Summary(claims, all(c.holds for c in claims if c.claimed))


@dataclass(frozen=True, slots=True)
class CefReport(CefModel):
    """A whole ``ctxbench.cef-report.v1`` document (``SCHEMA_VERSION``).

    ``headlines``: the headline of every claimed stratum comparison that has one, in
    order; ``summary``: each aggregate comparison's decided claim, ``check_passed`` when
    all claimed hold. Both are derived, never passed in.
    """

    schema_version: Literal["ctxbench.cef-report.v1"] = field(
        init=False, default=REPORT_SCHEMA, metadata=version())
    protocol: Protocol
    methodology: Methodology
    preregistration: PreregistrationRecord
    inputs: Inputs
    claim_class: ClaimClass
    headlines: tuple[str, ...] = field(init=False, compare=False, metadata=derived(
        _headlines, "the claimed stratum comparisons' headlines"))
    summary: Summary = field(init=False, compare=False, metadata=derived(
        _summary, ("aggregate", "comparisons")))
    strata: tuple[Stratum, ...] = field(metadata=check(
        bool, "an array of at least one stratum"))
    aggregate: Aggregate
    exclusions: tuple[Exclusion, ...]
    failures: Failures
    caveats: tuple[str, ...]
    notes: tuple[str, ...] | None = field(default=None, metadata=optional() | check(
        all, "an array of non-empty strings"))
    """Notes a run attached (absent from the document when None)."""

    SCHEMA_VERSION: ClassVar[str] = REPORT_SCHEMA
