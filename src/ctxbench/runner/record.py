"""Assemble one ``ctxbench.trial.v1`` record from its attempts, context and scores.

:func:`build_trial` returns a frozen :class:`TrialRecord`; its ``to_json()`` is the line
the trial log writes, its members exactly and in the order of the format's one field
table, :data:`ctxbench.protocols.cef.trial_format.TRIAL_FIELDS` (the reader's side is
:mod:`ctxbench.protocols.cef.records`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxbench.core import TokenUsage, micro_to_usd, sha256_hex
from ctxbench.protocols.cef.rules import CTXBENCH_SCHEMA
from ctxbench.protocols.cef.trial_format import TRIAL_FIELDS, Expected

__all__ = ["CostSource", "Expected", "ProviderAttempt", "TrialIdentity", "TrialRecord",
           "build_trial"]


@dataclass(frozen=True, slots=True)
class ProviderAttempt:
    """One request as the runner made it: outcome, the usage the provider reported, cost.

    It is written as one item of a trial's ``attempts``; readers of trial logs get the
    read-side view, ``ctxbench.protocols.cef.records.Attempt``.
    """

    attempt: int
    outcome: str
    error_type: str | None
    http_status: int | None
    usage: TokenUsage
    input_cost_micro: int
    output_cost_micro: int
    latency_ms: float
    request_id: str | None
    raw_usage: dict[str, Any] | None

    @property
    def cost_micro(self) -> int:
        return self.input_cost_micro + self.output_cost_micro

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt, "outcome": self.outcome, "error_type": self.error_type,
            "http_status": self.http_status, "context_tokens": self.usage.context_tokens,
            "output_tokens": self.usage.output, "reasoning_tokens": self.usage.reasoning,
            "billed_cost_usd": micro_to_usd(self.cost_micro),
            "latency_ms": round(self.latency_ms, 3), "provider_request_id": self.request_id,
        }


@dataclass(frozen=True, slots=True)
class CostSource:
    """``cost_source`` and its reference, fixed for the whole run."""

    kind: str
    reference: str


@dataclass(frozen=True, slots=True)
class TrialIdentity:
    run_id: str
    workload: str
    workload_version: str
    provider: str
    model: str
    scorer: str
    usage_source: str


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """One trial as the runner records it; ``to_json()`` is its ``ctxbench.trial.v1`` line.

    Money stays integer micro-USD and times unrounded here; ``to_json`` writes USD and
    rounds latency and compile time to the microsecond, as every trial log always has.
    """

    workload: str
    workload_version: str
    task_id: str
    provider: str
    model: str
    scorer: str
    provider_request_id: str
    usage_source: str
    cost_source: str
    cost_source_reference: str
    outcome: str
    error_type: str | None
    context_sha256: str
    response_text: str | None
    response_sha256: str | None
    replicate: int
    condition: str
    task_score: float
    evidence_recall: float
    unsupported_claim_rate: float
    context_tokens: int
    reasoning_tokens: int
    output_tokens: int
    billed_cost_micro: int
    latency_ms: float
    context_commit_id: str | None
    cached_input_tokens: int
    cache_write_tokens: int
    provider_usage: Mapping[str, Any] | None
    """The last attempt's usage object exactly as the provider sent it."""
    compile_ms: float
    strategy: str
    budget: int | None
    condition_order: int
    run_id: str
    attempts: tuple[ProviderAttempt, ...]
    selected_artifacts: tuple[tuple[str, str], ...]
    """(artifact id, source BLAKE3) of each artifact of the packet, in packet order."""
    rendered_blake3: str
    scorer_details: Mapping[str, str | list[str]]
    query: str
    """The task's question (the user's, never corpus text)."""
    expected: Expected

    SCHEMA_VERSION: ClassVar[str] = CTXBENCH_SCHEMA

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object: every member of ``TRIAL_FIELDS``, in its order."""
        encoded: dict[str, Any] = {
            "schema_version": self.SCHEMA_VERSION,
            "billed_cost_usd": micro_to_usd(self.billed_cost_micro),
            "latency_ms": round(self.latency_ms, 3),
            "provider_usage": (None if self.provider_usage is None
                               else dict(self.provider_usage)),
            "compile_ms": round(self.compile_ms, 3),
            "attempts": [a.as_dict() for a in self.attempts],
            "selected_artifacts": [{"artifact_id": a, "blake3": d}
                                   for a, d in self.selected_artifacts],
            "scorer_details": {k: v if isinstance(v, str) else list(v)
                               for k, v in self.scorer_details.items()},
            "expected": self.expected.as_dict(),
        }
        return {name: encoded[name] if name in encoded else getattr(self, name)
                for name in TRIAL_FIELDS}


def build_trial(*, ident: TrialIdentity, task_id: str, condition: str, strategy: str,
                budget: int | None, replicate: int, condition_order: int, context_sha256: str,
                context_commit_id: str | None, compile_ms: float, attempts: list[ProviderAttempt],
                answer: str | None, task_score: float, evidence_recall: float,
                unsupported_claim_rate: float, cost: CostSource,
                selected_artifacts: tuple[tuple[str, str], ...], rendered_blake3: str,
                scorer_details: Mapping[str, str | list[str]], query: str,
                expected: Expected) -> TrialRecord:
    """The record; usage and cost are sums over every attempt (retries stay billed).

    ``selected_artifacts`` and ``rendered_blake3`` are the packet's (what the reports
    read instead of rebuilding it); ``scorer_details`` what the scorer computed beyond
    the score; ``query`` and ``expected`` the task's question and what the answer is held
    to (what a drill-down shows beside the answer).
    """
    last = attempts[-1]
    usage = sum((a.usage for a in attempts), TokenUsage())
    cost_micro = sum(a.cost_micro for a in attempts)
    success = last.outcome == "success"
    if success:
        usage_source = ident.usage_source
    elif usage.total > 0:
        usage_source = "provider_response"
    else:
        usage_source = ("runner_error" if (last.error_type or "").startswith(
            ("runner_error", "strategy_failed")) else "provider_error")
    request_id = next((a.request_id for a in reversed(attempts) if a.request_id), None)
    if request_id is None:
        # No response carried an id: a stable hash names the request instead.
        request_id = "unavailable:" + sha256_hex(
            f"{ident.run_id}\0{task_id}\0{condition}\0{replicate}".encode())[:32]
    text = answer if success else None
    return TrialRecord(
        workload=ident.workload, workload_version=ident.workload_version, task_id=task_id,
        provider=ident.provider, model=ident.model, scorer=ident.scorer,
        provider_request_id=request_id, usage_source=usage_source, cost_source=cost.kind,
        cost_source_reference=cost.reference, outcome=last.outcome,
        error_type=None if success else (last.error_type or "unknown_error"),
        context_sha256=context_sha256, response_text=text,
        response_sha256=sha256_hex(text.encode("utf-8")) if text is not None else None,
        replicate=replicate, condition=condition,
        task_score=task_score if success else 0.0, evidence_recall=evidence_recall,
        unsupported_claim_rate=unsupported_claim_rate if success else 0.0,
        context_tokens=usage.context_tokens, reasoning_tokens=usage.reasoning,
        output_tokens=usage.output, billed_cost_micro=cost_micro, latency_ms=last.latency_ms,
        context_commit_id=context_commit_id, cached_input_tokens=usage.cached_input,
        cache_write_tokens=usage.cache_write, provider_usage=last.raw_usage,
        compile_ms=compile_ms, strategy=strategy, budget=budget,
        condition_order=condition_order, run_id=ident.run_id, attempts=tuple(attempts),
        selected_artifacts=selected_artifacts, rendered_blake3=rendered_blake3,
        scorer_details=scorer_details, query=query, expected=expected)
