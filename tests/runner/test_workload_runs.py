"""End to end on the new workloads: a BFCL slice and a LongBench file, fixture provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import FieldError, InputError, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.spec import load_spec
from ctxbench.schemas import validator
from ctxbench.workloads import load_bfcl, parse_calls

BFCL_SPEC = """
name = "bfcl-slice"
seed = 5
replicates = 1
output = "out"
[workload]
source = "bfcl:live_multiple"
limit = 10
[model]
provider = "fixture"
[[conditions]]
strategy = "full_permitted_context"
[[conditions]]
strategy = "naive_top_k"
budgets = [250, 500]
"""


def _trials(path: Path) -> list[dict[str, Any]]:
    return [item.value for item in iter_jsonl(path)]


def test_bfcl_slice_runs_end_to_end_with_cef_and_eceb_reports(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(BFCL_SPEC, encoding="utf-8")
    summary = run_experiment(tmp_path / "exp.toml")
    out = tmp_path / "out"
    assert summary.planned == 30 and summary.completed == 30
    # Every schema is a public artifact of the slice's registry (docs/workloads.md).
    assert sorted(p.name for p in out.iterdir()) == [
        "bfcl-registry", "cef-prereg.json", "cef-report.json", "cef-report.md",
        "eceb-report.json", "eceb-report.md", "eceb-run.json", "manifest.json",
        "packets", "trials.jsonl"]
    records = _trials(out / "trials.jsonl")
    check = validator("ctxbench.trial.v1")
    assert all(not list(check.iter_errors(r)) for r in records)
    assert {r["scorer"] for r in records} == {"bfcl_ast"}
    workload = load_bfcl("live_multiple", limit=10)
    tasks = {t.task_id: t for t in workload.tasks}
    for record in records:
        answer = str(record["response_text"])
        task = tasks[str(record["task_id"])]
        if answer.startswith("["):
            # The canonical call text parses back and re-scores to the recorded score.
            assert parse_calls(answer)
        assert record["task_score"] == workload.score(task, answer)
    base = {r["task_id"]: r for r in records if r["condition"] == "full_permitted_context"}
    small = [r for r in records if r["budget"] == 250]
    # Fewer schemas, fewer prompt tokens: the fixture counts the schemas it is shown.
    assert all(int(r["context_tokens"]) < int(base[r["task_id"]]["context_tokens"])
               for r in small if len(tasks[str(r["task_id"])].schemas) > 1)
    # Evidence recall: the share of the ground truth's functions among those sent.
    assert {r["evidence_recall"] for r in base.values()} == {1.0}
    report = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert report["claim_class"]["class"] == "conformance_fixture"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert not list(validator("ctxbench.run-manifest.v1").iter_errors(manifest))
    assert manifest["workload"]["format"] == "bfcl"
    assert manifest["workload"]["source"] == "bfcl:live_multiple"
    assert sum(1 for v in summary.verdicts if v.startswith("CEF naive_top_k@")) == 2


def test_bfcl_spec_errors(tmp_path: Path) -> None:
    spec = tmp_path / "exp.toml"
    spec.write_text(BFCL_SPEC.replace("bfcl:live_multiple", "bfcl:multi_turn"),
                    encoding="utf-8")
    with pytest.raises(FieldError, match=r"\[workload\]\.source: expected bfcl:<category>"):
        load_spec(spec)
    spec.write_text(BFCL_SPEC.replace('strategy = "naive_top_k"',
                                      'strategy = "external"\ncommand = "pkg:fn"'),
                    encoding="utf-8")
    with pytest.raises(FieldError, match=r"\[conditions\]\[1\]\.strategy: expected a "
                       r"tool-schema strategy \(full_permitted_context, naive_top_k\) or an "
                       r"installed document strategy, got the string \"external\""):
        load_spec(spec)
    spec.write_text(BFCL_SPEC.replace("limit = 10", "offset = -1"), encoding="utf-8")
    with pytest.raises(FieldError, match=r"\[workload\]\.offset: expected an integer in "
                       r"\[0, 10000000\], got the integer -1"):
        load_spec(spec)
    spec.write_text(BFCL_SPEC + '[scoring]\ntask_score = "token_f1"\n', encoding="utf-8")
    with pytest.raises(FieldError, match=r"\[scoring\]\.task_score: expected no task_score"):
        load_spec(spec)


def test_longbench_file_runs_with_its_dataset_metrics(tmp_path: Path) -> None:
    rows = [
        {"_id": "q1", "input": "Which port does the gateway use?",
         "context": "The gateway listens on port 8443. Logs rotate daily.",
         "answers": ["port 8443"], "length": 9, "dataset": "hotpotqa", "language": "en",
         "all_classes": None},
        {"_id": "c1", "input": "Type of question: What city hosts the summit?",
         "context": "Question: Who wrote Hamlet? Type: Human being.",
         "answers": ["Location"], "length": 8, "dataset": "trec", "language": "en",
         "all_classes": ["Location", "Human being", "Number"]},
    ]
    data = tmp_path / "lb.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "exp.toml").write_text(f"""
