"""Trial record validation: every rule of compat-notes §1 and ctxbench.trial.v1, by message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core.digests import sha256_hex
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.records import (
    REQUIRED_FIELDS,
    Trial,
    parse_trial,
    read_trials,
    trial_errors,
    validate_trials,
)
from ctxbench.schemas import validator
from ctxbench.testing.cef_trials import base_record

from .helpers import failed, write_jsonl

ENTROLY = "entroly.context-efficiency-trial.v1"
MAX = "9007199254740991"


def _msg(record: dict[str, Any], baseline: str = "raw") -> str:
    with pytest.raises(InputError) as info:
        parse_trial(record, path="t.jsonl", line=3, baseline=baseline)
    return str(info.value)


def _ctx(**extra: Any) -> dict[str, Any]:
    return base_record(schema_version="ctxbench.trial.v1", **extra)


def test_valid_entroly_record_loads_with_every_field() -> None:
    trial = parse_trial(base_record(), path="t.jsonl", line=1)
    assert isinstance(trial, Trial)
    assert trial.context_tokens == 1000 and trial.task_score == 1.0 and trial.line == 1
    assert trial.stratum == ("openai", "gpt-4.1-mini-2025-04-14", "hotpotqa", "longbench-v1",
                             "official-f1")
    assert len(REQUIRED_FIELDS) == 27


@pytest.mark.parametrize(("change", "expected"), [
    ({"schema_version": "v0"}, "t.jsonl:3: schema_version: expected one of "
     "entroly.context-efficiency-trial.v1, ctxbench.trial.v1, got the string \"v0\""),
    ({"extra": 1}, "t.jsonl:3: extra: expected no such field (it is not part of "
     "entroly.context-efficiency-trial.v1), got the unknown field 'extra'"),
    ({"workload": ""}, "t.jsonl:3: workload: expected a non-blank string, got the string \"\""),
    ({"usage_source": "tokenizer"}, "usage_source: expected one of provider_response, "
     "provider_log, provider_ledger, provider_error, runner_error, deterministic_fixture"),
    ({"cost_source": "free"}, "cost_source: expected one of provider_invoice, provider_ledger, "
     "pricing_snapshot, self_hosted_no_api_fee, zero_cost_fixture"),
    ({"outcome": "ok"}, "outcome: expected one of success, error, got the string \"ok\""),
    ({"context_sha256": "A" * 64}, "context_sha256: expected 64 lowercase hex digits"),
    ({"replicate": -1}, f"replicate: expected an integer in [0, {MAX}], got the integer -1"),
    ({"replicate": True},
     f"replicate: expected an integer in [0, {MAX}], got the boolean true"),
    ({"condition": "compiled"}, "condition: expected one of raw, native_compaction, entroly, "
     "combined"),
    ({"task_score": 1.5}, "task_score: expected a number in [0, 1], got the number 1.5"),
    ({"evidence_recall": False}, "evidence_recall: expected a number in [0, 1], got the "
     "boolean false"),
    ({"unsupported_claim_rate": -0.1}, "unsupported_claim_rate: expected a number in [0, 1]"),
    ({"output_tokens": 1.0},
     f"output_tokens: expected an integer in [0, {MAX}], got the number 1.0"),
    ({"billed_cost_usd": -1}, f"billed_cost_usd: expected a number in [0, {MAX}]"),
    ({"latency_ms": "5"},
     f"latency_ms: expected a number in [0, {MAX}], got the string \"5\""),
    ({"context_commit_id": "ctx_"}, "context_commit_id: expected ctx_ followed by at least one "
     "of A-Z a-z 0-9 _ . - or null, got the string \"ctx_\""),
    ({"context_commit_id": "ctx_ x"}, "context_commit_id: expected ctx_ followed"),
    ({"condition": "entroly"}, "context_commit_id: expected a Context Commit ID (ctx_ followed "
     "by at least one of A-Z a-z 0-9 _ . -) for a entroly trial, got null"),
    ({"condition": "combined"}, "for a combined trial, got null"),
    ({"context_tokens": 0}, "context_tokens: expected an integer >= 1 when outcome is success, "
     "got the integer 0"),
    ({"error_type": "x"}, "error_type: expected null when outcome is success"),
    ({"response_text": None, "response_sha256": None}, "response_text: expected a string when "
     "outcome is success, got null"),
    ({"response_sha256": "0" * 64}, "response_sha256: expected the SHA-256 of response_text's "
     "UTF-8 bytes (" + sha256_hex(b"The answer is 42.") + ")"),
    ({"usage_source": "provider_error"}, "usage_source: expected a usage source other than "
     "provider_error or runner_error when outcome is success"),
])
def test_each_rule_has_its_message(change: dict[str, Any], expected: str) -> None:
    assert expected in _msg(base_record(**change))


def test_missing_and_null_required_fields() -> None:
    record = base_record()
    del record["scorer"]
    assert _msg(record) == "t.jsonl:3: scorer: expected a required field, got nothing (the " \
        "field is missing)"
    assert "provider_request_id: expected a non-blank string, got null" in _msg(
        base_record(provider_request_id=None))


def test_error_outcome_rules() -> None:
    ok = failed(base_record())
    assert parse_trial(ok, path="t", line=1).failed
    assert "error_type: expected a non-blank string when outcome is error, got null" in _msg(
        failed(base_record(), error_type=None))
    assert "response_text: expected null when outcome is error" in _msg(
        failed(base_record(), response_text="x"))
    assert "response_sha256: expected null when outcome is error" in _msg(
        failed(base_record(), response_sha256="a" * 64))
    # an error trial may carry any recorded score; the analysis overrides it
    assert parse_trial(failed(base_record(), task_score=1.0), path="t", line=1).task_score == 1.0


def test_usage_source_must_agree_with_outcome() -> None:
    assert "usage_source: expected provider_error or runner_error for an error trial with zero " \
        "usage, got the string \"provider_response\"" in _msg(
            failed(base_record(), usage_source="provider_response"))
    assert "usage_source: expected a usage source other than runner_error when usage is " \
        "positive" in _msg(failed(base_record(), usage_source="runner_error", context_tokens=10))
    # an error after the provider consumed tokens may keep its provider usage
    assert parse_trial(failed(base_record(), usage_source="provider_response",
                              context_tokens=10), path="t", line=1).context_tokens == 10


def test_every_error_of_a_record_is_listed() -> None:
    _, errors = trial_errors(base_record(task_score=2, latency_ms=-1, extra=1), path="t", line=1)
    text = [str(e) for e in errors]
    assert len(text) == 3
    assert any("extra" in t for t in text) and any("latency_ms" in t for t in text)


def test_ctxbench_format_accepts_slugs_and_optional_fields() -> None:
    record = _ctx(condition="compiled@800", context_commit_id="ctx_" + "b" * 32,
                  cached_input_tokens=400, cache_write_tokens=100, provider_usage={"a": 1},
                  compile_ms=3.5, strategy="compiled", budget=800, condition_order=1,
                  run_id="run-1")
    trial = parse_trial(record, path="t", line=1)
    assert trial.condition == "compiled@800" and trial.cached_input_tokens == 400
    assert parse_trial(_ctx(condition="compiled"), path="t", line=1).context_commit_id is None


@pytest.mark.parametrize(("change", "expected"), [
    ({"condition": "Bad Name"}, "condition: expected a condition slug matching"),
    ({"cached_input_tokens": 2000}, "cached_input_tokens: expected an integer <= "
     "context_tokens (1000)"),
    ({"cached_input_tokens": 600, "cache_write_tokens": 600}, "cache_write_tokens: expected "
     "cached_input_tokens + cache_write_tokens <= context_tokens (1000), got a sum of 1200"),
    ({"budget": 0}, f"budget: expected an integer in [1, {MAX}] or null"),
    ({"run_id": " "}, "run_id: expected a non-blank string"),
    ({"compile_ms": -2}, f"compile_ms: expected a number in [0, {MAX}] or null"),
    ({"attempts": []}, "attempts: expected an array of at least one attempt object"),
    ({"unknown": 1}, "unknown: expected no such field (it is not part of ctxbench.trial.v1)"),
])
def test_ctxbench_format_rules(change: dict[str, Any], expected: str) -> None:
    assert expected in _msg(_ctx(**change))


def _attempt(**extra: Any) -> dict[str, Any]:
    a = {"attempt": 1, "outcome": "success", "error_type": None, "http_status": 200,
         "context_tokens": 1000, "output_tokens": 20, "reasoning_tokens": 0,
         "billed_cost_usd": 0.0005, "latency_ms": 800.0, "provider_request_id": "req_0001"}
    a.update(extra)
    return a


def test_attempts_sum_to_the_trial() -> None:
    retry = _attempt(outcome="error", error_type="rate_limit", http_status=429,
                     context_tokens=0, output_tokens=0, billed_cost_usd=0.0, attempt=1)
    ok = parse_trial(_ctx(attempts=[retry, _attempt(attempt=2)]), path="t", line=1)
    assert ok.attempts is not None and len(ok.attempts) == 2
    assert "context_tokens: expected the sum over attempts (2000)" in _msg(
        _ctx(attempts=[_attempt(), _attempt(attempt=2)]))
    assert "outcome: expected the last attempt's outcome (error)" in _msg(
        _ctx(attempts=[_attempt(outcome="error", error_type="x")]))
    assert "attempts[0].http_status: expected an integer in [0, 999] or null" in _msg(
        _ctx(attempts=[_attempt(http_status="200")]))
    assert "attempts[0].extra: expected no such field" in _msg(
        _ctx(attempts=[_attempt(extra=1)]))


def test_baseline_named_by_preregistration_carries_no_commit() -> None:
    record = _ctx(condition="full", context_commit_id="ctx_" + "c" * 16)
    assert parse_trial(record, path="t", line=1).condition == "full"
    assert "expected null for the baseline condition full" in _msg(record, baseline="full")


def test_read_trials_and_validate_list_every_error(tmp_path: Path) -> None:
    good = base_record()
    path = tmp_path / "t.jsonl"
    lines = [json.dumps(good), "", "{not json", json.dumps(base_record(task_score=3)),
             "[1]", json.dumps(base_record(replicate=-1, latency_ms=-1))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors = validate_trials([path])
    text = [str(e) for e in errors]
    assert len(text) == 5
    assert text[0].startswith(f"{path}:3: expected valid JSON")
    assert text[1].startswith(f"{path}:4: task_score")
    assert text[2] == f"{path}:5: expected a JSON object, got an array"
    assert [str(e) for e in validate_trials([path], max_errors=2)] == text[:2]
    with pytest.raises(InputError, match=":3: expected valid JSON"):
        read_trials([path])
    assert len(read_trials([write_jsonl(tmp_path / "ok.jsonl", [good, good])])) == 2


_finite = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(score=_finite, recall=_finite, unsupported=_finite,
       ctx=st.integers(1, 10**9), out=st.integers(0, 10**6),
       text=st.text(max_size=40), replicate=st.integers(0, 1000),
       condition=st.sampled_from(["raw", "native_compaction", "entroly", "combined"]))
def test_valid_records_parse_and_match_the_schema(
        score: float, recall: float, unsupported: float, ctx: int, out: int, text: str,
        replicate: int, condition: str) -> None:
    record = base_record(task_score=score, evidence_recall=recall,
                         unsupported_claim_rate=unsupported, context_tokens=ctx,
                         output_tokens=out, response_text=text, replicate=replicate,
                         condition=condition,
                         context_commit_id=None if condition in ("raw", "native_compaction")
                         else "ctx_" + "d" * 20)
    slow, errors = trial_errors(record, path="t", line=1)
    assert errors == [] and slow is not None and slow.replicate == replicate
    assert list(validator(ENTROLY).iter_errors(record)) == []
    line = json.loads(json.dumps(record))
    assert parse_trial(line, path="t", line=1) == slow


_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2),
                    st.text(max_size=5), st.just("ctx_" + "a" * 16), st.just("a" * 64))


@given(field=st.sampled_from(REQUIRED_FIELDS), value=_values)
def test_mutated_records_are_accepted_exactly_when_no_rule_fails(field: str,
                                                                   value: Any) -> None:
    record = base_record()
    record[field] = value
    slow, errors = trial_errors(record, path="t", line=1)
    assert all(isinstance(e, InputError) for e in errors)
    assert (slow is None) == bool(errors)
    if slow is None:
        assert all(f"t:1: {field}:" in str(e) or "t:1: " in str(e) for e in errors)
        # a record ctxbench rejects is either schema-invalid or breaks a contract rule


@pytest.mark.parametrize(("change", "expected"), [
    ({"replicate": 2**64}, f"replicate: expected an integer in [0, {MAX}], got the integer "
     "18446744073709551616"),
    ({"replicate": 2**53}, f"replicate: expected an integer in [0, {MAX}]"),
    ({"context_tokens": 10**30}, f"context_tokens: expected an integer in [0, {MAX}]"),
    ({"latency_ms": 10**400}, f"latency_ms: expected a number in [0, {MAX}], got an integer "
     "of 401 digits"),
    ({"usage_source": ["provider_response"]}, "usage_source: expected one of "
     "provider_response, provider_log"),
    ({"condition": ["raw"]}, "condition: expected one of raw, native_compaction"),
    ({"schema_version": [ENTROLY]}, "schema_version: expected one of"),
    ({"cost_source": {"a": 1}}, "cost_source: expected one of provider_invoice"),
    ({"replicate": "0"}, f"replicate: expected an integer in [0, {MAX}], got the string \"0\""),
])
def test_counts_are_bounded_and_enums_of_any_type_are_located(change: dict[str, Any],
                                                              expected: str) -> None:
    assert _msg(base_record(**change)).startswith("t.jsonl:3: " + expected)


def test_analyze_and_validate_share_the_validator(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.api import read_table
    from ctxbench.protocols.cef.records import scan_trials

    for change in ({"condition": ["raw"]}, {"usage_source": ["x"]}, {"replicate": 2**64}):
        path = write_jsonl(tmp_path / "t.jsonl", [base_record(), base_record(**change)])
        errors, total, records = scan_trials([path])
        assert total == 1 and records == 1
        with pytest.raises(InputError) as info:
            read_table([path])
        assert str(info.value) == str(errors[0])
        assert str(info.value).startswith(f"{path}:2: ")


def test_cr_only_files_are_split_the_same_way_by_validate_and_analyze(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.api import read_table
    from ctxbench.protocols.cef.records import scan_trials

    path = tmp_path / "t.jsonl"
    path.write_bytes((json.dumps(base_record()) + "\r" + json.dumps(base_record()) + "\r\n")
                     .encode())
    errors, total, records = scan_trials([path])
    assert (total, records) == (1, 0)
    with pytest.raises(InputError) as info:
        read_table([path])
    assert str(info.value) == str(errors[0])
    assert "lone CR" in str(errors[0])


def test_budgeted_conditions_sort_by_budget_as_a_number() -> None:
    from ctxbench.protocols.cef.rules import condition_order_key

    names = ["compiled@2048", "compiled@256", "naive_top_k@512", "compiled@1024", "compiled",
             "full"]
    assert sorted(names, key=condition_order_key) == [
        "compiled", "compiled@256", "compiled@1024", "compiled@2048", "full", "naive_top_k@512"]


def test_an_empty_trial_file_is_named(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.api import read_table

    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n")
    with pytest.raises(InputError) as info:
        read_table([path])
    assert str(info.value) == f"{path}: expected at least one trial record, got none"


def test_a_valid_record_compiles_no_single_rule_test() -> None:
    # Each rule's own test is compiled on the first invalid record only (start-up time);
    # the error it then names is the one a fresh process gives.
    code = (
        "from ctxbench.core import ruletable\n"
        "from ctxbench.protocols.cef.records import check_trial\n"
        "from ctxbench.testing.cef_trials import base_record\n"
        "compiled = len(ruletable._TESTS)\n"
        "check_trial(base_record(), path='t.jsonl', line=1)\n"
        "print(compiled, len(ruletable._TESTS))\n"
        "try:\n"
        "    check_trial(base_record(replicate=-1), path='t.jsonl', line=2)\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    counts, message = done.stdout.splitlines()
    assert counts == "0 1"  # the schema_version rule alone
    assert message == ("t.jsonl:2: replicate: expected an integer in [0, 9007199254740991], "
                       "got the integer -1")
