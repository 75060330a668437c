"""What the runner writes (a trial, its attempts) is what the CEF reader reads."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, fields

import pytest

from ctxbench.core import TokenUsage
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.protocols.cef.rules import ATTEMPT_FIELDS, AttemptRecord
from ctxbench.runner.record import (
    CostSource,
    Expected,
    ProviderAttempt,
    TrialIdentity,
    TrialRecord,
    build_trial,
)
from ctxbench.schemas import validator


def test_a_written_attempt_has_exactly_the_fields_the_reader_expects() -> None:
    written = ProviderAttempt(2, "error", "http_500", 500,
                              TokenUsage(uncached_input=60, cached_input=40, output=5),
                              12, 3, 41.23456, "req-1", {"prompt_tokens": 100}).as_dict()
    assert tuple(written) == tuple(ATTEMPT_FIELDS)
    assert [f.name for f in fields(AttemptRecord)] == list(ATTEMPT_FIELDS)
    read = AttemptRecord(**written)
    assert (read.context_tokens, read.output_tokens, read.billed_cost_usd) == (100, 5, 1.5e-05)
    assert read.latency_ms == 41.235 and read.provider_request_id == "req-1"


# The two lines below were written by build_trial when it still returned a dict (the
# members after ``attempts`` were added since, at the end); the typed record must write
# them byte for byte.
LINE_RETRIED = (
    '{"schema_version": "ctxbench.trial.v1", "workload": "hotpotqa", "workload_version": '
    '"v1", "task_id": "t1", "provider": "openai", "model": "gpt-x", "scorer": "f1", '
    '"provider_request_id": "req-1", "usage_source": "provider_response", "cost_source": '
    '"pricing_snapshot", "cost_source_reference": "pricing-2025-06-01", "outcome": '
    '"success", "error_type": null, "context_sha256": "' + "b" * 64 + '", '
    '"response_text": "Paris", "response_sha256": '
    '"5dd272b4f316b776a7b8e3d0894b37e1e42be3d5d3b204b8a5836cc50597a6b1", "replicate": 1, '
    '"condition": "compiled@800", "task_score": 0.75, "evidence_recall": 0.5, '
    '"unsupported_claim_rate": 0.25, "context_tokens": 1120, "reasoning_tokens": 7, '
    '"output_tokens": 35, "billed_cost_usd": 0.002415, "latency_ms": 812.346, '
    '"context_commit_id": "ctx_aaaaaaaaaaaaaaaa", "cached_input_tokens": 140, '
    '"cache_write_tokens": 20, "provider_usage": {"prompt_tokens": 1020, '
    '"completion_tokens": 37}, "compile_ms": 3.142, "strategy": "compiled", "budget": 800, '
    '"condition_order": 2, "run_id": "run-1", "attempts": [{"attempt": 1, "outcome": '
    '"error", "error_type": "http_500", "http_status": 500, "context_tokens": 100, '
    '"output_tokens": 5, "reasoning_tokens": 0, "billed_cost_usd": 1.5e-05, "latency_ms": '
    '41.235, "provider_request_id": "req-1"}, {"attempt": 2, "outcome": "success", '
    '"error_type": null, "http_status": 200, "context_tokens": 1020, "output_tokens": 30, '
    '"reasoning_tokens": 7, "billed_cost_usd": 0.0024, "latency_ms": 812.346, '
    '"provider_request_id": null}], "selected_artifacts": [{"artifact_id": "doc-a", '
    '"blake3": "' + "d" * 64 + '"}, {"artifact_id": "doc-b", "blake3": "' + "e" * 64 + '"}], '
    '"rendered_blake3": "' + "f" * 64 + '", "scorer_details": {"method": "token_f1", '
    '"matched": ["Paris"], "evidence_required": ["doc-a", "doc-c"], "evidence_found": '
    '["doc-a"]}, "query": "What is the capital of France?", "expected": {"answers": '
    '["Paris"], "answer_terms": [], "abstention": false}}')
LINE_CRASHED = (
    '{"schema_version": "ctxbench.trial.v1", "workload": "hotpotqa", "workload_version": '
    '"v1", "task_id": "t2", "provider": "openai", "model": "gpt-x", "scorer": "f1", '
    '"provider_request_id": "unavailable:cb6be8f12276f76ca5629dc853f8e637", "usage_source": '
    '"runner_error", "cost_source": "zero_cost_fixture", "cost_source_reference": "none", '
    '"outcome": "error", "error_type": "runner_error:ValueError", "context_sha256": "'
    + "c" * 64 + '", "response_text": null, "response_sha256": null, "replicate": 0, '
    '"condition": "raw", "task_score": 0.0, "evidence_recall": 0.4, '
    '"unsupported_claim_rate": 0.0, "context_tokens": 0, "reasoning_tokens": 0, '
    '"output_tokens": 0, "billed_cost_usd": 0.0, "latency_ms": 0.0, "context_commit_id": '
    'null, "cached_input_tokens": 0, "cache_write_tokens": 0, "provider_usage": null, '
    '"compile_ms": 0.0, "strategy": "full_permitted_context", "budget": null, '
    '"condition_order": 0, "run_id": "run-1", "attempts": [{"attempt": 1, "outcome": '
    '"error", "error_type": "runner_error:ValueError", "http_status": null, '
    '"context_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0, "billed_cost_usd": 0.0, '
    '"latency_ms": 0.0, "provider_request_id": null}], "selected_artifacts": [], '
    '"rendered_blake3": "' + "0" * 64 + '", "scorer_details": {"method": "token_f1", '
    '"matched": [], "evidence_required": [], "evidence_found": []}, "query": "Who wrote '
    'it?", "expected": {"answers": [], "answer_terms": ["Hugo"], "abstention": false}}')
IDENT = TrialIdentity("run-1", "hotpotqa", "v1", "openai", "gpt-x", "f1", "provider_response")


def _retried() -> TrialRecord:
    attempts = [
        ProviderAttempt(1, "error", "http_500", 500,
                        TokenUsage(uncached_input=60, cached_input=40, output=5), 12, 3,
                        41.23456, "req-1", {"prompt_tokens": 100}),
        ProviderAttempt(2, "success", None, 200,
                        TokenUsage(uncached_input=900, cached_input=100, cache_write=20,
                                   output=30, reasoning=7), 1500, 900, 812.34567, None,
                        {"prompt_tokens": 1020, "completion_tokens": 37})]
    return build_trial(ident=IDENT, task_id="t1", condition="compiled@800",
                       strategy="compiled", budget=800, replicate=1, condition_order=2,
                       context_sha256="b" * 64, context_commit_id="ctx_" + "a" * 16,
                       compile_ms=3.14159, attempts=attempts, answer="Paris", task_score=0.75,
                       evidence_recall=0.5, unsupported_claim_rate=0.25,
                       cost=CostSource("pricing_snapshot", "pricing-2025-06-01"),
                       selected_artifacts=(("doc-a", "d" * 64), ("doc-b", "e" * 64)),
                       rendered_blake3="f" * 64,
                       scorer_details={"method": "token_f1", "matched": ["Paris"],
                                       "evidence_required": ["doc-a", "doc-c"],
                                       "evidence_found": ["doc-a"]},
                       query="What is the capital of France?",
                       expected=Expected(("Paris",), (), False))


def _crashed() -> TrialRecord:
    attempts = [ProviderAttempt(1, "error", "runner_error:ValueError", None, TokenUsage(), 0,
                                0, 0.0, None, None)]
    return build_trial(ident=IDENT, task_id="t2", condition="raw",
                       strategy="full_permitted_context", budget=None, replicate=0,
                       condition_order=0, context_sha256="c" * 64, context_commit_id=None,
                       compile_ms=0.0, attempts=attempts, answer="", task_score=0.0,
                       evidence_recall=0.4, unsupported_claim_rate=0.0,
                       cost=CostSource("zero_cost_fixture", "none"),
                       selected_artifacts=(), rendered_blake3="0" * 64,
                       scorer_details={"method": "token_f1", "matched": [],
                                       "evidence_required": [], "evidence_found": []},
                       query="Who wrote it?", expected=Expected((), ("Hugo",), False))


def test_the_typed_record_writes_the_same_lines_as_before() -> None:
    retried, crashed = _retried(), _crashed()
    assert json.dumps(retried.to_json()) == LINE_RETRIED
    assert json.dumps(crashed.to_json()) == LINE_CRASHED
    # money stays integer micro-USD in the record; USD appears only in the line
    assert retried.billed_cost_micro == 2415 and retried.to_json()["billed_cost_usd"] == 0.002415
    assert (crashed.usage_source, crashed.response_text, crashed.provider_request_id[:12]) == (
        "runner_error", None, "unavailable:")
    with pytest.raises(FrozenInstanceError):
        retried.outcome = "error"  # type: ignore[misc]


def test_a_written_record_is_one_the_reader_and_the_schema_accept() -> None:
    for record in (_retried(), _crashed()):
        line = record.to_json()
        assert list(validator("ctxbench.trial.v1").iter_errors(line)) == []
        read = parse_trial(json.loads(json.dumps(line)), path="trials.jsonl", line=1)
        assert (read.condition, read.context_tokens, read.outcome) == (
            record.condition, record.context_tokens, record.outcome)
        assert [f.name for f in fields(TrialRecord)] == [
            "billed_cost_micro" if k == "billed_cost_usd" else k
            for k in line if k != "schema_version"]