name = "lb"
seed = 1
replicates = 1
output = "out"
[workload]
source = "{data.name}"
format = "longbench"
[model]
provider = "fixture"
[[conditions]]
strategy = "full_permitted_context"
[[conditions]]
strategy = "naive_top_k"
budgets = [120]
""", encoding="utf-8")
    run_experiment(tmp_path / "exp.toml")
    records = {(r["task_id"], r["condition"]): r
               for r in _trials(tmp_path / "out" / "trials.jsonl")}
    full = records[("q1", "full_permitted_context")]
    # The fixture answers "The gateway listens on port 8443.": QA-F1 against "port 8443".
    assert full["response_text"] == "The gateway listens on port 8443."
    assert full["task_score"] == pytest.approx(2 * (2 / 5) * 1 / (2 / 5 + 1))
    assert {r["scorer"] for r in records.values()} == {"longbench"}
    # trec is scored by classification: the fixture's sentence names "Human being", not
    # the gold "Location".
    assert records[("c1", "full_permitted_context")]["task_score"] == 0.0


def test_longbench_refuses_jieba_datasets(tmp_path: Path) -> None:
    data = tmp_path / "zh.jsonl"
    data.write_text(json.dumps({"_id": "z", "input": "q", "context": "c", "answers": ["a"],
                                "length": 1, "dataset": "dureader", "language": "zh",
                                "all_classes": None}) + "\n", encoding="utf-8")
    from ctxbench.workloads import load_longbench

    with pytest.raises(InputError, match=r"zh\.jsonl:1: dataset: expected a dataset whose "
                       r"metric needs no Chinese word segmentation"):
        load_longbench(data)


def test_no_strategy_adds_tokens_when_it_keeps_everything(tmp_path: Path) -> None:
    from .conftest import write_qa

    write_qa(tmp_path / "qa.jsonl")
    conditions = "".join(f'[[conditions]]\nstrategy = "{s}"\nbudgets = [4000]\n'
                         for s in ("truncate-tail", "truncate-head", "middle-out"))
    (tmp_path / "exp.toml").write_text(
        'name = "keep"\nseed = 1\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "qa.jsonl"\n[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n' + conditions,
        encoding="utf-8")
    run_experiment(tmp_path / "exp.toml")
    records = list(_trials(tmp_path / "out" / "trials.jsonl"))
    base = {r["task_id"]: r for r in records if r["strategy"] == "full_permitted_context"}
    kept = [r for r in records if r["strategy"] != "full_permitted_context"]
    assert len(kept) == 3 * len(base) > 0
    for r in kept:
        b = base[r["task_id"]]
        assert (r["context_tokens"], r["context_sha256"]) == (
            b["context_tokens"], b["context_sha256"]), r["condition"]
    cef = json.loads((tmp_path / "out" / "cef-report.json").read_text(encoding="utf-8"))
    for comp in cef["aggregate"]["comparisons"]:
        assert comp["context_reduction"]["estimate"] == 0.0, comp["condition"]
