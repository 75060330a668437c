"""Pairing, failure handling, hypotheses, strata, streams and determinism of the analysis."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.atomic import report_json_bytes
from ctxbench.core.digests import blake3_file
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.api import analyze_files
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.prereg import Exclusion, Preregistration, default_preregistration
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.schemas import validator
from ctxbench.testing.cef_trials import ConditionEffect, generate_records

from .helpers import failed, pair, write_jsonl

INV: dict[str, Any] = {"command": ["ctxbench", "cef", "analyze", "t.jsonl"]}


def trials(records: list[dict[str, Any]]) -> list[Any]:
    return [parse_trial(r, path="t.jsonl", line=i + 1) for i, r in enumerate(records)]


def run(records: list[dict[str, Any]], prereg: Preregistration | None = None) -> CefReport:
    report = analyze(trials(records), prereg or default_preregistration(), invocation=INV)
    return report


def comparison(report: CefReport, condition: str, stratum: int | None = None) -> Any:
    block = report.aggregate if stratum is None else report.strata[stratum]
    return next(c for c in block.comparisons if c.condition == condition)


def simple(n: int = 12, ratio: float = 0.5) -> list[dict[str, Any]]:
    """Quality that varies by task (+0.45 on even tasks, +0.35 on odd): the gates need
    variation to be evaluable, and at n = 20, where a gate must allow that any task could
    have lost everything, only gains this large show non-inferiority."""
    out = []
    for i in range(n):
        up = i % 2 == 0
        out.append(pair(f"t{i}", "raw", 1000 + 10 * i, score=0.5, evidence_recall=0.5,
                        unsupported_claim_rate=0.5))
        out.append(pair(f"t{i}", "entroly", int((1000 + 10 * i) * ratio) + 7 * (i % 3),
                        score=0.95 if up else 0.85, evidence_recall=0.95 if up else 0.85,
                        unsupported_claim_rate=0.05 if up else 0.15))
    return out


def test_failed_candidate_with_zero_tokens_does_not_raise_the_reduction() -> None:
    records = simple()
    before = comparison(run(records), "entroly").context_reduction.estimate
    records[1] = failed(records[1])  # the candidate of t0 failed and consumed nothing
    after = comparison(run(records), "entroly")
    assert after.context_reduction.estimate < before
    assert after.failed_pairs.to_json() == {"either_side": 1, "candidate_failed": 1,
                                     "baseline_failed": 0}
    # exactly: pair t0 is credited zero reduction (candidate := baseline)
    base = [1000 + 10 * i for i in range(12)]
    cand = [int(b * 0.5) + 7 * (i % 3) for i, b in enumerate(base)]
    cand[0] = base[0]
    assert after.context_reduction.estimate == pytest.approx(1 - sum(cand) / sum(base))
    assert after.mean_pair_context_reduction.estimate == pytest.approx(
        sum(1 - c / b for c, b in zip(cand, base, strict=True)) / 12)


def test_all_failed_candidate_is_never_a_saving() -> None:
    records = [failed(r) if r["condition"] == "entroly" else r for r in simple()]
    comp = comparison(run(records), "entroly")
    assert comp.context_reduction.estimate == 0.0
    assert not comp.quality_preserving_context_win
    assert any(r.startswith("H4 (context reduction) failed") for r in comp.reasons)


def test_failure_scores_override_recorded_scores_and_are_counted() -> None:
    records = simple()
    records[1] = failed(records[1], task_score=1.0, evidence_recall=1.0,
                        unsupported_claim_rate=0.0)
    records[3] = failed(records[3], task_score=0.0, evidence_recall=0.0,
                        unsupported_claim_rate=1.0)
    report = run(records)
    assert report.failures.overridden_failure_scores.to_json() == {
        "task_score": 1, "evidence_recall": 1, "unsupported_claim_rate": 1, "trials": 1}
    assert report.failures.trials_failed == 2
    point = report.aggregate.operating_points[1]
    assert point.task_score == pytest.approx((5 * 0.95 + 5 * 0.85) / 12)
    assert point.unsupported_claim_rate == pytest.approx((2 + 5 * 0.05 + 5 * 0.15) / 12)


def test_a_passing_claim_and_its_headline() -> None:
    report = run(simple(n=20))
    comp = comparison(report, "entroly", 0)
    assert comp.quality_preserving_context_win and comp.reasons == ()
    assert [h.passed for h in comp.hypotheses] == [True] * 4
    assert comp.headline == report.headlines[0]
    red = comp.context_reduction
    assert comp.headline == (
        "On gpt-4.1-mini-2025-04-14 and hotpotqa, entroly retained the preregistered quality "
        "bound while reducing provider-observed context by "
        f"{red.estimate * 100:.1f}% (paired 95% CI: {red.low * 100:.1f}–"
        f"{red.high * 100:.1f}, 20 tasks).")
    assert report.summary.check_passed


def test_too_few_units_is_no_claim_even_with_zero_width_interval() -> None:
    comp = comparison(run(simple(n=1)), "entroly")
    assert comp.context_reduction.low == comp.context_reduction.high
    assert not comp.quality_preserving_context_win
    assert comp.reasons[-1] == "too few paired units: 1 < the preregistered minimum 10"
    assert comp.reasons[0].startswith("H1 (task quality) failed: not evaluable")


def test_h3_and_minimum_savings_thresholds() -> None:
    records = simple(n=20)
    for r in records:
        if r["condition"] == "entroly":
            r["unsupported_claim_rate"] = 0.2 + 0.02 * (int(r["task_id"][1:]) % 2)
    comp = comparison(run(records), "entroly")
    assert [h.passed for h in comp.hypotheses] == [True, True, False, True]
    assert comp.reasons[0].startswith(
        "H3 (grounding) failed: upper bound of the unsupported-claim-rate delta +0.")
    assert " > +0.0100 (score test at the margin: T = " in comp.reasons[0]
    prereg = replace(default_preregistration(), min_savings=(("hotpotqa", 0.6),))
    comp = comparison(run(simple(n=20), prereg), "entroly")
    assert comp.min_savings == 0.6
    assert comp.reasons[0].startswith("H4 (context reduction) failed: lower bound")


def _synthetic(conditions: dict[str, ConditionEffect], **kw: Any) -> list[dict[str, Any]]:
    return list(generate_records(conditions=conditions, **kw))


def test_adding_a_condition_leaves_another_conditions_intervals_unchanged() -> None:
    three = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, commit=True),
                        "combined": ConditionEffect(context_ratio=0.3, commit=True)}, tasks=30)
    without = [r for r in three if r["condition"] != "combined"]
    a = comparison(run(without), "entroly", 0)
    b = comparison(run(three), "entroly", 0)
    for name in ("task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
                 "context_reduction", "mean_pair_context_reduction", "cost_reduction",
                 "latency_reduction"):
        assert a.statistic(name) == b.statistic(name)
    assert a.hypotheses == b.hypotheses
    assert a.context_reduction.low < a.context_reduction.high


def test_record_order_does_not_change_the_report() -> None:
    records = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, commit=True)},
                         tasks=15, replicates=2)
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    assert report_json_bytes(run(records).to_json()) == report_json_bytes(
        run(shuffled).to_json())


def test_duplicates_and_incomplete_matrices_are_rejected() -> None:
    records = simple(n=30)
    with pytest.raises(InputError, match=r"^t\.jsonl:61: duplicate trials .*: 1 duplicated "
                       r"cell\(s\); first 1: \(workload=hotpotqa, .*task_id=t0, .*"
                       r"condition=raw\) at t\.jsonl:61$"):
        run([*records, records[0]])
    missing = [r for r in records if r["condition"] != "entroly"]
    with pytest.raises(InputError) as info:
        run([*missing, records[1]])
    text = str(info.value)
    assert text.startswith("t.jsonl:2: incomplete condition matrix (every task-replicate must "
                           "hold raw, entroly): 29 missing cell(s); first 5: ")
    assert "task_id=t1, " in text and "condition=entroly) at t.jsonl:2; " in text
    assert text.endswith("; ... and 24 more")


def test_matrix_checks_against_the_preregistration() -> None:
    prereg = replace(default_preregistration(), conditions=("raw", "entroly", "combined"))
    with pytest.raises(InputError, match="30 missing cell"):
        run(simple(n=30), prereg)
    prereg = replace(default_preregistration(), conditions=("raw", "native_compaction"))
    with pytest.raises(InputError, match=r"^t\.jsonl:2: condition: expected a condition of the "
                       r"preregistered matrix \(raw, native_compaction\), got 'entroly'$"):
        run(simple(n=3), prereg)
    prereg = replace(default_preregistration(), replicates=2)
    with pytest.raises(InputError, match="expected 2 replicate"):
        run(simple(n=3), prereg)


def test_exclusions_remove_whole_tasks_and_are_listed() -> None:
    prereg = replace(default_preregistration(), exclusions=(
        Exclusion("t0", "dataset file missing"), Exclusion("zz", "no such task")))
    report = run(simple(n=12), prereg)
    assert report.inputs.trials_excluded == 2
    assert [e.trials_removed for e in report.exclusions] == [2, 0]
    assert "Exclusion of task zz matched no trials." in report.caveats
    assert comparison(report, "entroly").paired_units == 11


def test_two_strata_aggregate_names_failed_strata() -> None:
    good = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, quality_shift=0.05,
                                                  evidence_shift=0.05, unsupported_shift=-0.05,
                                                  commit=True)},
                      workloads=("qa",), tasks=200, seed=1)
    bad = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, quality_shift=-0.2,
                                                 commit=True)},
                     workloads=("tools",), tasks=25, seed=2)
    report = run(good + bad)
    assert [s.label.split(" / ")[2] for s in report.strata] == ["qa@v1", "tools@v1"]
    agg = comparison(report, "entroly")
    assert agg.failed_strata == (report.strata[1].label,)
    assert not agg.quality_preserving_context_win
    assert agg.reasons[-1].startswith("the claim failed in 1 of 2 strata")
    assert comparison(report, "entroly", 0).quality_preserving_context_win
    assert report.aggregate.resampling.startswith("pooled over strata")
    assert len(report.headlines) == 1


def test_task_resampling_clusters_replicates() -> None:
    records = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, commit=True)},
                         tasks=12, replicates=3)
    by_task = comparison(run(records), "entroly")  # the default unit is the task
    prereg = replace(default_preregistration(), resampling_unit="task-replicate")
    by_pair = comparison(run(records, prereg), "entroly")
    assert (by_pair.paired_units, by_task.paired_units, by_task.pairs) == (36, 12, 36)
    assert by_task.context_reduction.estimate == pytest.approx(
        by_pair.context_reduction.estimate)


def test_fixture_and_self_hosted_claim_classes() -> None:
    records = [dict(r, usage_source="deterministic_fixture") for r in simple(n=20)]
    report = run(records)
    assert report.claim_class.class_ == "conformance_fixture"
    assert report.headlines == () and comparison(report, "entroly", 0).headline is None
    assert any(c.startswith("Conformance fixture: 40 trial(s)") for c in report.caveats)
    records = [dict(r, cost_source="self_hosted_no_api_fee") for r in simple(n=20)]
    report = run(records)
    assert report.claim_class.class_ == "product_measurement"
    assert any("hardware, energy, operations and depreciation were not measured" in c
               for c in report.caveats)


def test_zero_cost_baseline_gives_undefined_cost_reduction() -> None:
    records = [dict(r, billed_cost_usd=0.0) for r in simple(n=12)]
    comp = comparison(run(records), "entroly")
    assert comp.cost_reduction.estimate is None
    assert comp.cost_reduction.low is None


def test_files_give_byte_identical_schema_valid_reports(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", simple(n=15))
    one = analyze_files([path], command=["ctxbench", "cef", "analyze", "t.jsonl"])
    two = analyze_files([path], command=["ctxbench", "cef", "analyze", "t.jsonl"])
    assert report_json_bytes(one.to_json()) == report_json_bytes(two.to_json())
    assert list(validator("ctxbench.cef-report.v1").iter_errors(one.to_json())) == []
    assert json.loads(report_json_bytes(one.to_json())) == one.to_json()
    assert one.methodology.reproduce == "ctxbench cef analyze t.jsonl"
    assert "time" not in json.dumps(one.to_json()).lower().replace("timeout", "")


def test_fast_column_path_equals_the_full_checker(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.api import read_table
    from ctxbench.protocols.cef.records import read_trials
    from ctxbench.protocols.cef.table import table_from_trials

    records = _synthetic({"entroly": ConditionEffect(context_ratio=0.5, failure_rate=0.2,
                                                     commit=True)}, tasks=10)
    records[0] = dict(records[0], schema_version="ctxbench.trial.v1", compile_ms=1.0)
    path = write_jsonl(tmp_path / "t.jsonl", records)
    fast = read_table([path])
    slow = table_from_trials(read_trials([path]))
    for name in fast.__dataclass_fields__:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (a == b).all() if hasattr(a, "shape") else a == b, name


def test_example_analyzes_to_a_pass_and_a_failure() -> None:
    from ctxbench.protocols.cef.api import example_paths

    trials_path, prereg_path = example_paths()
    report = analyze_files([trials_path], prereg_path)
    assert [(c.condition, c.holds) for c in report.summary.claims] == [
        ("entroly", True), ("combined", False)]
    assert report.claim_class.class_ == "conformance_fixture"
    assert report.inputs.trials_excluded == 3 and len(report.strata) == 2


def test_example_file_is_reproducible() -> None:
    from ctxbench.protocols.cef.api import example_paths

    from .examples_gen import example_text

    assert example_paths()[0].read_text(encoding="utf-8") == example_text()


def test_a_claimed_condition_without_trials_is_an_error() -> None:
    prereg = replace(default_preregistration(), claims=("combined",))
    with pytest.raises(InputError, match="claims: condition 'combined' has no trials"):
        run(simple(n=3), prereg)


def test_minimum_units_counts_only_pairs_in_which_both_sides_succeeded() -> None:
    # A baseline that could not run (e.g. its context exceeded the model's window) makes
    # every quality delta favour the candidate, but the reduction then rests on the few
    # pairs where both sides ran: with fewer of those than the minimum there is no claim.
    records = simple(n=20)
    for i in range(14):
        records[2 * i] = failed(records[2 * i], error_type="context_length_exceeded")
    comp = comparison(run(records), "entroly")
    assert comp.paired_units == 20 and comp.evaluable_units == 6
    assert [h.passed for h in comp.hypotheses] == [True] * 4
    assert not comp.quality_preserving_context_win
    assert comp.reasons == (
        "too few paired units in which both sides succeeded: 6 of 20 < the preregistered "
        "minimum 10 (the reduction rests on them alone)",)
    # with enough successful pairs the same failures no longer block the claim
    records = simple(n=20)
    for i in range(5):
        records[2 * i] = failed(records[2 * i], error_type="context_length_exceeded")
    comp = comparison(run(records), "entroly")
    assert comp.evaluable_units == 15 and comp.quality_preserving_context_win


def test_task_resampling_counts_evaluable_tasks() -> None:
    records = []
    for i in range(12):
        for rep in range(2):
            records.append(pair(f"t{i}", "raw", 1000, replicate=rep))
            records.append(pair(f"t{i}", "entroly", 500, replicate=rep))
    # task t0 loses one replicate's baseline: it still has a pair where both ran
    records[0] = failed(records[0])
    # task t1 loses both baselines: no evaluable pair left in that task
    records[4] = failed(records[4])
    records[6] = failed(records[6])
    prereg = replace(default_preregistration(), resampling_unit="task")
    comp = comparison(run(records, prereg), "entroly")
    assert comp.paired_units == 12 and comp.evaluable_units == 11


def test_declared_conformance_workloads_carry_no_headline() -> None:
    prereg = replace(default_preregistration(), conformance_workloads=("hotpotqa",))
    report = run(simple(n=20), prereg)
    comp = comparison(report, "entroly", 0)
    assert comp.quality_preserving_context_win
    assert report.claim_class.class_ == "conformance_seed"
    assert report.claim_class.conformance_workloads == ("hotpotqa",)
    assert report.headlines == () and comp.headline is None
    assert any(c.startswith("Synthetic workload(s) declared in the preregistration as "
                            "conformance seeds: hotpotqa.") for c in report.caveats)
    # a workload not declared synthetic keeps its headline
    other = replace(default_preregistration(), conformance_workloads=("needle-seed",))
    report = run(simple(n=20), other)
    assert report.claim_class.class_ == "product_measurement"
    assert len(report.headlines) == 1


def test_a_task_under_two_models_is_one_cluster_in_the_aggregate() -> None:
    records = simple(n=12)
    other = [dict(r, model="other-model-2025") for r in simple(n=12)]
    report = run(records + other)
    agg = comparison(report, "entroly")
    assert len(report.strata) == 2
    assert (agg.paired_units, agg.pairs) == (12, 24)
    assert "a single cluster resampled jointly across them" in report.methodology.clusters
    prereg = replace(default_preregistration(), resampling_unit="task-replicate")
    assert comparison(run(records + other, prereg), "entroly").paired_units == 24


def test_token_totals_are_exact_integers_beyond_two_to_the_53() -> None:
    big = 2**52 + 1
    records = [dict(r, context_tokens=big + i) if r["condition"] == "raw" else r
               for i, r in enumerate(simple(n=12))]
    report = run(records)
    point = report.aggregate.operating_points[0]
    expected = sum(big + 2 * i for i in range(12))
    assert point.context_tokens_total == expected and expected > 2**53
    assert isinstance(point.context_tokens_total, int)


def test_a_condition_whose_every_trial_failed_is_not_on_the_frontier() -> None:
    records = [failed(r) if r["condition"] == "entroly" else r for r in simple()]
    report = run(records)
    for block in (report.aggregate, report.strata[0]):
        point = next(p for p in block.operating_points if p.condition == "entroly")
        assert point.failures == point.trials == 12 and point.context_tokens_total == 0
        assert not point.on_pareto_frontier
        assert block.pareto_frontier == ("raw",)


def test_the_library_records_no_command_line_it_was_not_given(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", simple(n=15))
    report = analyze_files([path], output=tmp_path / "report.json")
    assert report.methodology.reproduce is None
    assert report.to_json()["methodology"]["invocation"] == {
        "trial_files": [{"path": "t.jsonl", "blake3": blake3_file(path)}],
        "preregistration_file": None}
    # The protocol spells no option of the command line; cli/ and the runner build it.
    import ctxbench.protocols.cef as package

    for module in Path(package.__file__).parent.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert '"--' not in text and "'--" not in text, module.name
