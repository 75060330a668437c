"""Negative fixtures: each trips exactly one gate, or is rejected with its message."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from eceb_fixtures import BY_NAME, CASES, TASK, base_documents, documents, materialize

from ctxbench.core import InputError, atomic_write_json
from ctxbench.protocols.eceb import GATES
from ctxbench.protocols.eceb.api import evaluate_files
from ctxbench.protocols.eceb.model import Report
from ctxbench.protocols.eceb.model import Task as TaskResult

FIXTURES = Path(__file__).parent / "fixtures"
GATE_CASES = [c.name for c in CASES if c.gate is not None]
REJECTIONS = [c.name for c in CASES if c.gate is None]


def _task(report: Report) -> TaskResult:
    [task] = [t for t in report.tasks if t.task_id == TASK]
    return task


def test_base_passes_every_gate_at_256(tmp_path: Path) -> None:
    bench, run = base_documents()
    (tmp_path / "b.json").write_text(json.dumps(bench))
    (tmp_path / "r.json").write_text(json.dumps(run))
    from ctxbench.protocols.eceb import seed_paths
    report = evaluate_files(tmp_path / "b.json", tmp_path / "r.json", seed_paths().corpus)
    task = _task(report)
    assert task.qualified and task.minimum_viable_budget == 256
    assert task.failures == ()


def test_prompt_tokens_stand_for_input_tokens_in_the_budget_gate(tmp_path: Path) -> None:
    from ctxbench.protocols.eceb import seed_paths

    bench, run = base_documents()
    for o in run["observations"]:
        if o["budget"] == 256:
            # An agent's turns: many requests in all, each prompt within the budget.
            o["prompt_tokens"], o["input_tokens"] = o["input_tokens"], 4 * o["input_tokens"]
    (tmp_path / "b.json").write_text(json.dumps(bench))
    (tmp_path / "r.json").write_text(json.dumps(run))
    task = _task(evaluate_files(tmp_path / "b.json", tmp_path / "r.json", seed_paths().corpus))
    assert task.minimum_viable_budget == 256 and task.budgets[0].gates.budget == "pass"
    first = next(o for o in run["observations"] if o["budget"] == 256)
    first["prompt_tokens"] = 257
    (tmp_path / "r.json").write_text(json.dumps(run))
    task = _task(evaluate_files(tmp_path / "b.json", tmp_path / "r.json", seed_paths().corpus))
    assert task.budgets[0].gates.budget == "fail"
    assert [f.message for f in task.failures] == [
        "prompt_tokens 257 exceed the declared budget 256"]


@pytest.mark.parametrize("name", GATE_CASES)
def test_gate_fixture_trips_exactly_one_gate(tmp_path: Path, name: str) -> None:
    case = BY_NAME[name]
    report = evaluate_files(*materialize(name, tmp_path))
    task = _task(report)
    failures = task.failures
    assert failures, name
    assert {f.gate for f in failures} == {case.gate}
    assert {f.budget for f in failures} == {256}
    assert case.code in {f.code for f in failures}
    assert any(case.message in f.message for f in failures), failures
    row = task.budgets[0]
    assert case.gate is not None and row.gates.status(case.gate) == "fail"
    assert [g for g in GATES if row.gates.status(g) == "fail"] == [case.gate]
    # the failure at 256 moves the minimum viable budget up one rung; nothing is hidden
    assert task.minimum_viable_budget == 512 and task.qualified


@pytest.mark.parametrize("name", ["unknown-artifact", "denied-artifact",
                                  "disallowed-classification"])
def test_policy_fixtures_count_policy_violations(tmp_path: Path, name: str) -> None:
    task = _task(evaluate_files(*materialize(name, tmp_path)))
    assert task.policy_violations == 1
    assert task.budgets[0].policy_violations == 1
    # §6: an unknown artifact is a provenance failure too; the others are not
    assert task.provenance_failures == (1 if name == "unknown-artifact" else 0)


def test_stale_selected_digest_counts_as_provenance_not_policy(tmp_path: Path) -> None:
    task = _task(evaluate_files(*materialize("stale-selected-digest", tmp_path)))
    assert task.policy_violations == 0
    codes = sorted(f.code for f in task.failures)
    assert codes == ["required_not_selected", "stale_digest"]
    assert task.provenance_failures == 2


@pytest.mark.parametrize("name", REJECTIONS)
def test_rejection_fixture(tmp_path: Path, name: str) -> None:
    case = BY_NAME[name]
    with pytest.raises(InputError, match=re.escape(case.message)):
        evaluate_files(*materialize(name, tmp_path))


def _shipped(name: str) -> dict[str, Any]:
    bench, run = documents(name)
    base_bench, base_run = base_documents()
    out: dict[str, Any] = {"expect.json": {
        "edit": BY_NAME[name].edit, "gate": BY_NAME[name].gate, "code": BY_NAME[name].code,
        "message": BY_NAME[name].message, "corpus_edit": BY_NAME[name].corpus_edit is not None,
    }}
    if bench != base_bench:
        out["benchmark.json"] = bench
    if run != base_run:
        out["run.json"] = run
    return out


def test_shipped_fixture_files_match_the_builder() -> None:
    base_bench, base_run = base_documents()
    expected = {"base/benchmark.json": base_bench, "base/run.json": base_run}
    for case in CASES:
        for file, doc in _shipped(case.name).items():
            expected[f"{case.name}/{file}"] = doc
    if os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1":
        for rel, doc in expected.items():
            atomic_write_json(FIXTURES / rel, doc)
    for rel, doc in expected.items():
        assert json.loads((FIXTURES / rel).read_text(encoding="utf-8")) == doc, rel
    shipped = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.json")}
    assert shipped == set(expected)
