"""Inspect AI logs made by the real ``inspect_ai.eval`` import into CEF and public-eval reports.

Two runs of :mod:`inspect_task` (conditions ``full`` and ``trimmed``, two epochs each) on
Inspect's offline ``mockllm/model`` write real ``.eval`` logs; the importer reads them with
Inspect's own reader, and the existing analyzers consume what it writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="pip install 'ctxbench[inspect]'")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import InputError
from ctxbench.importers import TrialSettings, import_inspect
from ctxbench.protocols.cef.api import analyze_files
from ctxbench.protocols.public_eval.api import compare_files

from .inspect_task import ITEMS, REASONING, answering_model, catalogue

SCORERS = ["--scorer", "match", "--evidence-scorer", "evidence_recall",
           "--grounding-scorer", "unsupported_claims"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("inspect")
    paths = []
    for condition in ("full", "trimmed"):
        model = get_model("mockllm/model", custom_outputs=answering_model())
        [log] = inspect_eval(catalogue(condition=condition), model=model,
                             log_dir=str(out / condition), display="none", epochs=2)
        assert log.status == "success"
        paths.append(Path(log.location))
    return paths[0], paths[1]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_guarded(cli, args)
    out, err = capsys.readouterr()
    return code, out, err


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_end_to_end_into_both_reports(logs: tuple[Path, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    base_rows, treat_rows = tmp_path / "base.jsonl", tmp_path / "treat.jsonl"
    trials = tmp_path / "trials.jsonl"
    code, out, err = _run(["import", "inspect", str(logs[0]), str(logs[1]), "--rows",
                           str(base_rows), str(treat_rows), "--trials", str(trials),
                           "--treatment-condition", "trimmed", *SCORERS], capsys)
    assert (code, err) == (0, "")
    assert out == (f"imported {2 * ITEMS} paired sample(s); wrote {trials} (24 record(s)), "
                   f"{base_rows} (12 record(s)), {treat_rows} (12 record(s))\n")

    # Token accounting against Inspect's own ModelUsage, sample by sample.
    for log_path, rows_path in zip(logs, (base_rows, treat_rows), strict=True):
        log = read_eval_log(str(log_path))
        rows = {(r["instance_id"], r["run"]): r for r in _rows(rows_path)}
        for sample in log.samples or []:
            usage = sample.model_usage["mockllm/model"]
            row = rows[(str(sample.id), sample.epoch - 1)]
            read = usage.input_tokens_cache_read or 0
            write = usage.input_tokens_cache_write or 0
            assert row["cached_input_tokens"] == read
            assert row["input_tokens"] == usage.input_tokens + write
            assert row["reasoning_tokens"] == REASONING == usage.reasoning_tokens
            assert row["output_tokens"] == usage.output_tokens - REASONING
            assert row["tokens"] == usage.input_tokens + read + write + usage.output_tokens
            assert row["resolved"] is ((sample.scores or {})["match"].value == "C")
            assert isinstance(row["latency_ms"], int)
        assert any(r["cached_input_tokens"] > 0 for r in rows.values())

    report = compare_files(base_rows, treat_rows).to_json()
    assert report["tasks"] == ITEMS and report["cells"] == 2 * ITEMS
    assert report["baseline"]["resolved"] == 12 and report["treatment"]["resolved"] == 10
    assert report["baseline"]["tokens"] == sum(r["tokens"] for r in _rows(base_rows))
    assert report["savings"]["tokens"]["percent_saved"] > 70
    assert report["status"] == "not_evaluable"  # fewer than 10 instances

    cef = analyze_files([trials], overrides={"bootstrap_samples": 1000})
    assert cef.inputs.formats == {"ctxbench.trial.v1": 24}
    assert cef.claim_class.class_ == "conformance_fixture"
    raw, trimmed = cef.aggregate.operating_points
    assert (raw.condition, trimmed.condition) == ("raw", "trimmed")
    assert trimmed.task_score == pytest.approx(10 / 12, abs=1e-6)
    assert trimmed.evidence_recall == pytest.approx(10 / 12, abs=1e-6)
    records = _rows(trials)
    assert raw.context_tokens_total == sum(
        r["context_tokens"] for r in records if r["condition"] == "raw")
    for record in records:
        assert record["context_tokens"] >= record["cached_input_tokens"] + \
            record["cache_write_tokens"]

    code, out, _ = _run(["public-eval", str(base_rows), str(treat_rows)], capsys)
    assert code == 0 and "**Status: not_evaluable**" in out


def test_library_call_writes_rows_only(logs: tuple[Path, Path], tmp_path: Path) -> None:
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    summary = import_inspect(logs[0], logs[1], rows=rows, scorer="match",
                             settings=TrialSettings("raw", "trimmed"))
    assert summary.pairs == 12 and not (tmp_path / "trials.jsonl").exists()
    assert [r["instance_id"] for r in _rows(rows[0])][:2] == ["q0", "q0"]
    # The same log as Inspect's .json format gives the same rows.
    as_json = tmp_path / "base.json"
    write_eval_log(read_eval_log(str(logs[0])), str(as_json))
    again = (tmp_path / "b2.jsonl", tmp_path / "t2.jsonl")
    import_inspect(as_json, logs[1], rows=again, scorer="match")
    assert again[0].read_bytes() == rows[0].read_bytes()


def _one_line_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _run(args, capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("ctxbench: error: ")
    return err


def test_missing_usage_is_a_located_error(logs: tuple[Path, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = read_eval_log(str(logs[1]))
    assert log.samples is not None
    log.samples[3].model_usage = {}
    broken = tmp_path / "no-usage.eval"
    write_eval_log(log, str(broken))
    err = _one_line_error(["import", "inspect", str(logs[0]), str(broken), "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t"), "--scorer", "match"],
                          capsys)
    sample = log.samples[3]
    assert f"{broken}: sample {sample.id!r} epoch {sample.epoch}: model_usage: expected the " \
        "token usage of mockllm/model, got none" in err


def test_unmatched_ids_are_refused(logs: tuple[Path, Path], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = read_eval_log(str(logs[1]))
    assert log.samples is not None
    log.samples = [s for s in log.samples if not (s.id == "q2" and s.epoch == 2)]
    fewer = tmp_path / "fewer.eval"
    write_eval_log(log, str(fewer))
    err = _one_line_error(["import", "inspect", str(logs[0]), str(fewer), "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t"), "--scorer", "match"],
                          capsys)
    assert f"{fewer}: expected a sample matching each baseline sample, got none for " \
        f"'q2' run 1 ({logs[0]})" in err


def test_wrong_format_and_missing_score(logs: tuple[Path, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "rows.eval"
    bogus.write_text('{"instance_id": "x"}\n')
    err = _one_line_error(["import", "inspect", str(bogus), str(logs[1]), "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t")], capsys)
    assert f"{bogus}: expected an Inspect AI log (.eval or .json), got a file Inspect " \
        "cannot read" in err
    err = _one_line_error(["import", "inspect", str(logs[0]), str(logs[1]), "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t")], capsys)
    assert f"{logs[0]}: scores: expected one scorer (or --scorer NAME), got " \
        "evidence_recall, match, unsupported_claims" in err
    err = _one_line_error(["import", "inspect", str(logs[0]), str(logs[1]), "--trials",
                           str(tmp_path / "x.jsonl"), "--scorer", "match"], capsys)
    assert "evidence_recall: expected a value for a CEF trial (name its scorer), got none" in err
    log = read_eval_log(str(logs[0]))
    assert log.samples is not None
    del log.samples[0].scores["match"]  # type: ignore[union-attr]
    unscored = tmp_path / "unscored.json"
    write_eval_log(log, str(unscored))
    err = _one_line_error(["import", "inspect", str(unscored), str(logs[1]), "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t"), "--scorer", "match"],
                          capsys)
    assert f"{unscored}: sample 'q0' epoch 1: scores.match: expected a score, got none" in err


def test_errored_sample_stays_as_a_failure(logs: tuple[Path, Path], tmp_path: Path) -> None:
    answer = answering_model()

    def flaky(messages: list[Any], *rest: Any) -> Any:
        if "item 1?" in messages[-1].text:
            raise RuntimeError("provider timed out")
        return answer(messages, *rest)

    model = get_model("mockllm/model", custom_outputs=flaky)
    [log] = inspect_eval(catalogue(condition="trimmed"), model=model, epochs=2,
                         log_dir=str(tmp_path / "logs"), display="none", fail_on_error=False)
    assert sum(s.error is not None for s in log.samples or []) == 2
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    trials = tmp_path / "trials.jsonl"
    import_inspect(logs[0], log.location, rows=rows, trials=trials, scorer="match",
                   evidence_scorer="evidence_recall", grounding_scorer="unsupported_claims")
    failed = [r for r in _rows(rows[1]) if r["instance_id"] == "q1"]
    assert [(r["resolved"], r["tokens"]) for r in failed] == [(False, 0), (False, 0)]
    errors = [r for r in _rows(trials) if r["outcome"] == "error"]
    assert [(r["task_id"], r["usage_source"], r["error_type"]) for r in errors] == [
        ("q1", "provider_error", "inspect_sample_error")] * 2
    report = analyze_files([trials], overrides={"bootstrap_samples": 1000})
    assert report.aggregate.operating_points[1].failures == 2


def test_missing_extra_gives_the_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    err = _one_line_error(["import", "inspect", "a.eval", "b.eval", "--rows",
                           str(tmp_path / "b"), str(tmp_path / "t")], capsys)
    assert err == "ctxbench: error: reading Inspect AI logs needs inspect-ai: pip install " \
        "'ctxbench[inspect]'\n"


def _as_provider(log_path: Path, out: Path, cost: float | None) -> Path:
    """The same log as if a priced provider model had run it (Inspect's total_cost)."""
    log = read_eval_log(str(log_path))
    log.eval.model = "openai/gpt-4o-mini"
    for sample in log.samples or []:
        usage = sample.model_usage.pop("mockllm/model")
        usage.total_cost = cost
        sample.model_usage["openai/gpt-4o-mini"] = usage
        for event in sample.events:
            if event.event == "model":
                event.model = "openai/gpt-4o-mini"
    write_eval_log(log, str(out))
    return out


def test_provider_costs_and_their_absence(logs: tuple[Path, Path], tmp_path: Path) -> None:
    base = _as_provider(logs[0], tmp_path / "base.eval", 0.002)
    treat = _as_provider(logs[1], tmp_path / "treat.eval", 0.0005)
    trials = tmp_path / "trials.jsonl"
    scorers: dict[str, Any] = {"scorer": "match", "evidence_scorer": "evidence_recall",
                               "grounding_scorer": "unsupported_claims"}
    import_inspect(base, treat, trials=trials, **scorers)
    records = _rows(trials)
    assert {(r["usage_source"], r["cost_source"], r["cost_source_reference"])
            for r in records if r["condition"] == "raw"} == {
        ("provider_log", "pricing_snapshot", "base.eval")}
    assert sum(r["billed_cost_usd"] for r in records) == pytest.approx(12 * 0.0025)
    report = analyze_files([trials], overrides={"bootstrap_samples": 1000})
    assert report.claim_class.class_ != "conformance_fixture"

    unpriced = _as_provider(logs[1], tmp_path / "unpriced.eval", None)
    with pytest.raises(InputError, match=r"unpriced\.eval: sample 'q0' epoch 1: "
                       r"billed_cost_usd: expected a value for a CEF trial \(the log "
                       r"recorded no cost: pass --cost-source and --cost-reference\)"):
        import_inspect(base, unpriced, trials=trials, **scorers)
    import_inspect(base, unpriced, trials=trials, settings=TrialSettings(
        cost_source="self_hosted_no_api_fee", cost_reference="on-prem"), **scorers)
    assert {r["cost_source"] for r in _rows(trials)} == {"self_hosted_no_api_fee"}
