"""Whole runs against a hostile server: each run ends within its deadlines, accounts for
every attempt with a reason, writes no API key anywhere, and leaves reports behind."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxbench.core import iter_jsonl
from ctxbench.runner.experiment import RunSummary, run_experiment
from ctxbench.runner.redact import REDACTED
from runner.hostile_server import HostileServer

KEY_ENV = "CTXBENCH_TEST_HOSTILE_KEY"
KEY = "sk-hostile-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"
TIMEOUT_S = 1.0
SLACK_S = 1.5  # the deadline is enforced to within DEADLINE_SLACK_S; the rest is a busy CI
RETRIES = 1
TRIALS = 2 * 3  # two QA tasks x (full context, compiled@200, compiled@400) x 1 replicate


def run_against(server: HostileServer, make_spec: Callable[..., Path],
                monkeypatch: pytest.MonkeyPatch, *, timeout_s: float = TIMEOUT_S,
                provider: str = "openai"
                ) -> tuple[RunSummary, list[dict[str, object]], float, Path]:
    monkeypatch.setenv(KEY_ENV, KEY)
    spec = make_spec(provider=provider, replicates=1,
                     extra_model=f'model = "m"\nbase_url = "{server.base_url}"\n'
                                 f'api_key_env = "{KEY_ENV}"\n',
                     limits=f"[limits]\nconcurrency = 4\ntimeout_s = {timeout_s}\n"
                            f"retries = {RETRIES}\nbackoff_s = 0.01\nmax_retry_wait_s = 3\n")
    started = time.monotonic()
    summary = run_experiment(spec)
    elapsed = time.monotonic() - started
    out = spec.parent / "out"
    return summary, [i.value for i in iter_jsonl(out / "trials.jsonl")], elapsed, out


def assert_safe(summary: RunSummary, records: list[dict[str, object]], out: Path,
                *, timeout_s: float = TIMEOUT_S) -> list[dict[str, object]]:
    """The invariants every hostile mode must keep; returns every attempt."""
    assert not summary.interrupted
    assert len(records) == TRIALS
    assert (out / "cef-report.json").is_file() and (out / "cef-report.md").is_file()
    attempts: list[dict[str, object]] = []
    for record in records:
        tried = record["attempts"]
        assert isinstance(tried, list) and 1 <= len(tried) <= RETRIES + 1
        assert [a["attempt"] for a in tried] == list(range(1, len(tried) + 1))
        for attempt in tried:
            assert attempt["outcome"] in ("success", "error")
            if attempt["outcome"] == "error":
                assert isinstance(attempt["error_type"], str) and attempt["error_type"]
            latency = attempt["latency_ms"]
            assert isinstance(latency, float | int) and latency <= (timeout_s + SLACK_S) * 1000
        if record["outcome"] == "error":
            assert record["error_type"] == tried[-1]["error_type"]
        else:
            assert isinstance(record["context_tokens"], int) and record["context_tokens"] >= 1
        attempts.extend(tried)
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data, path
            assert json.dumps(KEY).encode()[1:-1] not in data, path
    return attempts


RETRIED = {"deadline_exceeded", "connection_error"}


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("mode", "error_types", "timeout_s"), [
    ("slow_drip", {"deadline_exceeded"}, TIMEOUT_S),
    # The size bound normally ends these first; on a machine too busy to read 16 MiB within
    # the deadline, the deadline does. Either way the attempt is bounded and recorded.
    ("huge_body", {"response_too_large", "deadline_exceeded"}, 5.0),
    ("gzip_bomb", {"decompressed_too_large", "deadline_exceeded"}, 5.0),
    ("deep_nesting", {"response_too_deep"}, TIMEOUT_S),
    ("zero_usage", {"usage_zero_context"}, TIMEOUT_S),
    ("absurd_usage", {"usage_absurd"}, TIMEOUT_S),
    ("negative_usage", {"usage_negative"}, TIMEOUT_S),
    ("float_usage", {"usage_not_integer"}, TIMEOUT_S),
    ("truncated_body", {"connection_error"}, TIMEOUT_S),
    ("connection_reset", {"connection_error"}, TIMEOUT_S),
    ("wrong_content_type", {"unexpected_content_type"}, TIMEOUT_S),
    ("non_json", {"malformed_response"}, TIMEOUT_S),
    ("lone_surrogate", {"malformed_response"}, TIMEOUT_S),
])
def test_hostile_mode_fails_every_trial_with_its_reason(
        mode: str, error_types: set[str], timeout_s: float, make_spec: Callable[..., Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer(mode) as server:
        summary, records, _, out = run_against(server, make_spec, monkeypatch,
                                               timeout_s=timeout_s)
    attempts = assert_safe(summary, records, out, timeout_s=timeout_s)
    assert {r["outcome"] for r in records} == {"error"}
    assert {a["error_type"] for a in attempts} <= error_types
    for record in records:
        tried = record["attempts"]
        assert isinstance(tried, list)
        # Transient failures are retried (once here); the others are not.
        assert [a["error_type"] in RETRIED for a in tried[:-1]] == [True] * (len(tried) - 1)
        if tried[-1]["error_type"] in RETRIED:
            assert len(tried) == RETRIES + 1
        assert record["usage_source"] == "provider_error" and record["billed_cost_usd"] == 0
    assert len(server.seen) == len(attempts)
    # No bound on the run's wall time: on a loaded machine it says nothing about ctxbench
    # (each attempt's deadline is checked above; the timeout marker catches a hang).


@pytest.mark.timeout(120)
def test_header_echo_keeps_no_key(make_spec: Callable[..., Path],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer("header_echo") as server:
        summary, records, _, out = run_against(server, make_spec, monkeypatch)
    assert_safe(summary, records, out)
    assert all(s.headers["authorization"] == f"Bearer {KEY}" for s in server.seen)
    assert {r["outcome"] for r in records} == {"success"}
    for record in records:
        assert "Bearer [REDACTED]" in str(record["response_text"])
        assert record["provider_request_id"] == "Bearer [REDACTED]"
        usage = record["provider_usage"]
        assert isinstance(usage, dict)
        assert usage["echo"]["authorization"] == "Bearer [REDACTED]"


@pytest.mark.timeout(120)
def test_anthropic_header_echo_keeps_no_key(make_spec: Callable[..., Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer("header_echo", shape="anthropic") as server:
        summary, records, _, out = run_against(server, make_spec, monkeypatch,
                                               provider="anthropic")
    assert_safe(summary, records, out)
    assert all(s.headers["x-api-key"] == KEY for s in server.seen)
    assert {r["outcome"] for r in records} == {"success"}
    for record in records:
        assert f'"x-api-key": "{REDACTED}"' in str(record["response_text"])
        assert record["provider_request_id"] == f"req-{REDACTED}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("mode", "wait_s"), [("retry_after", 1.0), ("retry_after_date", 1.0)])
def test_retry_after_is_honoured(mode: str, wait_s: float, make_spec: Callable[..., Path],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer(mode) as server:
        summary, records, _, out = run_against(server, make_spec, monkeypatch)
    attempts = assert_safe(summary, records, out)
    assert {r["outcome"] for r in records} == {"success"}
    assert [a["error_type"] for a in attempts].count("http_429") == TRIALS
    by_seed: dict[int | None, list[float]] = {}
    for seen in server.seen:
        by_seed.setdefault(seen.seed, []).append(seen.at)
    assert len(by_seed) == TRIALS
    for first, second in by_seed.values():
        # An HTTP-date has whole-second resolution: "2 s from now" is at least 1 s away.
        assert second - first >= wait_s - 0.05


@pytest.mark.timeout(120)
def test_usage_in_a_5xx_body_is_billed(make_spec: Callable[..., Path],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer("error_5xx_usage") as server:
        summary, records, _, out = run_against(server, make_spec, monkeypatch)
    attempts = assert_safe(summary, records, out)
    assert {a["error_type"] for a in attempts} == {"http_500"}
    assert all(a["context_tokens"] == 100 and a["output_tokens"] == 5 for a in attempts)
    for record in records:
        assert record["outcome"] == "error" and record["usage_source"] == "provider_response"
        assert record["context_tokens"] == 100 * (RETRIES + 1)
        assert record["output_tokens"] == 5 * (RETRIES + 1)
