"""Shared helpers for the CEF tests: write records, build small paired sets."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ctxbench.core.digests import sha256_hex
from ctxbench.testing.cef_trials import base_record


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def failed(record: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Turn a record into a provider error with zero usage."""
    record = dict(record)
    record.update(outcome="error", error_type="timeout", response_text=None,
                  response_sha256=None, context_tokens=0, output_tokens=0, reasoning_tokens=0,
                  billed_cost_usd=0.0, usage_source="provider_error")
    record.update(extra)
    return record


def pair(task: str, cond: str, ctx: int, *, score: float = 1.0, replicate: int = 0,
         **extra: Any) -> dict[str, Any]:
    text = f"{task}/{cond}/{replicate}"
    record = base_record(
        task_id=task, condition=cond, context_tokens=ctx, replicate=replicate,
        task_score=score, response_text=text, provider_request_id=f"r-{text}",
        billed_cost_usd=ctx * 1e-6, latency_ms=100.0 + ctx / 10,
        context_commit_id=("ctx_" + sha256_hex(text.encode())[:16]) if cond in (
            "entroly", "combined") else None,
    )
    record.update(extra)
    return record
