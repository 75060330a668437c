"""The ``symgliph.eceb/report-v0.1`` document as frozen dataclasses, top to bottom.

:func:`~ctxbench.protocols.eceb.analysis.evaluate` builds a :class:`Report`; the Markdown
and HTML renderers read one. Each class declares its members in document order, so
``report.to_json()`` is the report.json byte for byte (via ``report_json_bytes``) and
``Report.from_json(Node(path, "", document))`` reads one back, naming the JSON pointer of
any missing, mistyped or unknown member (the schema has ``additionalProperties: false``
everywhere except the identity objects, so an unknown member is an error, not ignored).
A document of another ``schema`` (an older or newer ECEB report) is refused before any
other member is read.

Means are exact :class:`~fractions.Fraction` values here and are rounded (3 decimals, or an
integer when whole) only when written. Nothing in this module decides anything: gate
statuses come from :func:`~ctxbench.protocols.eceb.gates.evaluate_group`, the minimum
viable budget, each task's qualification and the claim class from
:mod:`ctxbench.protocols.eceb.analysis`; the model carries them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Literal, Self

from ctxbench.core.errors import PointerError
from ctxbench.core.jsonmodel import JsonModel, json_number, omit_empty
from ctxbench.core.node import Node
from ctxbench.protocols.eceb.records import (
    REPORT_SCHEMA,
    ClaimName,
    Scalar,
    Scalars,
    StrategyName,
)

__all__ = [
    "GATES",
    "Aggregate",
    "Aggregates",
    "Baseline",
    "BudgetRow",
    "ClaimClass",
    "ClaimName",
    "Corpus",
    "Failure",
    "FailureCode",
    "GateName",
    "GateStatus",
    "Gates",
    "Identities",
    "QualifiedTasks",
    "Report",
    "Scalar",
    "Scalars",
    "StrategyName",
    "StrategyResult",
    "Summary",
    "Task",
    "TrustBoundary",
    "shown",
]

GateName = Literal["repetitions", "budget", "quality", "answer_terms", "provenance", "policy",
                   "repeatability"]
GateStatus = Literal["pass", "fail", "not_applicable"]
FailureCode = Literal["missing_repetition", "budget_overflow", "quality_below_floor",
                      "missing_answer_term", "stale_digest", "required_not_selected",
                      "unknown_artifact", "disallowed_classification", "denied_artifact",
                      "context_mismatch"]
# The seven mandatory gates of §11, in the order every table shows them.
GATES: tuple[GateName, ...] = ("repetitions", "budget", "quality", "answer_terms",
                               "provenance", "policy", "repeatability")


def shown(value: Fraction | None) -> int | float | None:
    """A mean as the report writes it (integer when whole, else 3 decimals)."""
    return json_number(value, Report.json_decimals)


@dataclass(frozen=True, slots=True)
class Failure(JsonModel):
    """One failed assertion: which gate, a stable code, a message, where it happened."""

    strategy: StrategyName
    budget: int | None
    repetition: int | None
    gate: GateName
    code: FailureCode
    message: str
    artifact_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Gates(JsonModel):
    """The status of each of the seven gates (§11) for one group, in gate order."""

    repetitions: GateStatus
    budget: GateStatus
    quality: GateStatus
    answer_terms: GateStatus
    provenance: GateStatus
    policy: GateStatus
    repeatability: GateStatus

    def status(self, gate: str) -> GateStatus:
        """The status of the gate named ``gate``."""
        value: GateStatus = getattr(self, gate)
        return value

    def items(self) -> tuple[tuple[GateName, GateStatus], ...]:
        return (("repetitions", self.repetitions), ("budget", self.budget),
                ("quality", self.quality), ("answer_terms", self.answer_terms),
                ("provenance", self.provenance), ("policy", self.policy),
                ("repeatability", self.repeatability))


@dataclass(frozen=True, slots=True)
class BudgetRow(JsonModel):
    """One rung of a strategy's budget ladder on one task."""

    budget: int
    observations: int
    passed: bool
    gates: Gates
    mean_input_tokens: Fraction | None
    min_quality_milli: int | None
    provenance_coverage_bps: int | None
    policy_violations: int
    provenance_failures: int
    repeatable: bool
    failures: int


@dataclass(frozen=True, slots=True)
class StrategyResult(JsonModel):
    """One evaluated strategy on one task: its ladder, minimum viable budget and savings."""

    qualified: bool
    minimum_viable_budget: int | None
    candidate_budget: int
    baseline_input_tokens: Fraction | None
    compiled_input_tokens: Fraction | None
    token_savings_bps: int | None
    baseline_cost_micro_usd: Fraction | None
    compiled_cost_micro_usd: Fraction | None
    cost_savings_bps: int | None
    compiled_quality_milli: int | None
    provenance_coverage_bps: int | None
    policy_violations: int
    provenance_failures: int
    repeatable: bool
    budgets: tuple[BudgetRow, ...]
    failures: tuple[Failure, ...]


