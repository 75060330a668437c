"""Evaluation §10-§15 on the seed and on small hand-computed cases."""

from __future__ import annotations

import copy
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import InputError, IntegrityError
from ctxbench.protocols.eceb import (
    evaluate,
    load_benchmark,
    parse_benchmark,
    parse_run,
    seed_paths,
    verify_corpus,
)
from ctxbench.protocols.eceb.model import QualifiedTasks, Report, Summary

PATHS = seed_paths()
BENCH = load_benchmark(PATHS.benchmark)
CHECK = verify_corpus(BENCH, PATHS.corpus)
RUN_DOC = json.loads(PATHS.run.read_text(encoding="utf-8"))
BENCH_DOC = json.loads(PATHS.benchmark.read_text(encoding="utf-8"))


def _report(run_doc: dict[str, Any] | None = None,
            bench_doc: dict[str, Any] | None = None) -> Report:
    bench = BENCH if bench_doc is None else parse_benchmark(bench_doc, path="b.json")
    run = parse_run(RUN_DOC if run_doc is None else run_doc, path="run.json")
    return evaluate(bench, run, CHECK)


REPORT = _report()
TASKS = {t.task_id: t for t in REPORT.tasks}


def test_minimum_viable_budgets_of_the_seed() -> None:
    assert {k: t.minimum_viable_budget for k, t in TASKS.items()} == {
        "payments-failover-region": 256, "webhook-retry-policy": 512,
        "duplicate-webhooks-root-cause": None, "ledger-retention-period": 256,
        "staging-key-rotation": 512, "senior-engineer-salary-band": 256,
        "eta-timezone-fix": 512, "late-fee-rule": 1024, "event-bus-decision": 512,
        "sev2-escalation": 512, "shipments-pagination": 1024, "orders-restore-rpo": 1024,
        "access-token-lifetime": 512}
    assert REPORT.summary == Summary(tasks=13, qualified=12, all_qualified=False,
                                     observations=239)


def _obs(task: str, strategy: str, budget: int | None) -> list[dict[str, Any]]:
    return [o for o in RUN_DOC["observations"]
            if (o["task_id"], o["strategy"], o["budget"]) == (task, strategy, budget)]


