"""The parts of a public-eval report model: inputs, arms, the quality gate, false stops.

Each class is a frozen, slotted dataclass with ``to_json()`` (the exact JSON members of
``ctxbench.public-eval-report.v1``, rounded to the schema's decimals there and only
there) and ``from_json(node)`` (a located read through :class:`ctxbench.core.node.Node`).
Values are held at full precision when built by the analysis; a model read from a file
holds the file's rounded values. An undefined statistic is ``None``, never NaN. The
top-level document is :class:`ctxbench.protocols.public_eval.model.PublicEvalReport`.
No numpy here, so that reading and rendering a report stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ctxbench.core.node import Node
from ctxbench.protocols.public_eval.model_io import (
    Basis,
    Bounds,
    basis,
    bounds,
    choice,
    nullable,
    only,
    opt_bounds,
    rounded,
    rounded_bounds,
    significant,
    strict_bounds,
    texts,
)

__all__ = [
    "Arm",
    "ChangedCell",
    "ChangedCells",
    "FalseStops",
    "Governance",
    "InputFile",
    "NotGating",
    "PerResolved",
    "Quality",
    "QualityOutcome",
    "ResolveRate",
    "RunsPerTask",
    "TokenBreakdown",
]

@dataclass(frozen=True, slots=True)
class InputFile:
    """One input row file: its name (not its directory), digest, rows, fields not used."""

    file: str
    blake3: str
    rows: int
    read_and_ignored: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "blake3": self.blake3, "rows": self.rows,
                "read_and_ignored": list(self.read_and_ignored)}

    @classmethod
    def from_json(cls, node: Node) -> InputFile:
        only(node, ("file", "blake3", "rows", "read_and_ignored"))
        return cls(file=node.s("file"), blake3=node.s("blake3"), rows=node.i("rows"),
                   read_and_ignored=texts(node.at("read_and_ignored")))


@dataclass(frozen=True, slots=True)
class RunsPerTask:
    min: int
    max: int

    def to_json(self) -> dict[str, Any]:
        return {"min": self.min, "max": self.max}

    @classmethod
    def from_json(cls, node: Node) -> RunsPerTask:
        only(node, ("min", "max"))
        return cls(min=node.i("min"), max=node.i("max"))


@dataclass(frozen=True, slots=True)
class ResolveRate:
    """Share of cells resolved with its Wilson score interval (6 decimals)."""

    estimate: float
    ci: Bounds
    method: Literal["wilson"] = "wilson"

    def to_json(self) -> dict[str, Any]:
        return {"estimate": rounded(self.estimate, 6), "ci": rounded_bounds(self.ci, 6),
                "method": self.method}

    @classmethod
    def from_json(cls, node: Node) -> ResolveRate:
        only(node, ("estimate", "ci", "method"))
        choice(node.at("method"), ("wilson",))
        return cls(estimate=node.n("estimate"), ci=bounds(node.at("ci")))


@dataclass(frozen=True, slots=True)
class TokenBreakdown:
    """Totals of the token breakdown fields; None where some row lacks the field."""

    input_tokens: int | None
    cached_input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    total_tokens: int | None

    def to_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens,
                "cached_input_tokens": self.cached_input_tokens,
                "output_tokens": self.output_tokens, "reasoning_tokens": self.reasoning_tokens,
                "total_tokens": self.total_tokens}

    @classmethod
    def from_json(cls, node: Node) -> TokenBreakdown:
        names = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens",
                 "total_tokens")
        only(node, names)
        a, b, c, d, e = (node.oi(name) for name in names)
        return cls(a, b, c, d, e)


@dataclass(frozen=True, slots=True)
class Governance:
    """Totals of the intervention's own overhead and review fields (USD 6, ms 3 decimals)."""

    repeated_calls: int | None
    governance_tokens: int | None
    governance_usd: float | None
    governance_latency_ms: float | None
    reviewed_stops: int | None
    false_stops: int | None

    def to_json(self) -> dict[str, Any]:
        return {"repeated_calls": self.repeated_calls,
                "governance_tokens": self.governance_tokens,
                "governance_usd": rounded(self.governance_usd, 6),
                "governance_latency_ms": rounded(self.governance_latency_ms, 3),
                "reviewed_stops": self.reviewed_stops, "false_stops": self.false_stops}

    @classmethod
    def from_json(cls, node: Node) -> Governance:
        only(node, ("repeated_calls", "governance_tokens", "governance_usd",
                    "governance_latency_ms", "reviewed_stops", "false_stops"))
        return cls(repeated_calls=node.oi("repeated_calls"),
                   governance_tokens=node.oi("governance_tokens"),
                   governance_usd=node.on("governance_usd"),
                   governance_latency_ms=node.on("governance_latency_ms"),
                   reviewed_stops=node.oi("reviewed_stops"), false_stops=node.oi("false_stops"))


