"""Synthetic, valid CEF trial records for examples, tests, simulations and benchmarks.

Nothing here is a measurement: every record it makes is labeled with the usage and cost
sources the caller chooses (``deterministic_fixture`` / ``zero_cost_fixture`` by default
would make any report a conformance fixture; the examples choose real-looking sources
only to exercise the product-claim path and say so in their README).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ctxbench.core.digests import sha256_hex
from ctxbench.core.rng import derive_rng

__all__ = ["ConditionEffect", "base_record", "generate_records"]


def base_record(**overrides: Any) -> dict[str, Any]:
    """One valid ``entroly.context-efficiency-trial.v1`` success record, fields overridable."""
    text = overrides.pop("response_text", "The answer is 42.")
    record: dict[str, Any] = {
        "schema_version": "entroly.context-efficiency-trial.v1",
        "workload": "hotpotqa",
        "workload_version": "longbench-v1",
        "task_id": "t0001",
        "provider": "openai",
        "model": "gpt-4.1-mini-2025-04-14",
        "scorer": "official-f1",
        "provider_request_id": "req_0001",
        "usage_source": "provider_response",
        "cost_source": "pricing_snapshot",
        "cost_source_reference": "pricing-2025-06-01",
        "outcome": "success",
        "error_type": None,
        "context_sha256": "a" * 64,
        "response_text": text,
        "response_sha256": sha256_hex(text.encode("utf-8")) if text is not None else None,
        "replicate": 0,
        "condition": "raw",
        "task_score": 1.0,
        "evidence_recall": 1.0,
        "unsupported_claim_rate": 0.0,
        "context_tokens": 1000,
        "reasoning_tokens": 0,
        "output_tokens": 20,
        "billed_cost_usd": 0.0005,
        "latency_ms": 800.0,
        "context_commit_id": None,
    }
    record.update(overrides)
    return record


@dataclass(frozen=True, slots=True)
class ConditionEffect:
    """How a synthetic condition differs from the baseline on each task."""

    context_ratio: float = 1.0
    quality_shift: float = 0.0
    evidence_shift: float = 0.0
    unsupported_shift: float = 0.0
    failure_rate: float = 0.0
    commit: bool = False


def generate_records(
    *,
    conditions: dict[str, ConditionEffect],
    workloads: Sequence[str] = ("hotpotqa",),
    tasks: int = 20,
    replicates: int = 1,
    seed: int = 0,
    schema_version: str = "entroly.context-efficiency-trial.v1",
    provider: str = "openai",
    model: str = "gpt-4.1-mini-2025-04-14",
    usage_source: str = "provider_response",
    cost_source: str = "pricing_snapshot",
    response_text: bool = True,
    workload_version: str = "v1",
    cost_source_reference: str = "pricing-2025-06-01",
) -> Iterator[dict[str, Any]]:
    """Yield a complete paired matrix of valid records (baseline ``raw`` plus ``conditions``).

    Per task, the baseline's context size, score and evidence are drawn once; each
    condition then scales the context and shifts the scores by its effect, with noise.
    """
    rng = derive_rng(seed, "cef-synthetic")
    names = ["raw", *conditions]
    effects = {"raw": ConditionEffect(), **conditions}
    for workload in workloads:
        base_ctx = rng.integers(2000, 12000, size=tasks)
        base_q = rng.uniform(0.5, 1.0, size=tasks)
        for t in range(tasks):
            task_id = f"{workload}-{t:06d}"
            for r in range(replicates):
                for name in names:
                    eff = effects[name]
                    failed = bool(rng.random() < eff.failure_rate)
                    yield _record(
                        rng, workload, task_id, r, name, eff, failed,
                        int(base_ctx[t]), float(base_q[t]), schema_version, provider, model,
                        usage_source, cost_source, response_text,
                    ) | {"workload_version": workload_version,
                         "cost_source_reference": cost_source_reference}


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _record(rng: np.random.Generator, workload: str, task_id: str, replicate: int,
            condition: str, eff: ConditionEffect, failed: bool, base_ctx: int, base_q: float,
            schema_version: str, provider: str, model: str, usage_source: str,
            cost_source: str, with_text: bool) -> dict[str, Any]:
    ratio = eff.context_ratio * float(rng.uniform(0.9, 1.1)) if eff.context_ratio < 1 else 1.0
    ctx = max(1, round(base_ctx * ratio))
    noise = float(rng.normal(0.0, 0.02))
    score = _clip(base_q + eff.quality_shift + noise)
    evidence = _clip(base_q + eff.evidence_shift + noise)
    unsupported = _clip(0.05 + eff.unsupported_shift + float(rng.uniform(-0.02, 0.02)))
    latency = round(200.0 + ctx * 0.05 + float(rng.uniform(0.0, 50.0)), 3)
    cost = round(ctx * 0.4e-6 + 20 * 1.6e-6, 9)
    request = f"req-{workload}-{task_id}-{replicate}-{condition}"
    text = f"answer for {task_id} under {condition}" if with_text else ""
    record = base_record(
        schema_version=schema_version, workload=workload, task_id=task_id,
        provider=provider, model=model, replicate=replicate, condition=condition,
        provider_request_id=request, usage_source=usage_source, cost_source=cost_source,
        context_sha256=sha256_hex(f"{task_id}/{condition}/{ctx}".encode()),
        response_text=text, task_score=round(score, 4), evidence_recall=round(evidence, 4),
        unsupported_claim_rate=round(unsupported, 4), context_tokens=ctx,
        billed_cost_usd=cost, latency_ms=latency,
        context_commit_id=("ctx_" + sha256_hex(request.encode())[:32]) if eff.commit else None,
    )
    if failed:
        record.update(
            outcome="error", error_type="timeout", response_text=None, response_sha256=None,
            context_tokens=0, output_tokens=0, reasoning_tokens=0, billed_cost_usd=0.0,
            usage_source="provider_error", task_score=0.0, evidence_recall=0.0,
            unsupported_claim_rate=1.0,
        )
    return record
