"""A run that meets failures inside its own process: a crash in one trial is that trial's
failure; an error that stops the run leaves a resumable state and says how to resume."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ctxbench.core import iter_jsonl
from ctxbench.protocols.cef.records import validate_trials
from ctxbench.runner.execute import TrialResult
from ctxbench.runner.experiment import RunStopped, run_experiment, run_loaded
from ctxbench.runner.spec import load_spec


def test_a_crash_inside_a_trial_is_that_trials_failure(make_spec: Callable[..., Path]) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) % 2:
            raise LookupError("a bug below the provider boundary")
        return httpx.Response(200, json={
            "id": "ok", "choices": [{"message": {"content": "Alice"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1}})

    spec = make_spec(provider="openai", replicates=1,
                     extra_model='model = "m"\nbase_url = "http://provider.invalid/v1"\n',
                     limits="[limits]\nconcurrency = 1\n")
    summary = run_experiment(spec, provider_options={"transport": httpx.MockTransport(handler)})
    path = spec.parent / "out" / "trials.jsonl"
    records = [i.value for i in iter_jsonl(path)]
    assert summary.completed == len(records) == 6 and "cef-report.json" in summary.reports
    crashed = [r for r in records if r["outcome"] == "error"]
    assert len(crashed) == 3 and len(calls) == 6
    for record in crashed:
        assert record["error_type"] == "runner_error:LookupError"
        assert record["usage_source"] == "runner_error" and record["context_tokens"] == 0
    assert validate_trials([path]) == []


def test_an_error_that_stops_the_run_says_how_to_resume(make_spec: Callable[..., Path]) -> None:
    spec_path = make_spec(replicates=2, limits="[limits]\nconcurrency = 1\n")
    seen: list[TrialResult] = []

    def fail_on_third(result: TrialResult) -> None:
        seen.append(result)
        if len(seen) == 3:
            raise OSError(28, "No space left on device")

    with pytest.raises(RunStopped) as info:
        run_loaded(load_spec(spec_path), spec_arg=str(spec_path), on_result=fail_on_third)
    trials = spec_path.parent / "out" / "trials.jsonl"
    assert info.value.exit_code == 3
    assert str(info.value) == (
        "No space left on device (the run stopped; every finished trial is recorded in "
        f"{trials}; resume with: ctxbench run {spec_path} --resume)")
    assert trials.read_bytes().count(b"\n") == 3
    summary = run_experiment(spec_path, resume=True)
    assert (summary.skipped, summary.completed, summary.planned) == (3, 9, 12)
    assert "cef-report.json" in summary.reports


def test_an_output_path_that_is_a_file_is_one_line(make_spec: Callable[..., Path]) -> None:
    spec_path = make_spec(top="")
    spec_path.write_text(spec_path.read_text(encoding="utf-8").replace(
        'output = "out"', 'output = "qa.jsonl/out"'), encoding="utf-8")
    with pytest.raises(RunStopped) as info:
        run_experiment(spec_path)
    assert info.value.exit_code == 3
    assert str(info.value).startswith(f"{spec_path.parent / 'qa.jsonl' / 'out'}: Not a "
                                      "directory (the run stopped;")


def test_trials_the_corpus_no_longer_reproduces_are_not_offered_a_resume(
        tmp_path: Path) -> None:
    # Resuming would stop at the same digest again: the message says to run afresh.
    from ctxbench.core import IntegrityError
    from ctxbench.runner.experiment import _stopped

    trials = tmp_path / "out" / "trials.jsonl"
    stopped = _stopped(IntegrityError(f"{trials}:1: context_sha256: the rebuilt context of t "
                                      "/ compiled@256 does not match the recorded digest"),
                       trials=trials, resume_command="ctxbench run s.toml --resume",
                       phase="writing the reports")
    assert str(stopped) == (
        f"{trials}:1: context_sha256: the rebuilt context of t / compiled@256 does not match "
        f"the recorded digest (writing the reports; the trials recorded in {trials} do not "
        "match this corpus and compiler; run again into another output directory)")
    assert "--resume" not in str(stopped) and stopped.exit_code == 2


def test_a_lost_coordinator_records_no_unsent_trial(make_spec: Callable[..., Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The limiter stands for a cluster's coordinator that dies at its third call: the
    # second trial (sent once, then retrying) ends as a failure with that attempt; the
    # third (nothing sent) is not recorded and the run stops, resumably.
    from ctxbench.runner import experiment
    from ctxbench.runner.execute import TrialAbandoned

    acquired: list[int] = []

    class DyingLimiter:
        def __init__(self, *args: object) -> None:
            pass

        async def acquire(self, tokens: int = 0) -> None:
            acquired.append(tokens)
            if len(acquired) >= 3:
                raise TrialAbandoned("the coordinator is gone")

    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 2:
            return httpx.Response(503, json={"error": "busy"})
        return httpx.Response(200, json={
            "id": f"r{len(calls)}", "choices": [{"message": {"content": "Alice"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1}})

    spec = make_spec(provider="openai", replicates=1,
                     extra_model='model = "m"\nbase_url = "http://provider.invalid/v1"\n',
                     limits="[limits]\nconcurrency = 1\nbackoff_s = 0.01\n")
    options = {"transport": httpx.MockTransport(handler)}
    with monkeypatch.context() as patch:
        patch.setattr(experiment, "RateLimiter", DyingLimiter)
        with pytest.raises(RunStopped, match=r"the coordinator is gone \(the run stopped; "
                           r"every finished trial is recorded in .*; resume with: ") as stop:
            run_experiment(spec, provider_options=options)
    assert stop.value.exit_code == 3
    path = spec.parent / "out" / "trials.jsonl"
    first, second = [i.value for i in iter_jsonl(path)]
    assert first["outcome"] == "success"
    assert [a["error_type"] for a in second["attempts"]] == ["http_503", "coordinator_lost"]
    assert len(calls) == 2
    summary = run_experiment(spec, resume=True, provider_options=options)
    assert (summary.completed, summary.skipped) == (4, 2) and len(calls) == 6
