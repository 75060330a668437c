"""``ctxbench compile evaluate`` on a small real benchmark with evidence markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler import Policy, compile_context
from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.evaluation import PEER, evaluate
from ctxbench.core import InputError
from ctxbench.protocols.eceb import seed_paths
from ctxbench.schemas import validator


def _with_markers(tmp_path: Path) -> Path:
    """The seed benchmark, one task given an evidence marker taken from its required file."""
    paths = seed_paths()
    doc = json.loads(Path(paths.benchmark).read_text(encoding="utf-8"))
    task = next(t for t in doc["tasks"] if t["task_id"] == "ledger-retention-period")
    artifact = next(a for a in doc["corpus"]["artifacts"]
                    if a["artifact_id"] == task["required_artifacts"][0])
    text = (Path(paths.corpus) / artifact["path"]).read_text(encoding="utf-8")
    line = next(ln.strip() for ln in text.splitlines() if "7 years" in ln)
    assert line == "| Billing ledger entries and invoices | 7 years (statutory) |"
    task["evidence_markers"] = [line]
    doc["tasks"] = [task]
    out = tmp_path / "benchmark.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def test_evaluate_reports_answer_presence_and_validates(tmp_path: Path) -> None:
    bench = _with_markers(tmp_path)
    corpus = str(seed_paths().corpus)
    report = evaluate(bench, corpus, strategies=("compiled", "naive_top_k",
                                                  "full_permitted_context", "langchain-bm25"))
    doc = report.to_json()
    assert not list(validator("ctxbench.compile-evaluation.v1").iter_errors(doc))
    full = [r for r in report.rows if r.strategy == "full_permitted_context"]
    assert full and all(r.answer_present and r.required_recall == 1.0 for r in full)
    for row in report.rows:
        assert row.restricted_bytes == 0
        if row.strategy != "full_permitted_context":
            assert not row.over_budget and row.tokens <= row.budget
    compiled = [r for r in report.rows if r.strategy == "compiled"]
    assert compiled[-1].answer_present  # the largest budget holds the marker
    assert {s["strategy"] for s in doc["summary"]} == {
        "compiled", "naive_top_k", "full_permitted_context", "langchain-bm25"}


def test_evaluate_cli_writes_the_report_and_rejects_unknown_strategies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _with_markers(tmp_path)
    out = tmp_path / "eval.json"
    code = run_guarded(cli, ["compile", "evaluate", str(bench), "--corpus",
                             str(seed_paths().corpus), "--strategy", "compiled",
                             "--output", str(out)])
    assert code == 0
    assert "| compiled | 256 |" in capsys.readouterr().out
    assert json.loads(out.read_text())["schema_version"] == "ctxbench.compile-evaluation.v1"
    bad = run_guarded(cli, ["compile", "evaluate", str(bench), "--corpus",
                            str(seed_paths().corpus), "--strategy", "magic"])
    assert bad == 2
    assert "strategy: expected one of" in capsys.readouterr().err


def test_an_external_system_is_evaluated_beside_the_built_ins(tmp_path: Path) -> None:
    bench = _with_markers(tmp_path)
    report = evaluate(bench, str(seed_paths().corpus),
                      strategies=("compiled", "external:external_system:first_two"))
    external = [r for r in report.rows if r.strategy == "external:external_system:first_two"]
    assert [r.budget for r in external] == [r.budget for r in report.rows
                                           if r.strategy == "compiled"]
    for row in external:
        assert row.tokens > 0 and row.restricted_bytes == 0
        assert row.over_budget == (row.tokens > row.budget)


def test_evidence_markers_are_optional_and_checked(tmp_path: Path) -> None:
    from ctxbench.core.errors import PointerError
    from ctxbench.protocols.eceb import load_benchmark

    bench = _with_markers(tmp_path)
    task = load_benchmark(bench).tasks[0]
    assert task.evidence_markers == (
        "| Billing ledger entries and invoices | 7 years (statutory) |",)
    doc = json.loads(bench.read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/benchmark-v0.1").iter_errors(doc))
    del doc["tasks"][0]["evidence_markers"]
    bench.write_text(json.dumps(doc), encoding="utf-8")
    assert load_benchmark(bench).tasks[0].evidence_markers == ()
    doc["tasks"][0]["evidence_markers"] = ["  "]
    bench.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PointerError, match="/tasks/0/evidence_markers/0: expected a non-blank"):
        load_benchmark(bench)


def test_batch_compiles_several_tasks_and_budgets_in_one_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.compiler.api import verify_commit_file

    paths = seed_paths()
    out = tmp_path / "packets"
    code = run_guarded(cli, ["compile", "batch", str(paths.benchmark), "--corpus",
                             str(paths.corpus), "--task", "late-fee-rule", "--task",
                             "ledger-retention-period", "--budget", "256", "--budget", "512",
                             "--output-dir", str(out)])
    assert code == 0
    assert len(capsys.readouterr().out.splitlines()) == 4
    for task in ("late-fee-rule", "ledger-retention-period"):
        for budget in (256, 512):
            commit = verify_commit_file(out / f"{task}-{budget}.commit.json", paths.corpus,
                                        context_path=out / f"{task}-{budget}.txt")
            assert commit["budget"] == budget and commit["token_count"] <= budget
    bad = run_guarded(cli, ["compile", "batch", str(paths.benchmark), "--corpus",
                            str(paths.corpus), "--task", "nope", "--output-dir", str(out)])
    assert bad == 2


def test_the_chunk_bm25_peer_is_the_shipped_strategy(tmp_path: Path) -> None:
    bench = _with_markers(tmp_path)
    corpus = seed_paths().corpus
    report = evaluate(bench, corpus, strategies=(PEER,))
    benchmark, index = benchmark_index(bench, corpus)
    task = benchmark.tasks[0]
    assert PEER == "chunk-bm25"
    for row in report.rows:
        packet = compile_context(index, query=task.query, budget=row.budget,
                                 policy=Policy.from_task(task), strategy="chunk-bm25")
        assert (row.tokens, row.answer_present) == (
            packet.token_count, all(m in packet.text for m in task.evidence_markers))


def test_the_retired_peer_name_is_refused_with_both_names(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^strategy: expected chunk-bm25 \(the shipped "
                       r"chunk-BM25 strategy\) or langchain-bm25 \(langchain chunks \+ "
                       r"rank_bm25\), got 'chunk_bm25'$"):
        evaluate(_with_markers(tmp_path), seed_paths().corpus, strategies=("chunk_bm25",))