@dataclass(frozen=True, slots=True)
class PerResolved:
    """An arm's total per resolved cell with its percentile bootstrap interval."""

    basis: Basis
    estimate: float
    ci: Bounds | None

    def to_json(self, places: int) -> dict[str, Any]:
        return {"basis": self.basis, "estimate": rounded(self.estimate, places),
                "ci": rounded_bounds(self.ci, places)}

    @classmethod
    def from_json(cls, node: Node) -> PerResolved:
        only(node, ("basis", "estimate", "ci"))
        return cls(basis=basis(node.at("basis")), estimate=node.n("estimate"),
                   ci=opt_bounds(node, "ci"))


@dataclass(frozen=True, slots=True)
class Arm:
    """One arm's totals (agent only), resolve rate, breakdowns and per-resolved ratios.

    ``tokens`` and ``tool_calls`` are exact ints; ``usd`` (6 decimals) and ``latency_ms``
    (3) are floats; a total is None when some row did not measure it (never 0).
    """

    name: str
    resolved: int
    resolve_rate: ResolveRate
    tokens: int
    usd: float | None
    latency_ms: float | None
    tool_calls: int | None
    token_breakdown: TokenBreakdown | None
    governance: Governance | None
    tokens_per_resolved: PerResolved | None
    usd_per_resolved: PerResolved | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "resolved": self.resolved,
            "resolve_rate": self.resolve_rate.to_json(),
            "tokens": self.tokens,
            "usd": rounded(self.usd, 6),
            "latency_ms": rounded(self.latency_ms, 3),
            "tool_calls": self.tool_calls,
            "token_breakdown": None if self.token_breakdown is None
            else self.token_breakdown.to_json(),
            "governance": None if self.governance is None else self.governance.to_json(),
            "tokens_per_resolved": None if self.tokens_per_resolved is None
            else self.tokens_per_resolved.to_json(4),
            "usd_per_resolved": None if self.usd_per_resolved is None
            else self.usd_per_resolved.to_json(6),
        }

    @classmethod
    def from_json(cls, node: Node) -> Arm:
        only(node, ("name", "resolved", "resolve_rate", "tokens", "usd", "latency_ms",
                    "tool_calls", "token_breakdown", "governance", "tokens_per_resolved",
                    "usd_per_resolved"))
        breakdown, governance = nullable(node, "token_breakdown"), nullable(node, "governance")
        tpr, upr = nullable(node, "tokens_per_resolved"), nullable(node, "usd_per_resolved")
        return cls(
            name=node.s("name"), resolved=node.i("resolved"),
            resolve_rate=ResolveRate.from_json(node.at("resolve_rate")),
            tokens=node.i("tokens"), usd=node.on("usd"), latency_ms=node.on("latency_ms"),
            tool_calls=node.oi("tool_calls"),
            token_breakdown=None if breakdown is None else TokenBreakdown.from_json(breakdown),
            governance=None if governance is None else Governance.from_json(governance),
            tokens_per_resolved=None if tpr is None else PerResolved.from_json(tpr),
            usd_per_resolved=None if upr is None else PerResolved.from_json(upr))


@dataclass(frozen=True, slots=True)
class ChangedCell:
    instance_id: str
    run: int


