"""The ``ctxbench.compile-evaluation.v1`` report as frozen dataclasses.

:func:`ctxbench.compiler.evaluation.evaluate` builds an :class:`EvaluationReport` (the rows
and the summary per strategy and budget); :func:`~ctxbench.compiler.evaluation.
render_evaluation` reads one. ``report.to_json()`` is the document ``ctxbench compile
evaluate --output`` writes; ``EvaluationReport.from_json(Node(path, "", document))`` reads
one back and names the JSON pointer of any missing, mistyped or unknown member (the schema
has ``additionalProperties: false`` throughout); another ``schema_version`` is refused
first. Floats are kept as computed and rounded only when written (rows: recall to 4 places,
latency to 3; summary: 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final, Literal

from ctxbench.core.jsonmodel import JsonModel, rounded

__all__ = ["EVALUATION_SCHEMA", "EvaluationReport", "EvaluationRow", "SummaryRow"]

EVALUATION_SCHEMA: Final = "ctxbench.compile-evaluation.v1"


@dataclass(frozen=True, slots=True)
class EvaluationRow(JsonModel):
    """One task, one budget, one strategy."""

    task_id: str
    budget: int
    strategy: str
    answer_present: bool
    required_recall: float = field(metadata=rounded(4))
    tokens: int
    header_tokens: int
    over_budget: bool
    restricted_bytes: int
    latency_ms: float = field(metadata=rounded(3))


@dataclass(frozen=True, slots=True)
class SummaryRow(JsonModel):
    """One strategy at one budget over every task: counts, rates, means, latency."""

    strategy: str
    budget: int
    tasks: int
    answer_present: int
    answer_present_rate: float = field(metadata=rounded(4))
    required_recall: float = field(metadata=rounded(4))
    mean_tokens: float = field(metadata=rounded(4))
    header_share: float = field(metadata=rounded(4))
    over_budget: int
    restricted_bytes: int
    latency_ms_p50: float = field(metadata=rounded(4))
    latency_ms_p99: float = field(metadata=rounded(4))


@dataclass(frozen=True, slots=True)
class EvaluationReport(JsonModel):
    """Rows in (task, budget, strategy) order and their summary, with the benchmark and
    tokenizer named."""

    VERSION: ClassVar[str] = EVALUATION_SCHEMA  # the schema this model reads and writes

    schema_version: Literal["ctxbench.compile-evaluation.v1"]
    benchmark_id: str
    tokenizer: str
    strategies: tuple[str, ...]
    budgets: tuple[int, ...]
    summary: tuple[SummaryRow, ...]
    rows: tuple[EvaluationRow, ...]
