"""The typed ``ctxbench.public-eval-report.v1`` document: what the analysis returns.

:func:`ctxbench.protocols.public_eval.analysis.analyze` builds a :class:`PublicEvalReport`
at full precision; ``to_json()`` writes the schema's JSON (rounding to its declared
decimals happens there and only there); ``PublicEvalReport.from_json(node)`` reads a
decoded ``report.json`` back, every missing, mistyped or unknown field raising a
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

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, cast

from ctxbench.core import PointerError, describe_value, pointer_join
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval.model_io import (
    Basis,
    Bounds,
    Number,
    basis,
    choice,
    nullable,
    only,
    opt_bounds,
    opt_number,
    rounded,
    rounded_bounds,
    rounded_total,
    texts,
)
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
class Saving:
    """One savings comparison: totals, percent saved, the studentized gate and more.

    Totals of integer metrics are exact ints; ``gate_lower_bound`` is what the token
    gate reads (unrounded when built by the analysis).
    """

    basis: Basis
    baseline_total: Number | None
    treatment_total: Number | None
    percent_saved: float | None
    ci: Bounds | None
    gate_lower_bound: float | None
    percentile_ci_not_gating: Bounds | None
    undefined_resamples: int

    def to_json(self, total_places: int) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "baseline_total": rounded_total(self.baseline_total, total_places),
            "treatment_total": rounded_total(self.treatment_total, total_places),
            "percent_saved": rounded(self.percent_saved, 4),
            "ci": rounded_bounds(self.ci, 4),
            "gate_lower_bound": rounded(self.gate_lower_bound, 4),
            "percentile_ci_not_gating": rounded_bounds(self.percentile_ci_not_gating, 4),
            "undefined_resamples": self.undefined_resamples,
        }

    @classmethod
    def from_json(cls, node: Node) -> Saving:
        only(node, ("basis", "baseline_total", "treatment_total", "percent_saved", "ci",
                    "gate_lower_bound", "percentile_ci_not_gating", "undefined_resamples"))
        return cls(basis=basis(node.at("basis")),
                   baseline_total=opt_number(node, "baseline_total"),
                   treatment_total=opt_number(node, "treatment_total"),
                   percent_saved=node.on("percent_saved"), ci=opt_bounds(node, "ci"),
                   gate_lower_bound=node.on("gate_lower_bound"),
                   percentile_ci_not_gating=opt_bounds(node, "percentile_ci_not_gating"),
                   undefined_resamples=node.i("undefined_resamples"))


@dataclass(frozen=True, slots=True)
class PerResolvedSaving:
    """Percent saved on a per-resolved-task ratio; its percentile interval does not gate."""

    basis: Basis
    baseline: float
    treatment: float
    percent_saved: float | None
    percentile_ci_not_gating: Bounds | None
    undefined_resamples: int

    def to_json(self, places: int) -> dict[str, Any]:
        return {"basis": self.basis, "baseline": rounded(self.baseline, places),
                "treatment": rounded(self.treatment, places),
                "percent_saved": rounded(self.percent_saved, 4),
                "percentile_ci_not_gating": rounded_bounds(self.percentile_ci_not_gating, 4),
                "undefined_resamples": self.undefined_resamples}

    @classmethod
    def from_json(cls, node: Node) -> PerResolvedSaving:
        only(node, ("basis", "baseline", "treatment", "percent_saved",
                    "percentile_ci_not_gating", "undefined_resamples"))
        return cls(basis=basis(node.at("basis")), baseline=node.n("baseline"),
                   treatment=node.n("treatment"), percent_saved=node.on("percent_saved"),
                   percentile_ci_not_gating=opt_bounds(node, "percentile_ci_not_gating"),
                   undefined_resamples=node.i("undefined_resamples"))


@dataclass(frozen=True, slots=True)
class Savings:
    """Headline savings per metric (net where overhead is recorded), gross, per resolved.

    ``net`` names the metrics whose rows record governance overhead: their headline entry
    is net and a ``gross_<metric>`` member is reported beside it (null when unmeasured);
    other metrics have no ``gross_`` member at all. An entry is None when its metric is
    not measured in every row. JSON order: the measured series (headline then gross),
    then the unmeasured ones, then the per-resolved ratios, as the analysis writes them.
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

    def to_json(self) -> dict[str, Any]:
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

    @classmethod
    def from_json(cls, node: Node) -> Savings:
        gross_keys = tuple(f"gross_{m}" for m in GROSS_METRICS)
        only(node, (*HEADLINE_METRICS, *gross_keys, "tokens_per_resolved", "usd_per_resolved"))
        obj = cast(dict[str, Any], node.value)
        net = tuple(m for m in GROSS_METRICS if f"gross_{m}" in obj)
        read: dict[str, Saving | None] = {}
        for key in (*HEADLINE_METRICS, *(f"gross_{m}" for m in net)):
            member = nullable(node, key)
            read[key] = None if member is None else Saving.from_json(member)
        for metric in HEADLINE_METRICS:
            entry = read[metric]
            want = "net" if metric in net else "agent"
            if entry is not None and entry.basis != want:
                raise PointerError(node.path, pointer_join(node.pointer, metric, "basis"),
                                   f"expected {want!r} ({'a' if want == 'net' else 'no'} "
                                   f"gross_{metric} member beside it), got {entry.basis!r}")
        tpr, upr = nullable(node, "tokens_per_resolved"), nullable(node, "usd_per_resolved")
        return cls(
            tokens=read["tokens"], usd=read["usd"], latency_ms=read["latency_ms"],
            tool_calls=read["tool_calls"],
            net=cast(tuple[Literal["tokens", "usd", "latency_ms"], ...], net),
            gross_tokens=read.get("gross_tokens"), gross_usd=read.get("gross_usd"),
            gross_latency_ms=read.get("gross_latency_ms"),
            tokens_per_resolved=None if tpr is None else PerResolvedSaving.from_json(tpr),
            usd_per_resolved=None if upr is None else PerResolvedSaving.from_json(upr))