@dataclass(frozen=True, slots=True)
class ChangedCells:
    """Regressed or recovered cells: all counted, the first ``limit`` listed in order."""

    total: int
    limit: int
    listed: tuple[ChangedCell, ...]

    def groups(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The listed cells grouped by instance, in the report's order."""
        out: list[tuple[str, list[int]]] = []
        for cell in self.listed:
            if out and out[-1][0] == cell.instance_id:
                out[-1][1].append(cell.run)
            else:
                out.append((cell.instance_id, [cell.run]))
        return tuple((iid, tuple(runs)) for iid, runs in out)

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "limit": self.limit,
                "listed": [{"instance_id": c.instance_id, "run": c.run} for c in self.listed]}

    @classmethod
    def from_json(cls, node: Node) -> ChangedCells:
        only(node, ("total", "limit", "listed"))
        listed = []
        for item in node.at("listed").items():
            only(item, ("instance_id", "run"))
            listed.append(ChangedCell(item.s("instance_id"), item.i("run")))
        return cls(total=node.i("total"), limit=node.i("limit"), listed=tuple(listed))


@dataclass(frozen=True, slots=True)
class NotGating:
    """Intervals and criteria reported for comparison only; never used for the status."""

    bootstrap_ci_pp: Bounds | None
    bootstrap_method: str
    newcombe_hybrid_score_ci_pp: Bounds | None
    point_estimate_within_margin: bool
    point_estimate_criterion: str

    def to_json(self) -> dict[str, Any]:
        return {"bootstrap_ci_pp": rounded_bounds(self.bootstrap_ci_pp, 4),
                "bootstrap_method": self.bootstrap_method,
                "newcombe_hybrid_score_ci_pp": rounded_bounds(self.newcombe_hybrid_score_ci_pp,
                                                              4),
                "point_estimate_within_margin": self.point_estimate_within_margin,
                "point_estimate_criterion": self.point_estimate_criterion}

    @classmethod
    def from_json(cls, node: Node) -> NotGating:
        only(node, ("bootstrap_ci_pp", "bootstrap_method", "newcombe_hybrid_score_ci_pp",
                    "point_estimate_within_margin", "point_estimate_criterion"))
        return cls(bootstrap_ci_pp=opt_bounds(node, "bootstrap_ci_pp"),
                   bootstrap_method=node.s("bootstrap_method"),
                   newcombe_hybrid_score_ci_pp=opt_bounds(node, "newcombe_hybrid_score_ci_pp"),
                   point_estimate_within_margin=node.b("point_estimate_within_margin"),
                   point_estimate_criterion=node.s("point_estimate_criterion"))


@dataclass(frozen=True, slots=True)
class QualityOutcome:
    """Why the quality gate was not shown non-inferior: what its interval showed.

    ``loss_shown``: the interval lies wholly below ``-margin_pp``; ``inconclusive``: it
    straddles it, with ``supported_margin_pp`` (the margin this study could have
    supported: minus the lower bound) and ``instances_needed``, about how many instances
    the declared margin needs for ``power`` if the truth were the estimate (None: the
    estimate is itself beyond the margin).
    """

    kind: Literal["loss_shown", "inconclusive"]
    supported_margin_pp: float
    instances_needed: int | None
    power: float

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind,
                "supported_margin_pp": rounded(self.supported_margin_pp, 4),
                "instances_needed": self.instances_needed, "power": self.power}

    @classmethod
    def from_json(cls, node: Node) -> QualityOutcome:
        only(node, ("kind", "supported_margin_pp", "instances_needed", "power"))
        return cls(kind=node.at("kind").one_of(("loss_shown", "inconclusive")),
                   supported_margin_pp=node.n("supported_margin_pp"),
                   instances_needed=node.oi("instances_needed"), power=node.n("power"))