@pytest.mark.parametrize("task_id", sorted(k for k, t in TASKS.items() if t.qualified))
def test_savings_are_floored_from_exact_means(task_id: str) -> None:
    task = TASKS[task_id]
    base = _obs(task_id, "full_permitted_context", None)
    best = _obs(task_id, "compiled", task.minimum_viable_budget)
    t_full = Fraction(sum(o["input_tokens"] for o in base), len(base))
    t_comp = Fraction(sum(o["input_tokens"] for o in best), len(best))
    assert task.token_savings_bps == max(0, int(10_000 * (t_full - t_comp) // t_full))
    c_full = Fraction(sum(o["input_cost_micro_usd"] + o["output_cost_micro_usd"]
                          for o in base), len(base))
    c_comp = Fraction(sum(o["input_cost_micro_usd"] + o["output_cost_micro_usd"]
                          for o in best), len(best))
    assert task.cost_savings_bps == max(0, int(10_000 * (c_full - c_comp) // c_full))
    quality = [o["quality_milli"] for o in base]
    assert task.baseline_quality_milli == sum(quality) // len(quality)
    spec = BENCH.task(task_id)
    assert spec is not None
    assert task.floor_quality_milli == max(
        spec.minimum_quality_milli,
        task.baseline_quality_milli - spec.maximum_quality_regression_milli)


def test_aggregate_keeps_failed_tasks_in_the_denominator() -> None:
    agg = REPORT.aggregate.compiled
    assert agg is not None and REPORT.aggregate.naive_top_k is not None
    qualified = [t for t in REPORT.tasks if t.qualified]
    assert agg.qualified_tasks == QualifiedTasks(12, 13)
    total = sum(t.token_savings_bps or 0 for t in qualified)
    assert agg.token_savings_bps_sum == total
    assert agg.mean_token_savings_bps == total // 12
    assert REPORT.aggregate.naive_top_k.qualified_tasks == QualifiedTasks(2, 4)


def test_three_artifact_task_fails_with_every_reason_recorded() -> None:
    task = TASKS["duplicate-webhooks-root-cause"]
    assert not task.qualified and task.token_savings_bps is None
    assert task.compiled_input_tokens is None
    by_budget: dict[int, set[str]] = {}
    for f in task.failures:
        by_budget.setdefault(f.budget, set()).add(f.code)
    assert by_budget[512] >= {"required_not_selected", "quality_below_floor",
                              "missing_answer_term"}
    assert by_budget[2048] == {"context_mismatch"}
    assert by_budget[4096] == {"context_mismatch", "budget_overflow"}
    assert task.repeatable is False and task.candidate_budget == 4096


def test_violation_above_the_minimum_budget_is_still_recorded() -> None:
    task = TASKS["staging-key-rotation"]
    assert task.minimum_viable_budget == 512 and task.qualified
    leaks = [f for f in task.failures if f.gate == "policy"]
    assert {f.budget for f in leaks} == {2048}
    assert {f.code for f in leaks} == {"denied_artifact", "disallowed_classification"}
    assert task.policy_violations == 6
    assert task.budgets[3].passed is False


def test_naive_top_k_is_evaluated_the_same_way() -> None:
    naive = TASKS["staging-key-rotation"].naive_top_k
    assert naive is not None
    assert naive.minimum_viable_budget is None and naive.policy_violations == 24
    payments = TASKS["payments-failover-region"].naive_top_k
    assert payments is not None and payments.minimum_viable_budget == 512
    assert TASKS["eta-timezone-fix"].naive_top_k is None
    ledger = TASKS["ledger-retention-period"].naive_top_k
    assert ledger is not None
    assert {f.code for f in ledger.failures if f.gate == "policy"} == {
        "disallowed_classification"}


def test_abstention_task_is_judged_by_its_terms() -> None:
    task = TASKS["senior-engineer-salary-band"]
    assert task.expect_abstention and task.qualified
    assert task.provenance_coverage_bps == 10_000
    assert task.minimum_viable_budget == 256


def test_missing_repetition_above_the_minimum_budget() -> None:
    task = TASKS["sev2-escalation"]
    missing = [f for f in task.failures if f.code == "missing_repetition"]
    assert [(f.budget, f.repetition) for f in missing] == [(2048, 3)]


def test_claim_class_and_trust_boundary() -> None:
    assert REPORT.claim_class.reported == "conformance_seed"
    assert REPORT.trust_boundary.quality_rederived is False
    assert "does not re-derive the judge scores" in REPORT.trust_boundary.statement


def test_claim_class_is_never_stronger_than_declared() -> None:
    bench = copy.deepcopy(BENCH_DOC)
    bench["claim_class"] = "enterprise_validated"
    run = copy.deepcopy(RUN_DOC)
    run["claim_class"] = "enterprise_validated"
    claim = _report(run, bench).claim_class
    assert claim.reported == "enterprise_proxy"
    assert "requires human review" in claim.notes[0]
    run["claim_class"] = "public_reproduction"
    assert _report(run, bench).claim_class.reported == "public_reproduction"
    run["claim_class"] = "enterprise_proxy"
    bench["claim_class"] = "conformance_seed"
    claim = _report(run, bench).claim_class
    assert claim.reported == "conformance_seed"
    assert "the run declared enterprise_proxy" in claim.notes[0]


def test_zero_baseline_tokens_is_an_error() -> None:
    run = copy.deepcopy(RUN_DOC)
    for o in run["observations"]:
        if o["task_id"] == "late-fee-rule" and o["strategy"] == "full_permitted_context":
            o["input_tokens"] = 0
    with pytest.raises(InputError, match=r"run.json: /observations/\d+/input_tokens: expected "
                       r"positive baseline input tokens for task 'late-fee-rule'"):
        _report(run)


def test_missing_baseline_disqualifies_the_task() -> None:
    run = copy.deepcopy(RUN_DOC)
    run["observations"] = [o for o in run["observations"] if not (
        o["task_id"] == "late-fee-rule" and o["strategy"] == "full_permitted_context")]
    task = {t.task_id: t for t in _report(run).tasks}["late-fee-rule"]
    assert not task.qualified and task.minimum_viable_budget == 1024
    assert task.baseline_quality_milli is None and task.token_savings_bps is None
    assert task.floor_quality_milli == 700
    assert [f.repetition for f in task.failures if f.code == "missing_repetition"
            and f.strategy == "full_permitted_context"] == [1, 2, 3]


def test_baseline_with_a_denied_artifact_is_a_policy_failure() -> None:
    run = copy.deepcopy(RUN_DOC)
    for o in run["observations"]:
        if o["task_id"] == "staging-key-rotation" and o["strategy"] == "full_permitted_context":
            sec = BENCH.artifact("sec-88-leaked-staging-key")
            assert sec is not None
            o["selected_artifacts"].append({"artifact_id": sec.artifact_id, "blake3": sec.blake3})
    task = {t.task_id: t for t in _report(run).tasks}["staging-key-rotation"]
    assert not task.qualified and task.baseline.policy_violations == 6
    assert task.baseline.gates.policy == "fail"


def test_savings_saturate_at_zero() -> None:
    run = copy.deepcopy(RUN_DOC)
    for o in run["observations"]:
        if o["task_id"] == "payments-failover-region" and o["strategy"] == \
                "full_permitted_context":
            o["input_tokens"] = 100
            o["input_cost_micro_usd"] = o["output_cost_micro_usd"] = 0
    task = {t.task_id: t for t in _report(run).tasks}["payments-failover-region"]
    assert task.token_savings_bps == 0
    assert task.cost_savings_bps is None  # a free baseline has no cost ratio


def test_cross_document_rejections() -> None:
    run = copy.deepcopy(RUN_DOC)
    run["observations"][0]["task_id"] = "nope"
    with pytest.raises(InputError, match=re.escape(
            "run.json: /observations/0/task_id: expected a task "
            "of benchmark 'fernhill-enterprise-seed', got 'nope'")):
        _report(run)
    run = copy.deepcopy(RUN_DOC)
    run["observations"][3]["budget"] = 300
    with pytest.raises(InputError, match=r"/observations/3/budget: expected a budget on the "
                       r"ladder of task 'payments-failover-region' \(256, 512, 1024, 2048\)"):
        _report(run)
    run = copy.deepcopy(RUN_DOC)
    run["benchmark_id"] = "other"
    with pytest.raises(InputError, match="/benchmark_id: expected the benchmark id"):
        _report(run)
    run = copy.deepcopy(RUN_DOC)
    run["corpus_root"] = "0" * 64
    with pytest.raises(IntegrityError, match="/corpus_root: expected the benchmark's corpus"):
        _report(run)


def test_corpus_problems_block_evaluation(tmp_path: Path) -> None:
    import shutil
    corpus = tmp_path / "corpus"
    shutil.copytree(PATHS.corpus, corpus)
    (corpus / "api" / "webhook-events.json").write_text("{}\n")
    (corpus / "chat" / "2026-01-22-support.log").unlink()
    check = verify_corpus(BENCH, corpus)
    assert check.stale == ("api-webhook-events",)
    assert check.missing == ("chat-2026-01-22-support",)
    with pytest.raises(IntegrityError, match="corpus does not match the registry "
                       r"\(2 artifact\(s\)\)"):
        evaluate(BENCH, parse_run(RUN_DOC, path="run.json"), check)
    assert CHECK.ok and CHECK.artifacts == 35


def test_corpus_check_reports_non_files_and_symlinked_directories(tmp_path: Path) -> None:
    import os
    import shutil
    corpus = tmp_path / "corpus"
    shutil.copytree(PATHS.corpus, corpus)
    (corpus / "policies" / "acceptable-use.md").unlink()
    (corpus / "policies" / "acceptable-use.md").mkdir()
    outside = tmp_path / "outside"
    shutil.move(corpus / "api", outside)
    os.symlink(outside, corpus / "api")
    check = verify_corpus(BENCH, corpus)
    problems = {p.artifact_id: p.problem for p in check.problems}
    assert problems == {"policy-acceptable-use": "not_a_file",
                        "api-shipments-openapi": "escapes_corpus",
                        "api-webhook-events": "escapes_corpus"}
    messages = {p.artifact_id: p.message() for p in check.problems}
    assert messages["api-webhook-events"] == ("artifact api-webhook-events "
                                              "(api/webhook-events.json): path resolves outside "
                                              "the corpus directory")
    assert messages["policy-acceptable-use"].endswith("not a regular file (a directory)")
    assert verify_corpus(BENCH, PATHS.corpus, workers=4).ok
    with pytest.raises(IntegrityError, match="expected a corpus directory"):
        verify_corpus(BENCH, tmp_path / "nope")
