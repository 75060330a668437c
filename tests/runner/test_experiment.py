"""End to end: fixture and loopback runs, resume, retries, errors, secrets, artifacts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import InputError, derive_seed, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.schemas import validator
from ctxbench.testing.loopback import LoopbackServer


def trials(path: Path) -> list[dict[str, Any]]:
    return [item.value for item in iter_jsonl(path)]


def assert_valid_trials(path: Path) -> None:
    check = validator("ctxbench.trial.v1")
    for record in trials(path):
        errors = [e.message for e in check.iter_errors(record)]
        assert not errors, errors
    from ctxbench.protocols.cef.records import validate_trials

    assert validate_trials([path]) == []


def test_fixture_qa_run_writes_every_artifact(make_spec: Callable[..., Path]) -> None:
    spec = make_spec()
    summary = run_experiment(spec)
    out = spec.parent / "out"
    assert summary.planned == 12 and summary.completed == 12 and not summary.interrupted
    assert sorted(p.name for p in out.iterdir()) == [
        "cef-prereg.json", "cef-report.json", "cef-report.md", "manifest.json", "packets",
        "trials.jsonl"]
    assert_valid_trials(out / "trials.jsonl")
    records = trials(out / "trials.jsonl")
    assert {r["usage_source"] for r in records} == {"deterministic_fixture"}
    assert {r["cost_source"] for r in records} == {"zero_cost_fixture"}
    baseline = [r for r in records if r["condition"] == "full_permitted_context"]
    assert all(r["context_commit_id"] is None for r in baseline)
    assert all(str(r["context_commit_id"]).startswith("ctx_") for r in records
               if r["strategy"] == "compiled")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert not list(validator("ctxbench.run-manifest.v1").iter_errors(manifest))
    assert manifest["trials_planned"] == 12 and manifest["labels"]
    report = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert report["preregistration"]["document"]["baseline"] == "full_permitted_context"
    assert report["claim_class"]["class"] == "conformance_fixture"
    assert (out / "cef-report.md").read_text(encoding="utf-8").startswith(
        "> **conformance fixture")
    assert any(v.startswith("CEF compiled@200 vs full_permitted_context:")
               for v in summary.verdicts)


def test_existing_run_needs_resume_and_resume_skips(make_spec: Callable[..., Path]) -> None:
    spec = make_spec()
    run_experiment(spec)
    with pytest.raises(InputError, match=r"already holds a run; continue it with "
                       r"`ctxbench run .*exp.toml --resume`"):
        run_experiment(spec)
    again = run_experiment(spec, resume=True)
    assert again.completed == 0 and again.skipped == 12
    assert len(trials(spec.parent / "out" / "trials.jsonl")) == 12


def test_resume_refuses_a_changed_spec(make_spec: Callable[..., Path]) -> None:
    spec = make_spec()
    run_experiment(spec)
    spec.write_text(spec.read_text(encoding="utf-8").replace("seed = 11", "seed = 12"),
                    encoding="utf-8")
    with pytest.raises(InputError, match="the spec changed since this run started"):
        run_experiment(spec, resume=True)


def test_eceb_seed_run_writes_eceb_artifacts(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(
        'name = "seed"\nseed = 3\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 2\n'
        '[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n', encoding="utf-8")
    summary = run_experiment(tmp_path / "exp.toml")
    out = tmp_path / "out"
    assert_valid_trials(out / "trials.jsonl")
    run_doc = json.loads((out / "eceb-run.json").read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/run-v0.1").iter_errors(run_doc))
    assert run_doc["claim_class"] == "conformance_seed"
    budgets = {o["budget"] for o in run_doc["observations"]}
    assert None in budgets and 256 in budgets
    report = json.loads((out / "eceb-report.json").read_text(encoding="utf-8"))
    assert report["schema"] == "symgliph.eceb/report-v0.1"
    assert any(v.startswith("ECEB compiled:") for v in summary.verdicts)
    assert (out / "eceb-report.md").exists()
    # the seed is synthetic: declared so before any trial, so CEF never headlines it
    prereg = json.loads((out / "cef-prereg.json").read_text(encoding="utf-8"))
    assert prereg["conformance_workloads"] == [run_doc["benchmark_id"]]
    cef = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert cef["claim_class"]["conformance_workloads"] == prereg["conformance_workloads"]
    assert cef["headlines"] == []


def test_retries_are_recorded_and_billed(make_spec: Callable[..., Path],
                                         tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({
        "schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai",
        "model": "loop", "effective_date": "2026-01-01",
        "source_reference": "test rates, not a real price list",
        "rates_usd_per_million": {"uncached_input": 2, "cached_input": 1, "cache_write": 0,
                                  "output": 8}}), encoding="utf-8")
    with LoopbackServer(failures_per_seed=1, fail_status=429) as server:
        spec = make_spec(provider="openai", replicates=1,
                         extra_model=f'model = "loop"\nbase_url = "{server.base_url}"\n',
                         limits="[limits]\nretries = 2\nbackoff_s = 0\n")
        text = spec.read_text(encoding="utf-8").replace('pricing = "self_hosted"',
                                                        'pricing = "prices.json"')
        spec.write_text(text, encoding="utf-8")
        run_experiment(spec)
        seen = server.requests
    records = trials(spec.parent / "out" / "trials.jsonl")
    assert len(seen) == 2 * len(records)
    for r in records:
        attempts = r["attempts"]
        assert isinstance(attempts, list)
        assert [a["outcome"] for a in attempts] == ["error", "success"]
        assert attempts[0]["error_type"] == "http_429" and attempts[0]["http_status"] == 429
        assert r["outcome"] == "success" and r["cost_source"] == "pricing_snapshot"
        assert str(r["cost_source_reference"]).startswith("blake3:")
        assert r["context_tokens"] == sum(a["context_tokens"] for a in attempts)
        assert r["billed_cost_usd"] == pytest.approx(sum(a["billed_cost_usd"] for a in attempts))
        assert r["billed_cost_usd"] > 0 and r["cached_input_tokens"] > 0
        assert str(r["provider_request_id"]).startswith("loopback-")
    assert_valid_trials(spec.parent / "out" / "trials.jsonl")


def test_requests_carry_the_trials_seed(make_spec: Callable[..., Path]) -> None:
    with LoopbackServer() as server:
        spec = make_spec(provider="openai", replicates=1,
                         extra_model=f'model = "loop"\nbase_url = "{server.base_url}"\n')
        run_experiment(spec)
        seeds = sorted(r.seed for r in server.requests if r.seed is not None)
    expected = sorted(derive_seed(11, "request", str(r["task_id"]), str(r["condition"]),
                                  str(r["replicate"])) % 2**31
                      for r in trials(spec.parent / "out" / "trials.jsonl"))
    assert seeds == expected


def test_no_response_means_an_error_trial_with_zero_usage(
        make_spec: Callable[..., Path]) -> None:
    spec = make_spec(provider="openai", replicates=1,
                     extra_model='model = "m"\nbase_url = "http://127.0.0.1:9/v1"\n',
                     limits="[limits]\nretries = 1\nbackoff_s = 0\ntimeout_s = 5\n")
    summary = run_experiment(spec)
    records = trials(spec.parent / "out" / "trials.jsonl")
    assert summary.completed == 6
    for r in records:
        assert r["outcome"] == "error" and r["error_type"] == "connection_error"
        assert r["usage_source"] == "provider_error" and r["context_tokens"] == 0
        assert r["response_text"] is None and r["task_score"] == 0.0
        assert len(r["attempts"]) == 2
        assert str(r["provider_request_id"]).startswith("unavailable:")
    assert_valid_trials(spec.parent / "out" / "trials.jsonl")


def test_api_key_never_reaches_an_artifact(make_spec: Callable[..., Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ctxbench-secret-4f9a1c7e2b"
    monkeypatch.setenv("CTXBENCH_TEST_KEY", secret)
    with LoopbackServer() as server:
        spec = make_spec(provider="openai", replicates=1, extra_model=(
            f'model = "loop"\nbase_url = "{server.base_url}"\n'
            'api_key_env = "CTXBENCH_TEST_KEY"\n'))
        run_experiment(spec)
    files = [p for p in (spec.parent / "out").rglob("*") if p.is_file()]
    assert len(files) >= 5
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    manifest = json.loads((spec.parent / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["provider"]["api_key_env"] == "CTXBENCH_TEST_KEY"


def test_missing_key_variable_is_an_input_error(make_spec: Callable[..., Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXBENCH_ABSENT_KEY", raising=False)
    spec = make_spec(provider="openai", extra_model=(
        'model = "m"\napi_key_env = "CTXBENCH_ABSENT_KEY"\n'))
    with pytest.raises(InputError, match="the environment variable CTXBENCH_ABSENT_KEY is not "
                       "set"):
        run_experiment(spec)


def test_pricing_snapshot_must_match_the_model(make_spec: Callable[..., Path],
                                               tmp_path: Path) -> None:
    (tmp_path / "prices.json").write_text(json.dumps({
        "schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai",
        "model": "other-model", "effective_date": "2026-01-01", "source_reference": "test",
        "rates_usd_per_million": {"uncached_input": 1, "cached_input": 1, "cache_write": 0,
                                  "output": 1}}), encoding="utf-8")
    spec = make_spec(provider="openai", extra_model='model = "m"\n')
    spec.write_text(spec.read_text(encoding="utf-8").replace(
        'pricing = "self_hosted"', 'pricing = "prices.json"'), encoding="utf-8")
    with pytest.raises(InputError, match=r"prices.json: model: expected the spec's model "
                       r"openai/m, got openai/other-model"):
        run_experiment(spec)


def test_budget_below_the_prompt_overhead_is_refused(make_spec: Callable[..., Path]) -> None:
    spec = make_spec(conditions='[[conditions]]\nstrategy = "full_permitted_context"\n'
                                '[[conditions]]\nstrategy = "compiled"\nbudgets = [5]\n')
    with pytest.raises(InputError, match=r"condition compiled@5: the budget is smaller than "
                       r"the prompt's own overhead \(\d+ tokens for task q1\)"):
        run_experiment(spec)
    assert not (spec.parent / "out").exists()


def test_ladder_needs_a_workload_ladder(make_spec: Callable[..., Path]) -> None:
    spec = make_spec(conditions='[[conditions]]\nstrategy = "full_permitted_context"\n'
                                '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n')
    with pytest.raises(InputError, match=r'asks for budgets = "ladder", but the workload '
                       r"declares no budget ladder"):
        run_experiment(spec)


def test_external_strategy_and_progress_bar(make_spec: Callable[..., Path]) -> None:
    spec = make_spec(replicates=1, conditions=(
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nname = "packer"\nstrategy = "external"\n'
        'command = "runner.external_packer:pack"\nbudgets = [300]\n'))
    summary = run_experiment(spec, show_progress=True)
    records = trials(spec.parent / "out" / "trials.jsonl")
    external = [r for r in records if r["strategy"] == "external"]
    assert summary.completed == 4 and len(external) == 2
    assert {r["condition"] for r in external} == {"packer@300"}
    assert all(str(r["context_commit_id"]).startswith("ctx_") for r in external)
    assert_valid_trials(spec.parent / "out" / "trials.jsonl")


def test_no_artifact_holds_an_absolute_path(make_spec: Callable[..., Path]) -> None:
    spec = make_spec(replicates=1)
    out = spec.parent / "out"
    run_experiment(spec)
    for path in sorted(out.iterdir()):
        if path.suffix in (".json", ".md", ".jsonl"):
            assert str(spec.parent) not in path.read_text(encoding="utf-8"), path.name
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["spec"]["path"] == "../exp.toml"
    assert manifest["workload"]["source"] == "../qa.jsonl"
    assert manifest["workload"]["version"].startswith("blake3:")
    cef = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert cef["methodology"]["reproduce"] == (
        "ctxbench cef analyze trials.jsonl --prereg cef-prereg.json --output cef-report.json")