@dataclass(frozen=True, slots=True)
class Quality:
    """The resolve-rate delta, its gating score interval and the flags read from it.

    ``non_inferior`` and ``shows_loss`` were decided on the unrounded bounds when the
    report was built; they are carried, never re-derived from the written bounds.
    """

    resolved_delta_pp: float
    gate_ci_pp: tuple[float, float]
    gate_method: str
    design_effect: float | None
    margin_pp: float
    non_inferior: bool
    shows_loss: bool
    non_inferiority_gate: str
    regressions: int
    recoveries: int
    regressed_cells: ChangedCells
    recovered_cells: ChangedCells
    mcnemar_p: float
    not_gating: NotGating
    outcome: QualityOutcome | None = None
    """Absent when non-inferior, and in reports written before outcomes existed."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resolved_delta_pp": rounded(self.resolved_delta_pp, 4),
            "gate_ci_pp": rounded_bounds(self.gate_ci_pp, 4),
            "gate_method": self.gate_method,
            "design_effect": rounded(self.design_effect, 6),
            "margin_pp": self.margin_pp,
            "non_inferior": self.non_inferior,
            "shows_loss": self.shows_loss,
            "non_inferiority_gate": self.non_inferiority_gate,
            "regressions": self.regressions,
            "recoveries": self.recoveries,
            "regressed_cells": self.regressed_cells.to_json(),
            "recovered_cells": self.recovered_cells.to_json(),
            "mcnemar_p": significant(self.mcnemar_p, 6),
            "not_gating": self.not_gating.to_json(),
        }
        if self.outcome is not None:
            out["outcome"] = self.outcome.to_json()
        return out

    @classmethod
    def from_json(cls, node: Node) -> Quality:
        only(node, ("resolved_delta_pp", "gate_ci_pp", "gate_method", "design_effect",
                    "margin_pp", "non_inferior", "shows_loss", "non_inferiority_gate",
                    "regressions", "recoveries", "regressed_cells", "recovered_cells",
                    "mcnemar_p", "not_gating", "outcome"))
        outcome = node.at("outcome") if "outcome" in node.value else None
        return cls(
            resolved_delta_pp=node.n("resolved_delta_pp"),
            gate_ci_pp=strict_bounds(node.at("gate_ci_pp")), gate_method=node.s("gate_method"),
            design_effect=node.on("design_effect"), margin_pp=node.n("margin_pp"),
            non_inferior=node.b("non_inferior"), shows_loss=node.b("shows_loss"),
            non_inferiority_gate=node.s("non_inferiority_gate"),
            regressions=node.i("regressions"), recoveries=node.i("recoveries"),
            regressed_cells=ChangedCells.from_json(node.at("regressed_cells")),
            recovered_cells=ChangedCells.from_json(node.at("recovered_cells")),
            mcnemar_p=node.n("mcnemar_p"), not_gating=NotGating.from_json(node.at("not_gating")),
            outcome=None if outcome is None else QualityOutcome.from_json(outcome))


@dataclass(frozen=True, slots=True)
class FalseStops:
    """Treatment false stops among reviewed stops, with a Wilson interval (6 decimals).

    ``exceeds_max`` was decided on the unrounded rate when the report was built.
    """

    reviewed_stops: int
    false_stops: int
    rate: float
    ci: tuple[float, float]
    ci_method: str
    max_rate: float
    exceeds_max: bool

    def to_json(self) -> dict[str, Any]:
        return {"reviewed_stops": self.reviewed_stops, "false_stops": self.false_stops,
                "rate": rounded(self.rate, 6), "ci": rounded_bounds(self.ci, 6),
                "ci_method": self.ci_method, "max_rate": self.max_rate,
                "exceeds_max": self.exceeds_max}

    @classmethod
    def from_json(cls, node: Node) -> FalseStops:
        only(node, ("reviewed_stops", "false_stops", "rate", "ci", "ci_method", "max_rate",
                    "exceeds_max"))
        return cls(reviewed_stops=node.i("reviewed_stops"), false_stops=node.i("false_stops"),
                   rate=node.n("rate"), ci=strict_bounds(node.at("ci")),
                   ci_method=node.s("ci_method"), max_rate=node.n("max_rate"),
                   exceeds_max=node.b("exceeds_max"))

