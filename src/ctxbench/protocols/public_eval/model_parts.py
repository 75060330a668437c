"""The parts of a public-eval report model: inputs, arms, the quality gate, false stops.

Each class is a frozen, slotted :class:`~ctxbench.core.jsonmodel.JsonModel` whose fields
are the JSON members of ``ctxbench.public-eval-report.v1`` in order, each with the
decimals it is written with (``rounded``: there and only there). Values are held at full
precision when built by the analysis; a model read from a file holds the file's rounded
values. An undefined statistic is ``None``, never NaN. The top-level document is
:class:`ctxbench.protocols.public_eval.model.PublicEvalReport`. No numpy here, so that
reading and rendering a report stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxbench.core.jsonmodel import optional, rounded, significant
from ctxbench.protocols.public_eval.model_io import Basis, Bounds, PublicEvalModel

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
class InputFile(PublicEvalModel):
    """One input row file: its name (not its directory), digest, rows, fields not used."""

    file: str
    blake3: str
    rows: int
    read_and_ignored: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunsPerTask(PublicEvalModel):
    min: int
    max: int


@dataclass(frozen=True, slots=True)
class ResolveRate(PublicEvalModel):
    """Share of cells resolved with its Wilson score interval (6 decimals)."""

    estimate: float = field(metadata=rounded(6))
    ci: Bounds = field(metadata=rounded(6))
    method: Literal["wilson"] = "wilson"


@dataclass(frozen=True, slots=True)
class TokenBreakdown(PublicEvalModel):
    """Totals of the token breakdown fields; None where some row lacks the field."""

    input_tokens: int | None
    cached_input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    total_tokens: int | None


@dataclass(frozen=True, slots=True)
class Governance(PublicEvalModel):
    """Totals of the intervention's own overhead and review fields (USD 6, ms 3 decimals)."""

    repeated_calls: int | None
    governance_tokens: int | None
    governance_usd: float | None = field(metadata=rounded(6))
    governance_latency_ms: float | None = field(metadata=rounded(3))
    reviewed_stops: int | None
    false_stops: int | None


@dataclass(frozen=True, slots=True)
class PerResolved(PublicEvalModel):
    """An arm's total per resolved cell with its percentile bootstrap interval (written
    with the decimals of the arm's field that holds it)."""

    basis: Basis
    estimate: float
    ci: Bounds | None


@dataclass(frozen=True, slots=True)
class Arm(PublicEvalModel):
    """One arm's totals (agent only), resolve rate, breakdowns and per-resolved ratios.

    ``tokens`` and ``tool_calls`` are exact ints; ``usd`` (6 decimals) and ``latency_ms``
    (3) are floats; a total is None when some row did not measure it (never 0).
    """

    name: str
    resolved: int
    resolve_rate: ResolveRate
    tokens: int
    usd: float | None = field(metadata=rounded(6))
    latency_ms: float | None = field(metadata=rounded(3))
    tool_calls: int | None
    token_breakdown: TokenBreakdown | None
    governance: Governance | None
    tokens_per_resolved: PerResolved | None = field(metadata=rounded(4))
    usd_per_resolved: PerResolved | None = field(metadata=rounded(6))


@dataclass(frozen=True, slots=True)
class ChangedCell(PublicEvalModel):
    instance_id: str
    run: int


@dataclass(frozen=True, slots=True)
class ChangedCells(PublicEvalModel):
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


@dataclass(frozen=True, slots=True)
class NotGating(PublicEvalModel):
    """Intervals and criteria reported for comparison only; never used for the status."""

    bootstrap_ci_pp: Bounds | None = field(metadata=rounded(4))
    bootstrap_method: str
    newcombe_hybrid_score_ci_pp: Bounds | None = field(metadata=rounded(4))
    point_estimate_within_margin: bool
    point_estimate_criterion: str


@dataclass(frozen=True, slots=True)
class QualityOutcome(PublicEvalModel):
    """Why the quality gate was not shown non-inferior: what its interval showed.

    ``loss_shown``: the interval lies wholly below ``-margin_pp``; ``inconclusive``: it
    straddles it, with ``supported_margin_pp`` (the margin this study could have
    supported: minus the lower bound) and ``instances_needed``, about how many instances
    the declared margin needs for ``power`` if the truth were the estimate (None: the
    estimate is itself beyond the margin).
    """

    kind: Literal["loss_shown", "inconclusive"]
    supported_margin_pp: float = field(metadata=rounded(4))
    instances_needed: int | None
    power: float


@dataclass(frozen=True, slots=True)
class Quality(PublicEvalModel):
    """The resolve-rate delta, its gating score interval and the flags read from it.

    ``non_inferior`` and ``shows_loss`` were decided on the unrounded bounds when the
    report was built; they are carried, never re-derived from the written bounds.
    """

    resolved_delta_pp: float = field(metadata=rounded(4))
    gate_ci_pp: tuple[float, float] = field(metadata=rounded(4))
    gate_method: str
    design_effect: float | None = field(metadata=rounded(6))
    margin_pp: float
    non_inferior: bool
    shows_loss: bool
    non_inferiority_gate: str
    regressions: int
    recoveries: int
    regressed_cells: ChangedCells
    recovered_cells: ChangedCells
    mcnemar_p: float = field(metadata=significant(6))
    not_gating: NotGating
    outcome: QualityOutcome | None = field(default=None, metadata=optional())
    """Absent when non-inferior, and in reports written before outcomes existed."""


@dataclass(frozen=True, slots=True)
class FalseStops(PublicEvalModel):
    """Treatment false stops among reviewed stops, with a Wilson interval (6 decimals).

    ``exceeds_max`` was decided on the unrounded rate when the report was built.
    """

    reviewed_stops: int
    false_stops: int
    rate: float = field(metadata=rounded(6))
    ci: tuple[float, float] = field(metadata=rounded(6))
    ci_method: str
    max_rate: float
    exceeds_max: bool