@dataclass(frozen=True, slots=True)
class Methodology:
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
    extra: tuple[tuple[str, str | Number], ...] = ()

    _NUMBERS: ClassVar[tuple[str, ...]] = ("confidence_level", "margin_pp",
                                           "min_savings_percent", "max_false_stop_rate")
    _INTEGERS: ClassVar[tuple[str, ...]] = ("bootstrap_resamples", "seed", "min_instances")

    @classmethod
    def known_members(cls) -> tuple[str, ...]:
        """The known members, in the order they are written."""
        return tuple(f.name for f in fields(cls) if f.name != "extra")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in self.known_members()}
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, node: Node) -> Methodology:
        known = cls.known_members()
        values: dict[str, Any] = {}
        for name in known:
            if name in cls._NUMBERS:
                values[name] = node.n(name)
            elif name in cls._INTEGERS:
                values[name] = node.i(name)
            else:
                values[name] = node.s(name)
        extra: list[tuple[str, str | Number]] = []
        for key, member in node.entries():
            if key in known:
                continue
            if isinstance(member.value, bool) or not isinstance(member.value, str | int | float):
                raise member.fail("a string or a number")
            extra.append((key, member.value))
        return cls(**values, extra=tuple(extra))


@dataclass(frozen=True, slots=True)
class Inputs:
    """The two input files; absent (an empty ``inputs``) when the rows came from memory."""

    baseline: InputFile | None = None
    treatment: InputFile | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.baseline is not None:
            out["baseline"] = self.baseline.to_json()
        if self.treatment is not None:
            out["treatment"] = self.treatment.to_json()
        return out

    @classmethod
    def from_json(cls, node: Node) -> Inputs:
        only(node, ("baseline", "treatment"))
        obj = cast(dict[str, Any], node.value)
        return cls(*(InputFile.from_json(node.at(side)) if side in obj else None
                     for side in ("baseline", "treatment")))


@dataclass(frozen=True, slots=True)
class PublicEvalReport:
    """A paired baseline-vs-treatment comparison (``ctxbench.public-eval-report.v1``)."""

    SCHEMA_VERSION: ClassVar[str] = SCHEMA_VERSION

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
    notes: tuple[str, ...] = ()
    """Notes a run attached to the report (left out of the JSON when there are none)."""

    @property
    def supported(self) -> bool:
        return self.status == "supported"

    @property
    def single_runs(self) -> bool:
        """True when every instance has one run (cells are independent pairs)."""
        return self.runs_per_task.max == 1

    def to_json(self) -> dict[str, Any]:
        """The report document, rounded to the schema's decimals, in the written key order."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "inputs": self.inputs.to_json(),
            "tasks": self.tasks,
            "cells": self.cells,
            "runs_per_task": self.runs_per_task.to_json(),
            "baseline": self.baseline.to_json(),
            "treatment": self.treatment.to_json(),
            "quality": self.quality.to_json(),
            "false_stops": None if self.false_stops is None else self.false_stops.to_json(),
            "savings": self.savings.to_json(),
            "status": self.status,
            "reasons": list(self.reasons),
            "warnings": list(self.warnings),
            "methodology": self.methodology.to_json(),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def as_written(self) -> PublicEvalReport:
        """The report as a reader of its JSON sees it: every value rounded as written."""
        return PublicEvalReport.from_json(Node("report", "", self.to_json()))

    @classmethod
    def from_json(cls, node: Node) -> PublicEvalReport:
        """Read a decoded report; a missing, mistyped or unknown field raises PointerError."""
        version = node.at("schema_version")
        if version.value != SCHEMA_VERSION:
            raise PointerError(node.path, version.pointer,
                               f"expected {SCHEMA_VERSION!r} (the version this ctxbench "
                               f"reads), got {describe_value(version.value)}")
        only(node, ("schema_version", "inputs", "tasks", "cells", "runs_per_task",
                    "baseline", "treatment", "quality", "false_stops", "savings", "status",
                    "reasons", "warnings", "methodology", "notes"))
        stops = nullable(node, "false_stops")
        notes = node.opt("notes")
        return cls(
            inputs=Inputs.from_json(node.at("inputs")), tasks=node.i("tasks"),
            cells=node.i("cells"), runs_per_task=RunsPerTask.from_json(node.at("runs_per_task")),
            baseline=Arm.from_json(node.at("baseline")),
            treatment=Arm.from_json(node.at("treatment")),
            quality=Quality.from_json(node.at("quality")),
            false_stops=None if stops is None else FalseStops.from_json(stops),
            savings=Savings.from_json(node.at("savings")),
            status=cast(Status, choice(node.at("status"), STATUSES)),
            reasons=texts(node.at("reasons")), warnings=texts(node.at("warnings")),
            methodology=Methodology.from_json(node.at("methodology")),
            notes=() if notes is None else texts(notes))
