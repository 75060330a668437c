"""The shipped JSON Schemas accept what the parser accepts and reject the same shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.schemas import available_schemas, validator
from ctxbench.testing.cef_trials import base_record

from .helpers import failed

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
ENTROLY = "entroly.context-efficiency-trial.v1"


def test_cef_schemas_ship() -> None:
    for name in (ENTROLY, "ctxbench.trial.v1", "ctxbench.cef-report.v1",
                 "ctxbench.cef-prereg.v1"):
        assert name in available_schemas()


def test_golden_inputs_and_reports_match_their_schemas() -> None:
    for case in sorted(GOLDEN.glob("cef-*")):
        for line in (case / "trials.jsonl").read_text().splitlines():
            record = json.loads(line)
            assert list(validator(record["schema_version"]).iter_errors(record)) == []
        report = json.loads((case / "report.json").read_text())
        assert list(validator("ctxbench.cef-report.v1").iter_errors(report)) == []


@pytest.mark.parametrize("change", [
    {"context_commit_id": "ctx_"}, {"condition": "entroly"}, {"extra": 1},
    {"task_score": True}, {"context_tokens": 0}, {"usage_source": "runner_error"},
    {"replicate": -1}, {"context_commit_id": "ctx_ x"},
])
def test_entroly_schema_rejects_what_the_parser_rejects(change: dict[str, Any]) -> None:
    assert list(validator(ENTROLY).iter_errors(base_record(**change)))


def test_error_trial_rules_in_the_schema() -> None:
    assert list(validator(ENTROLY).iter_errors(failed(base_record()))) == []
    assert list(validator(ENTROLY).iter_errors(
        failed(base_record(), usage_source="provider_response")))
    assert list(validator(ENTROLY).iter_errors(failed(base_record(), response_text="x")))


def test_ctxbench_schema_accepts_the_optional_fields() -> None:
    record = base_record(schema_version="ctxbench.trial.v1", condition="compiled@800",
                         cached_input_tokens=10, provider_usage={"prompt_tokens": 1000},
                         compile_ms=None, attempts=[{
                             "attempt": 1, "outcome": "success", "error_type": None,
                             "http_status": 200, "context_tokens": 1000,
                             "output_tokens": 20, "reasoning_tokens": 0,
                             "billed_cost_usd": 0.0005, "latency_ms": 800.0,
                             "provider_request_id": "req_0001"}])
    assert list(validator("ctxbench.trial.v1").iter_errors(record)) == []
    assert list(validator("ctxbench.trial.v1").iter_errors(dict(record, surprise=1)))