@dataclass(frozen=True, slots=True)
class Baseline(JsonModel):
    """The full_permitted_context group of one task (it sets the quality floor)."""

    repetitions: int
    passed: bool
    gates: Gates
    quality_milli: int | None
    mean_input_tokens: Fraction | None
    mean_cost_micro_usd: Fraction | None
    policy_violations: int
    provenance_failures: int
    repeatable: bool
    failures: tuple[Failure, ...]


@dataclass(frozen=True, slots=True)
class Task(JsonModel):
    """One task: the compiled strategy's result (flat, as written), baseline and naive_top_k.

    ``policy_violations``, ``provenance_failures`` and ``failures`` cover the baseline and
    compiled groups together (the baseline's failures first).
    """

    task_id: str
    expect_abstention: bool
    budget_ladder: tuple[int, ...]
    required_repetitions: int
    qualified: bool
    minimum_viable_budget: int | None
    candidate_budget: int
    baseline_input_tokens: Fraction | None
    compiled_input_tokens: Fraction | None
    token_savings_bps: int | None
    baseline_cost_micro_usd: Fraction | None
    compiled_cost_micro_usd: Fraction | None
    cost_savings_bps: int | None
    compiled_quality_milli: int | None
    provenance_coverage_bps: int | None
    policy_violations: int
    provenance_failures: int
    repeatable: bool
    budgets: tuple[BudgetRow, ...]
    baseline_quality_milli: int | None
    floor_quality_milli: int
    failures: tuple[Failure, ...]
    baseline: Baseline
    naive_top_k: StrategyResult | None


@dataclass(frozen=True, slots=True)
class QualifiedTasks(JsonModel):
    numerator: int
    denominator: int


@dataclass(frozen=True, slots=True)
class Aggregate(JsonModel):
    """Totals of one strategy over every task (savings over qualifying tasks only)."""

    qualified_tasks: QualifiedTasks
    mean_token_savings_bps: int | None
    token_savings_bps_sum: int
    mean_cost_savings_bps: int | None
    cost_savings_bps_sum: int
    cost_savings_tasks: int
    policy_violations: int
    provenance_failures: int
    failures: int


@dataclass(frozen=True, slots=True)
class Aggregates(JsonModel):
    """Per strategy; None when the strategy was not run on any task."""

    compiled: Aggregate | None
    naive_top_k: Aggregate | None

    def items(self) -> tuple[tuple[str, Aggregate | None], ...]:
        return (("compiled", self.compiled), ("naive_top_k", self.naive_top_k))


@dataclass(frozen=True, slots=True)
class ClaimClass(JsonModel):
    """The claim class reported (never stronger than the run's or the benchmark's)."""

    reported: ClaimName
    run: ClaimName
    benchmark: ClaimName
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TrustBoundary(JsonModel):
    statement: str
    quality_rederived: Literal[False]
    judge: Scalars


@dataclass(frozen=True, slots=True)
class Identities(JsonModel):
    system: Scalars
    model: Scalars
    tokenizer: Scalars
    pricing: Scalars
    decoding: Scalars

    def items(self) -> tuple[tuple[str, Scalars], ...]:
        return (("system", self.system), ("model", self.model), ("tokenizer", self.tokenizer),
                ("pricing", self.pricing), ("decoding", self.decoding))


@dataclass(frozen=True, slots=True)
class Corpus(JsonModel):
    root: str
    artifacts: int
    bytes_verified: int
    verified: Literal[True]


@dataclass(frozen=True, slots=True)
class Summary(JsonModel):
    tasks: int
    qualified: int
    all_qualified: bool
    observations: int



@dataclass(frozen=True, slots=True)
class Report(JsonModel):
    """An ECEB-0.1 evaluation report (``schema`` is its version; see the module docstring).

    ``notes`` (what the run attached, e.g. that it ran on the fixture provider) comes last
    and is left out of the document when there is none.
    """

    VERSION: ClassVar[str] = REPORT_SCHEMA  # the schema this model reads and writes

    schema: Literal["symgliph.eceb/report-v0.1"]
    spec: Literal["urn:symgliph:spec:eceb:0.1"]
    benchmark_id: str
    run_id: str
    claim_class: ClaimClass
    trust_boundary: TrustBoundary
    identities: Identities
    corpus: Corpus
    gates: tuple[GateName, ...]
    summary: Summary
    aggregate: Aggregates
    tasks: tuple[Task, ...]
    notes: tuple[str, ...] = omit_empty()

    @classmethod
    def from_json(cls, node: Node) -> Self:
        if not isinstance(node.value, dict):
            raise node.fail("an object")
        if node.value.get("schema") != cls.VERSION:
            # A report of another ECEB version is refused as such, before any other member
            # could be misread under this version's layout.
            raise node.at("schema").fail(f'"{cls.VERSION}" (an ECEB-0.1 report)')
        report = super(Report, cls).from_json(node)
        if report.gates != GATES:
            raise node.at("gates").fail("the seven gates in §11 order: "
                                        + ", ".join(GATES))
        if node.value.get("notes") == []:
            raise PointerError(node.path, "/notes", "expected at least one note (the member "
                               "is left out when there is none), got an empty array")
        for k, note in enumerate(report.notes):
            if not note:
                raise PointerError(node.path, f"/notes/{k}", "expected a non-empty note, got "
                                   "the empty string")
        return report
