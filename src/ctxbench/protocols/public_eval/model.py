"""The typed ``ctxbench.public-eval-report.v1`` document: what the analysis returns.

:func:`ctxbench.protocols.public_eval.analysis.analyze` builds a :class:`PublicEvalReport`
at full precision; each member is declared once, as a field
(:class:`~ctxbench.core.jsonmodel.JsonModel`); ``to_json()`` writes the schema's JSON
(rounding to the decimals each field declares happens there and only there);
``PublicEvalReport.from_json(node)`` reads a decoded ``report.json`` back, every
missing, mistyped or unknown field raising a
:class:`~ctxbench.core.PointerError` that names the file and JSON pointer::

    from ctxbench.core import load_json_document
    from ctxbench.core.node import Node
    from ctxbench.protocols.public_eval.model import PublicEvalReport

    report = PublicEvalReport.from_json(Node("report.json", "", load_json_document(path)))
    report.status, report.savings.tokens.gate_lower_bound, report.quality.gate_ci_pp

Unknown members are an error wherever the schema says ``additionalProperties: false``
(everywhere but ``methodology``, whose further string or number members are kept in
``Methodology.extra``, in document order). A ``schema_version`` other than
:data:`SCHEMA_VERSION` (an older or newer report) is an error, not a silent mis-read.
The status and reasons are decided once, by
:func:`ctxbench.protocols.public_eval.verdict.status_and_reasons`; the model carries them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Self, cast

from ctxbench.core import PointerError, pointer_join
from ctxbench.core.jsonmodel import extra_members, omit_empty, optional, rounded, version
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval.model_io import Basis, Bounds, Number, PublicEvalModel
from ctxbench.protocols.public_eval.model_parts import (
    Arm,
    FalseStops,
    InputFile,
    Quality,
    RunsPerTask,
)
from ctxbench.protocols.public_eval.settings import SCHEMA_VERSION

__all__ = [
    "GROSS_METRICS",
    "HEADLINE_METRICS",
    "SCHEMA_VERSION",
    "STATUSES",
    "Inputs",
    "Methodology",
    "PerResolvedSaving",
    "PublicEvalReport",
    "Saving",
    "Savings",
    "Status",
]

Status = Literal["not_evaluable", "quality_loss", "not_non_inferior", "false_stop_risk",
                 "no_savings", "supported"]
STATUSES: tuple[Status, ...] = ("not_evaluable", "quality_loss", "not_non_inferior",
                                "false_stop_risk", "no_savings", "supported")
"""Every status, in the order of precedence the decision applies them."""
HEADLINE_METRICS = ("tokens", "usd", "latency_ms", "tool_calls")
GROSS_METRICS = ("tokens", "usd", "latency_ms")
"""The metrics that can carry governance overhead (net headline, gross beside it)."""
_TOTAL_PLACES = {"usd": 6, "latency_ms": 3}


@dataclass(frozen=True, slots=True)
class Saving(PublicEvalModel):
    """One savings comparison: totals, percent saved, the studentized gate and more.

    Totals of integer metrics are exact ints (float totals are written with the decimals
    of the metric: USD 6, ms 3); ``gate_lower_bound`` is what the token gate reads
    (unrounded when built by the analysis).
    """

    basis: Basis
    baseline_total: Number | None
    treatment_total: Number | None
    percent_saved: float | None = field(metadata=rounded(4))
    ci: Bounds | None = field(metadata=rounded(4))
    gate_lower_bound: float | None = field(metadata=rounded(4))
    percentile_ci_not_gating: Bounds | None = field(metadata=rounded(4))
    undefined_resamples: int


@dataclass(frozen=True, slots=True)
class PerResolvedSaving(PublicEvalModel):
    """Percent saved on a per-resolved-task ratio; its percentile interval does not gate
    (``baseline`` and ``treatment`` written with the decimals of the field holding it)."""

    basis: Basis
    baseline: float
    treatment: float
    percent_saved: float | None = field(metadata=rounded(4))
    percentile_ci_not_gating: Bounds | None = field(metadata=rounded(4))
    undefined_resamples: int


@dataclass(frozen=True, slots=True)
class Savings(PublicEvalModel):
    """Headline savings per metric (net where overhead is recorded), gross, per resolved.

    ``net`` names the metrics whose rows record governance overhead: their headline entry
    is net and a ``gross_<metric>`` member is reported beside it (null when unmeasured);
    other metrics have no ``gross_`` member at all. An entry is None when its metric is
    not measured in every row. JSON order: the measured series (headline then gross),
    then the unmeasured ones, then the per-resolved ratios, as the analysis writes them.
    Which members exist and their order depend on the values, so this one class writes
    and reads itself (its entries through the declared :class:`Saving`).
    """

    tokens: Saving | None
    usd: Saving | None
    latency_ms: Saving | None
    tool_calls: Saving | None
    net: tuple[Literal["tokens", "usd", "latency_ms"], ...]
    gross_tokens: Saving | None
    gross_usd: Saving | None
    gross_latency_ms: Saving | None
    tokens_per_resolved: PerResolvedSaving | None
    usd_per_resolved: PerResolvedSaving | None

    def series(self) -> tuple[tuple[str, Saving | None], ...]:
        """Every reported series by its key: headline metrics, then the gross ones."""
        out: list[tuple[str, Saving | None]] = [
            (m, getattr(self, m)) for m in HEADLINE_METRICS]
        out += [(f"gross_{m}", getattr(self, f"gross_{m}")) for m in GROSS_METRICS
                if m in self.net]
        return tuple(out)

    def to_json(self, decimals: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        rows = self.series()
        for key, entry in rows:
            if entry is not None:
                out[key] = entry.to_json(_TOTAL_PLACES.get(key.removeprefix("gross_"), 6))
        for key, entry in rows:
            if entry is None:
                out[key] = None
        tpr, upr = self.tokens_per_resolved, self.usd_per_resolved
        out["tokens_per_resolved"] = None if tpr is None else tpr.to_json(4)
        out["usd_per_resolved"] = None if upr is None else upr.to_json(6)
        return out

    def as_written(self, decimals: int | None = None) -> Self:
        def places(key: str) -> int:
            return _TOTAL_PLACES.get(key.removeprefix("gross_"), 6)

        entries: dict[str, Any] = {
            key: None if entry is None else entry.as_written(places(key))
            for key, entry in self.series()}
        tpr, upr = self.tokens_per_resolved, self.usd_per_resolved
        return replace(self, **entries,
                       tokens_per_resolved=None if tpr is None else tpr.as_written(4),
                       usd_per_resolved=None if upr is None else upr.as_written(6))

    @classmethod
    def from_json(cls, node: Node) -> Self:
        gross_keys = tuple(f"gross_{m}" for m in GROSS_METRICS)
        node.closed((*HEADLINE_METRICS, *gross_keys, "tokens_per_resolved",
                     "usd_per_resolved"), cls.json_owner)
        obj = cast(dict[str, Any], node.value)
        net = tuple(m for m in GROSS_METRICS if f"gross_{m}" in obj)
        read: dict[str, Saving | None] = {}
        for key in (*HEADLINE_METRICS, *(f"gross_{m}" for m in net)):
            member = node.at(key)
            read[key] = None if member.value is None else Saving.from_json(member)
        for metric in HEADLINE_METRICS:
            entry = read[metric]
            want = "net" if metric in net else "agent"
            if entry is not None and entry.basis != want:
                raise PointerError(node.path, pointer_join(node.pointer, metric, "basis"),
                                   f"expected {want!r} ({'a' if want == 'net' else 'no'} "
                                   f"gross_{metric} member beside it), got {entry.basis!r}")
        ratios = {key: None if node.at(key).value is None
                  else PerResolvedSaving.from_json(node.at(key))
                  for key in ("tokens_per_resolved", "usd_per_resolved")}
        return cls(
            tokens=read["tokens"], usd=read["usd"], latency_ms=read["latency_ms"],
            tool_calls=read["tool_calls"],
            net=cast(tuple[Literal["tokens", "usd", "latency_ms"], ...], net),
            gross_tokens=read.get("gross_tokens"), gross_usd=read.get("gross_usd"),
            gross_latency_ms=read.get("gross_latency_ms"),
            tokens_per_resolved=ratios["tokens_per_resolved"],
            usd_per_resolved=ratios["usd_per_resolved"])


@dataclass(frozen=True, slots=True)
class Methodology(PublicEvalModel):
    """How every number was obtained: the settings, then one sentence per method.

    ``extra`` holds members the analysis does not write (the schema allows further
    string or number members here), in document order, written after the known ones.
    """

    confidence_level: float
    bootstrap_resamples: int
    seed: int
    random_stream: str
    clustering: str
    margin_pp: float
    min_savings_percent: float
    max_false_stop_rate: float
    min_instances: int
    non_inferiority_gate: str
    savings_interval: str
    savings_gate: str
    not_gating: str
    net_savings: str
    false_stop_gate: str
    resolve_rate_interval: str
    mcnemar: str
    listed_cells: str
    savings: str
    totals: str
    missing_metrics: str
    preregistration: str
    extra: tuple[tuple[str, str | Number], ...] = extra_members()


@dataclass(frozen=True, slots=True)
class Inputs(PublicEvalModel):
    """The two input files; absent (an empty ``inputs``) when the rows came from memory."""

    baseline: InputFile | None = field(default=None, metadata=optional())
    treatment: InputFile | None = field(default=None, metadata=optional())


@dataclass(frozen=True, slots=True)
class PublicEvalReport(PublicEvalModel):
    """A paired baseline-vs-treatment comparison (``ctxbench.public-eval-report.v1``)."""

    schema_version: Literal["ctxbench.public-eval-report.v1"] = field(
        init=False, default=SCHEMA_VERSION, metadata=version())
    inputs: Inputs
    tasks: int
    cells: int
    runs_per_task: RunsPerTask
    baseline: Arm
    treatment: Arm
    quality: Quality
    false_stops: FalseStops | None
    savings: Savings
    status: Status
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    methodology: Methodology
    notes: tuple[str, ...] = omit_empty()
    """Notes a run attached to the report (left out of the JSON when there are none)."""

    SCHEMA_VERSION: ClassVar[str] = SCHEMA_VERSION

    @property
    def supported(self) -> bool:
        return self.status == "supported"

    @property
    def single_runs(self) -> bool:
        """True when every instance has one run (cells are independent pairs)."""
        return self.runs_per_task.max == 1

