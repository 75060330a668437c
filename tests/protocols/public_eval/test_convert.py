"""CEF trials -> public-eval rows: one run read under both protocols."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.errors import InputError
from ctxbench.protocols.public_eval import compare_files, read_rows
from ctxbench.protocols.public_eval.convert import convert_cef
from ctxbench.testing.cef_trials import base_record

COMMIT = "ctx_" + "0123456789abcdef" * 2


def _trials(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _pair(task: str, replicate: int = 0, *, score: float = 1.0, tokens: int = 400,
          outcome: str = "success", **extra: Any) -> list[dict[str, Any]]:
    raw = base_record(task_id=task, replicate=replicate, provider_request_id=f"r-{task}")
    treated: dict[str, Any] = {"task_id": task, "replicate": replicate,
                               "condition": "entroly", "context_tokens": tokens,
                               "task_score": score, "context_commit_id": COMMIT,
                               "provider_request_id": f"e-{task}", **extra}
    if outcome == "error":
        treated.update(outcome="error", error_type="timeout", response_text=None,
                       response_sha256=None, usage_source="provider_error", context_tokens=0,
                       output_tokens=0, billed_cost_usd=0.0)
    return [raw, base_record(**treated)]


def test_converts_trials_into_two_loadable_row_files(tmp_path: Path) -> None:
    records = (_pair("t1") + _pair("t2", score=0.5) + _pair("t1", 1, outcome="error")
               + _pair("t2", 1, cost_source="zero_cost_fixture"))
    base_path, treat_path = convert_cef([_trials(tmp_path, records)], baseline="raw",
                                        treatment="entroly", output_dir=tmp_path / "rows")
    assert (base_path.name, treat_path.name) == ("raw.jsonl", "entroly.jsonl")
    treat = [json.loads(line) for line in treat_path.read_text().splitlines()]
    assert [(r["instance_id"], r["run"], r["resolved"]) for r in treat] == [
        ("t1", 0, True), ("t1", 1, False), ("t2", 0, False), ("t2", 1, True)]
    assert treat[0] == {"instance_id": "t1", "run": 0, "resolved": True, "tokens": 420,
                        "usd": 0.0005, "usd_measured": True, "latency_ms": 800,
                        "output_tokens": 20, "reasoning_tokens": 0}
    # MARGINAL requires an integer latency_ms: written as a JSON integer, never 800.0.
    assert '"latency_ms":800,' in treat_path.read_text()
    assert treat[1]["tokens"] == 0 and treat[1]["resolved"] is False
    assert treat[3]["usd_measured"] is False
    assert read_rows(base_path).rows == 4
    report = compare_files(base_path, treat_path).to_json()
    assert report["cells"] == 4 and report["tasks"] == 2
    assert report["treatment"]["usd"] is None


def test_threshold_breakdown_and_pooled_ids(tmp_path: Path) -> None:
    records = [
        *_pair("t1", score=0.8, cached_input_tokens=100, schema_version="ctxbench.trial.v1"),
        base_record(task_id="t1", model="other-model", provider_request_id="x"),
        base_record(task_id="t1", model="other-model", condition="entroly",
                    provider_request_id="y", context_commit_id=COMMIT),
    ]
    base_path, treat_path = convert_cef([_trials(tmp_path, records)], baseline="raw",
                                        treatment="entroly", output_dir=tmp_path,
                                        resolved_threshold=0.75)
    treat = [json.loads(line) for line in treat_path.read_text().splitlines()]
    ids = [r["instance_id"] for r in treat]
    assert ids == sorted(ids) and len(ids) == 2
    assert ids[1].endswith(" / official-f1 / t1")
    first = next(r for r in treat if "gpt-4.1" in r["instance_id"])
    assert first["resolved"] is True
    assert (first["input_tokens"], first["cached_input_tokens"], first["total_tokens"]) == (
        300, 100, 420)
    assert read_rows(treat_path).rows == 2 and read_rows(base_path).rows == 2


def test_converter_rejections(tmp_path: Path) -> None:
    path = _trials(tmp_path, [*_pair("t1"), base_record(task_id="t2")])
    with pytest.raises(InputError, match=r"^treatment: expected a condition present in the "
                                         r"trials \(entroly, raw\), got 'combined'"):
        convert_cef([path], baseline="raw", treatment="combined", output_dir=tmp_path)
    with pytest.raises(InputError, match=r"^treatment: expected a condition other than"):
        convert_cef([path], baseline="raw", treatment="raw", output_dir=tmp_path)
    with pytest.raises(InputError, match=r"^resolved_threshold: expected a number in \[0, 1\]"):
        convert_cef([path], baseline="raw", treatment="entroly", output_dir=tmp_path,
                    resolved_threshold=2.0)
    with pytest.raises(InputError, match=r'expected the same \(instance_id, run\) cells in both '
                                         r'files, got 1 only in .*trials.jsonl \(raw\): "t2"'):
        convert_cef([path], baseline="raw", treatment="entroly", output_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
