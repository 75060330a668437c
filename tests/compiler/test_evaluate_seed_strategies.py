"""``ctxbench compile evaluate`` on the seed: entroly beside compiled and every baseline.

Four seed tasks keep the test short (entroly takes about a second per packet here); they
include the tasks with denied artifacts and the confidential allow-list, so a leak would
show. The whole seed's table is in benchmarks/RESULTS.md ("Entroly beside compiled").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.protocols.eceb import seed_paths
from ctxbench.schemas import validator

STRATEGIES = ("compiled", "entroly", "naive_top_k", "truncate-head", "truncate-tail",
              "middle-out", "chunk-bm25")
TASKS = ("ledger-retention-period", "staging-key-rotation", "senior-engineer-salary-band",
         "access-token-lifetime")


def _seed_subset(tmp_path: Path) -> tuple[Path, dict[str, dict[str, object]]]:
    """Four seed tasks; ledger-retention-period gets an evidence marker from its file."""
    paths = seed_paths()
    doc = json.loads(Path(paths.benchmark).read_text(encoding="utf-8"))
    doc["tasks"] = [t for t in doc["tasks"] if t["task_id"] in TASKS]
    ledger = next(t for t in doc["tasks"] if t["task_id"] == "ledger-retention-period")
    ledger["evidence_markers"] = ["| Billing ledger entries and invoices | 7 years "
                                  "(statutory) |"]
    out = tmp_path / "benchmark.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out, {t["task_id"]: t for t in doc["tasks"]}


def test_compile_evaluate_every_strategy_on_the_seed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench, tasks = _seed_subset(tmp_path)
    out = tmp_path / "eval.json"
    args = ["compile", "evaluate", str(bench), "--corpus", str(seed_paths().corpus),
            "--output", str(out)]
    for strategy in (*STRATEGIES, "full_permitted_context"):
        args += ["--strategy", strategy]
    assert run_guarded(cli, args) == 0
    table = capsys.readouterr().out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert not list(validator("ctxbench.compile-evaluation.v1").iter_errors(doc))
    cells = {(t, b) for t, task in tasks.items() for b in task["budget_ladder"]}  # type: ignore[attr-defined]
    for strategy in STRATEGIES:
        rows = [r for r in doc["rows"] if r["strategy"] == strategy]
        # One row per task and ladder budget, each within its budget, none leaking.
        assert {(r["task_id"], r["budget"]) for r in rows} == cells
        assert all(0 < r["tokens"] <= r["budget"] and not r["over_budget"] for r in rows)
        assert all(r["restricted_bytes"] == 0 for r in rows)
        assert all(0.0 <= r["required_recall"] <= 1.0 for r in rows)
        assert f"| {strategy} | 256 |" in table
    by = {(r["strategy"], r["task_id"], r["budget"]): r for r in doc["rows"]}
    # The query-conditioned strategies find the ledger policy at the top budget; its
    # marker line is in compiled's packet there, and every full context has it.
    for strategy in ("compiled", "entroly", "chunk-bm25"):
        assert by[(strategy, "ledger-retention-period", 2048)]["required_recall"] == 1.0
    assert by[("compiled", "ledger-retention-period", 2048)]["answer_present"] is True
    assert by[("full_permitted_context", "ledger-retention-period", 256)][
        "answer_present"] is True
    # The truncation baselines cut the permitted context blindly: at 256 tokens they miss
    # the ledger policy that compiled selects.
    assert by[("compiled", "ledger-retention-period", 256)]["required_recall"] == 1.0
    assert by[("truncate-tail", "ledger-retention-period", 256)]["required_recall"] == 0.0
    # Tasks without required artifacts (the abstention task) have full recall by rule.
    assert {r["required_recall"] for r in doc["rows"]
            if r["task_id"] == "senior-engineer-salary-band"} == {1.0}


def test_compile_evaluate_refuses_a_strategy_that_is_not_installed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench, _ = _seed_subset(tmp_path)
    code = run_guarded(cli, ["compile", "evaluate", str(bench), "--corpus",
                             str(seed_paths().corpus), "--strategy", "no-such-packer"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "ctxbench: error: strategy: expected one of compiled, naive_top_k, "
        "full_permitted_context, langchain-bm25, an installed strategy or external:SPEC, got "
        "'no-such-packer'")
