"""lm-eval samples files (real format) plus provider usage import into rows and CEF trials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.importers import read_usage
from ctxbench.protocols.cef.api import analyze_files
from ctxbench.protocols.public_eval.api import compare_files

DATA = Path(__file__).parent / "data" / "lm_eval"
SAMPLES = (next((DATA / "baseline").glob("samples_gsm8k_*.jsonl")),
           next((DATA / "treatment").glob("samples_gsm8k_*.jsonl")))
USAGE = (DATA / "baseline-usage.jsonl", DATA / "treatment-usage.jsonl")
BASE = ["import", "lm-eval", *map(str, SAMPLES), "--usage", *map(str, USAGE),
        "--metric", "exact_match"]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_guarded(cli, args)
    out, err = capsys.readouterr()
    return code, out, err


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rows_and_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = (tmp_path / "base.jsonl", tmp_path / "treat.jsonl")
    trials = tmp_path / "trials.jsonl"
    code, out, err = _run([*BASE, "--filter", "strict-match", "--rows", *map(str, rows),
                           "--trials", str(trials), "--model", "openai/gpt-4o-mini",
                           "--evidence-metric", "exact_match", "--grounding-metric",
                           "exact_match", "--cost-source", "pricing_snapshot",
                           "--cost-reference", "openai-2026-11", "--treatment-condition",
                           "one-shot"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("imported 6 paired sample(s); wrote ")
    base = _lines(rows[0])
    assert [r["instance_id"] for r in base] == [f"gsm8k/{n}" for n in range(6)]
    assert [r["resolved"] for r in _lines(rows[1])] == [True, True, False, True, True, False]
    usage = read_usage(USAGE[0], id_field="doc_id")
    assert [r["tokens"] for r in base] == [usage[(str(n), 0)].usage.total for n in range(6)]
    report = compare_files(*rows).to_json()
    assert (report["baseline"]["resolved"], report["treatment"]["resolved"]) == (5, 4)

    records = _lines(trials)
    samples = [json.loads(line) for line in SAMPLES[0].read_text().splitlines()]
    assert records[0]["context_sha256"] == samples[0]["prompt_hash"]
    assert records[0]["response_text"] == samples[0]["filtered_resps"][0]
    assert {r["condition"] for r in records} == {"raw", "one-shot"}
    assert records[0]["provider_request_id"] == "req_doc_id_0_1.0"
    cef = analyze_files([trials], overrides={"bootstrap_samples": 1000})
    assert cef.inputs.formats == {"ctxbench.trial.v1": 12}
    raw = cef.aggregate.operating_points[0]
    assert raw.task_score == pytest.approx(5 / 6, abs=1e-6)


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _run(args, capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    return err


def test_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["--rows", str(tmp_path / "b"), str(tmp_path / "t")]
    err = _error([*BASE, *rows], capsys)
    assert f"{SAMPLES[0]}: filter: expected one filter (or --filter NAME), got " \
        "flexible-extract, strict-match" in err

    short = tmp_path / "usage.jsonl"
    short.write_text("".join(USAGE[1].read_text().splitlines(keepends=True)[1:]))
    err = _error(["import", "lm-eval", *map(str, SAMPLES), "--usage", str(USAGE[0]),
                  str(short), "--metric", "exact_match", "--filter", "strict-match", *rows],
                 capsys)
    assert f"{short}: doc_id: expected usage for doc_id 0 (task gsm8k, {SAMPLES[1]}:1), " \
        "got none" in err

    fewer_dir = tmp_path / "fewer"
    fewer_dir.mkdir()
    fewer = fewer_dir / SAMPLES[1].name
    fewer.write_text("".join(line for line in SAMPLES[1].read_text().splitlines(keepends=True)
                             if not line.startswith('{"doc_id": 3,')))
    err = _error(["import", "lm-eval", str(SAMPLES[0]), str(fewer), "--usage",
                  *map(str, USAGE), "--metric", "exact_match", "--filter", "strict-match",
                  "--rows", str(tmp_path / "b"), str(tmp_path / "tt")], capsys)
    assert f"{USAGE[1]}:4: doc_id: expected a document of {fewer} (run 0), got doc_id 3" in err

    err = _error([*BASE[:-1], "acc", "--filter", "strict-match", *rows], capsys)
    assert f"{SAMPLES[0]}:1: metrics: expected a list naming 'acc', got" in err

    renamed = tmp_path / "gsm8k.jsonl"
    renamed.write_text(SAMPLES[0].read_text())
    err = _error(["import", "lm-eval", str(renamed), str(SAMPLES[1]), "--usage",
                  *map(str, USAGE), "--metric", "exact_match", *rows], capsys)
    assert f"{renamed}: expected an lm-eval samples file named samples_<task>_<date>.jsonl" in err

    err = _error([*BASE, "--filter", "strict-match", "--trials", str(tmp_path / "x")], capsys)
    assert "--trials needs --model PROVIDER/MODEL" in err
