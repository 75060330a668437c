"""The typed CEF report: round trips, agreement with the JSON Schema, located errors, claim.

The schema walk compares every dataclass of :mod:`ctxbench.protocols.cef.model` with the
matching node of ``ctxbench.cef-report.v1.json`` (member names, required-ness,
nullability, array vs object), so the two descriptions of the format cannot drift.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import PointerError
from ctxbench.core.jsonmodel import field_kinds
from ctxbench.core.node import Node
from ctxbench.protocols.cef import analysis
from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.hypotheses import Judgement
from ctxbench.protocols.cef.model import (
    REPORT_SCHEMA,
    AggregateComparison,
    CefReport,
    Comparison,
    StratumComparison,
)
from ctxbench.protocols.cef.prereg import Exclusion, Preregistration
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.schemas import validator
from ctxbench.testing.cef_trials import ConditionEffect, generate_records
from model_schema import agree_object

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
GOLDEN_REPORTS = sorted(GOLDEN.glob("cef-*/report.json"))
SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "src/ctxbench/schemas"
                     / f"{REPORT_SCHEMA}.json").read_text(encoding="utf-8"))


def _read(doc: Any, path: str = "report.json") -> CefReport:
    return CefReport.from_json(Node(path, "", doc))


def _golden(name: str = "cef-two-stratum") -> dict[str, Any]:
    value = json.loads((GOLDEN / name / "report.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


# --- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize("path", GOLDEN_REPORTS, ids=lambda p: p.parent.name)
def test_every_golden_report_round_trips(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    model = _read(doc, str(path))
    assert model.to_json() == doc
    # key order too: the bytes a writer produces are the golden's
    assert json.dumps(model.to_json(), indent=2) == json.dumps(doc, indent=2)
    assert _read(model.to_json()) == model


def _random_study(rng: random.Random, case: int) -> tuple[list[Any], Preregistration]:
    """Seeded random trials and a preregistration that reach every optional member."""
    workloads = rng.sample(["hotpotqa", "bfcl", "ops-logs", "swe"], rng.randint(1, 3))
    names = ["entroly", "native_compaction", "combined"]
    conditions = {names[k]: ConditionEffect(
        context_ratio=rng.uniform(0.2, 1.1), quality_shift=rng.uniform(-0.05, 0.03),
        evidence_shift=rng.uniform(-0.03, 0.03), unsupported_shift=rng.uniform(-0.03, 0.03),
        failure_rate=rng.choice([0.0, 0.0, 0.1, 0.4]), commit=True)
        for k in range(rng.randint(1, 3))}
    records = list(generate_records(
        conditions=conditions, workloads=tuple(workloads), tasks=rng.randint(8, 25),
        replicates=rng.randint(1, 2), seed=case,
        schema_version=rng.choice(["entroly.context-efficiency-trial.v1", "ctxbench.trial.v1"]),
        usage_source=rng.choice(["provider_response", "provider_response",
                                 "deterministic_fixture"]),
        cost_source=rng.choice(["pricing_snapshot", "self_hosted_no_api_fee"])))
    if rng.random() < 0.3:  # a zero-cost baseline leaves the cost reduction undefined
        for record in records:
            record["billed_cost_usd"] = 0.0
    trials = [parse_trial(r, path="t.jsonl", line=i + 1) for i, r in enumerate(records)]
    prereg = Preregistration(
        bootstrap_samples=rng.choice([50, 120]), seed=rng.randint(0, 10**6),
        resampling_unit=rng.choice(["task", "task-replicate"]),
        min_paired_units=rng.choice([1, 5, 10]),
        confidence_level=rng.choice([0.9, 0.95]),
        min_savings=tuple((w, round(rng.uniform(0, 0.6), 3)) for w in workloads[:1]),
        claims=tuple(sorted(conditions)[:1]) if rng.random() < 0.5 else None,
        conformance_workloads=tuple(workloads[1:2]) if rng.random() < 0.3 else (),
        exclusions=((Exclusion(task_id="nope", reason="archive corrupted",
                               workload=workloads[0]),) if rng.random() < 0.4 else ()),
        source=rng.choice(["file", "protocol_defaults"]))
    return trials, prereg


def _random_reports(n: int) -> Iterator[CefReport]:
    rng = random.Random(20261201)
    for case in range(n):
        trials, prereg = _random_study(rng, case)
        report = analyze(trials, prereg, invocation={
            "command": ["ctxbench", "cef", "analyze", "t.jsonl"],
            "extra": {"weights": [0.1234567891, 2]}})
        yield replace(report, notes=("fixture run",)) if case % 3 == 0 else report


def test_randomized_reports_round_trip_and_match_the_schema() -> None:
    check = validator(REPORT_SCHEMA)
    seen: set[str] = set()
    for report in _random_reports(10):
        doc = report.to_json()
        assert list(check.iter_errors(doc)) == []
        again = _read(json.loads(json.dumps(doc)))
        assert again.to_json() == doc
        assert _read(again.to_json()) == again == report.as_written()
        seen.add(report.claim_class.class_)
        seen.update(c.claim for c in report.aggregate.comparisons)
        if any(c.cost_reduction.estimate is None for c in report.aggregate.comparisons):
            seen.add("undefined cost")
    # the generator reached the branches that change the document's shape
    assert {"product_measurement", "conformance_fixture", "NO CLAIM",
            "undefined cost"} <= seen


# --- the model and the schema describe the same members ----------------------------------

def test_the_model_and_the_json_schema_describe_the_same_members() -> None:
    # both comparison kinds share one schema definition: a stratum comparison always
    # writes its (nullable) headline and no failed_strata; an aggregate one the reverse
    allow = {StratumComparison: {"unwritten": frozenset({"failed_strata"}),
                                 "always": frozenset({"headline"})},
             AggregateComparison: {"unwritten": frozenset({"headline"}),
                                   "always": frozenset({"failed_strata"})}}
    agree_object(CefReport, SCHEMA, SCHEMA, "", allow)
    base = set(field_kinds(Comparison))
    assert base | {"headline", "failed_strata"} == set(SCHEMA["$defs"]["comparison"]
                                                       ["properties"])
    assert len(base) > 20 and "claim" in base


# --- located errors ----------------------------------------------------------------------

def _pop(*path: str | int) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
    return edit


def _set(value: Any, *path: str | int) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize(("edit", "message"), [
    (_pop("strata", 0, "comparisons", 0, "hypotheses", 3, "passed"),
     "/strata/0/comparisons/0/hypotheses/3/passed: required field is missing"),
    (_set("0.5", "aggregate", "comparisons", 0, "context_reduction", "low"),
     '/aggregate/comparisons/0/context_reduction/low: expected a number, got the string '
     '"0.5"'),
    (_set(1.5, "inputs", "trials_read"),
     "/inputs/trials_read: expected an integer, got the number 1.5"),
    (_set("seed", "claim_class", "class"),
     '/claim_class/class: expected one of "product_measurement", "conformance_seed", '
     '"conformance_fixture", got the string "seed"'),
    (_set(1, "methodology", "typed"),
     "/methodology/typed: expected no such member (ctxbench.cef-report.v1 does not define "
     "it), got the integer 1"),
    (_set("ctxbench.cef-report.v2", "schema_version"),
     "/schema_version: expected 'ctxbench.cef-report.v1' (the version this ctxbench reads), "
     'got the string "ctxbench.cef-report.v2"'),
    (_set("quality_preserving_context_win", "aggregate", "comparisons", 0, "claim"),
     "/aggregate/comparisons/0/claim: expected the string \"NO CLAIM\" (derived from "
     "/aggregate/comparisons/0/quality_preserving_context_win), got the string "
     '"quality_preserving_context_win"'),
    (_set(True, "summary", "check_passed"),
     "/summary/check_passed: expected the boolean false (derived from "
     "/aggregate/comparisons), got the boolean true"),
    (_set([], "strata"), "/strata: expected an array of at least one stratum, got an array"),
    (_pop("strata", 1, "comparisons", 0, "task_score_delta", "bootstrap_high"),
     "/strata/1/comparisons/0/task_score_delta/bootstrap_high: required field is missing"),
])
def test_a_broken_report_names_the_place(edit: Callable[[dict[str, Any]], None],
                                         message: str) -> None:
    doc = _golden()
    edit(doc)
    with pytest.raises(PointerError) as info:
        _read(doc)
    assert str(info.value) == "report.json: " + message


def test_cef_render_exits_2_with_one_located_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    doc = _golden()
    del doc["aggregate"]["comparisons"][0]["reasons"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run_guarded(cli, ["cef", "render", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"ctxbench: error: {path}: /aggregate/comparisons/0/reasons: "
                            "required field is missing\n")


# --- the claim is decided once -----------------------------------------------------------

def test_claim_summary_and_check_follow_the_decided_win() -> None:
    report = _read(_golden("cef-passing"))
    comp = report.aggregate.comparisons[0]
    assert comp.claimed and comp.claim == "quality_preserving_context_win"
    assert report.summary.check_passed and len(report.headlines) == 1
    flipped = replace(report, aggregate=replace(
        report.aggregate, comparisons=(replace(comp, quality_preserving_context_win=False),)))
    assert flipped.aggregate.comparisons[0].claim == "NO CLAIM"
    assert not flipped.summary.check_passed and not flipped.summary.claims[0].holds
    assert flipped.to_json()["summary"]["check_passed"] is False
    # a stratum comparison that is not claimed contributes no headline
    stratum = report.strata[0]
    quiet = replace(report, strata=(replace(stratum, comparisons=(
        replace(stratum.comparisons[0], claimed=False),)),))
    assert quiet.headlines == () and quiet.to_json()["headlines"] == []


def test_the_analysis_claim_comes_only_from_the_judgement(
        monkeypatch: pytest.MonkeyPatch) -> None:
    trials = [parse_trial(r, path="t", line=i) for i, r in enumerate(generate_records(
        conditions={"entroly": ConditionEffect(context_ratio=0.5, commit=True,
                                               quality_shift=0.05, evidence_shift=0.05,
                                               unsupported_shift=-0.045)},
        tasks=150, seed=10))]
    prereg = Preregistration(bootstrap_samples=200, source="file")
    winning = analyze(trials, prereg, invocation={})
    assert winning.summary.check_passed and winning.headlines

    real_judge = analysis.judge

    def losing(*args: Any, **kwargs: Any) -> Judgement:
        return replace(real_judge(*args, **kwargs), win=False)

    monkeypatch.setattr(analysis, "judge", losing)
    lost = analyze(trials, prereg, invocation={})
    # the gates themselves are unchanged; only the decided claim differs, everywhere
    assert lost.aggregate.comparisons[0].hypotheses == winning.aggregate.comparisons[0].hypotheses
    assert [c.claim for c in lost.aggregate.comparisons] == ["NO CLAIM"]
    assert [c.claim for c in lost.strata[0].comparisons] == ["NO CLAIM"]
    assert lost.headlines == () and not lost.summary.check_passed
    doc = lost.to_json()
    assert doc["summary"]["claims"][0]["holds"] is False and doc["headlines"] == []


def test_a_hand_edited_claim_does_not_survive_a_read() -> None:
    doc = _golden("cef-passing")
    doc["summary"]["claims"][0]["holds"] = False
    with pytest.raises(PointerError, match=r"/summary/claims/0/holds: expected the boolean "
                                           "true"):
        _read(doc)
    doc = copy.deepcopy(_golden("cef-passing"))
    doc["headlines"] = []
    with pytest.raises(PointerError, match=r"/headlines: expected an array of 1 item"):
        _read(doc)


def test_the_model_modules_import_no_numpy() -> None:
    """Reading and rendering a report must not need the analysis stack (numpy, stats)."""
    import ast

    package = Path(__file__).resolve().parents[3] / "src/ctxbench/protocols/cef"
    for name in ("model.py", "model_blocks.py", "model_inputs.py", "model_io.py"):
        tree = ast.parse((package / name).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        imported |= {node.module or "" for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)}
        ours = {m for m in imported if m.startswith("ctxbench")}
        assert all(m.startswith(("ctxbench.core", "ctxbench.protocols.cef.model"))
                   for m in ours), (name, ours)
        assert not any(m.split(".")[0] in ("numpy", "scipy") for m in imported), name


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


_GOLDEN_DOC = _golden()
_DELETE = object()


def _mutations() -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every member of a golden report deleted, nulled, and given another JSON type."""
    for path in _paths(_GOLDEN_DOC):
        if not path:
            continue
        parent: Any = _GOLDEN_DOC
        for part in path:
            parent = parent[part]
        other = 7 if isinstance(parent, str) else "text"
        for change in (_DELETE, None, other):
            yield path, change


def test_any_deleted_or_retyped_member_is_a_located_error_or_a_faithful_read() -> None:
    check = validator(REPORT_SCHEMA)
    refused = accepted = 0
    for path, change in _mutations():
        doc = copy.deepcopy(_GOLDEN_DOC)
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        if change is _DELETE:
            del parent[path[-1]]
        else:
            parent[path[-1]] = change
        try:
            model = _read(doc)
        except PointerError as exc:
            assert str(exc).startswith("report.json: /") and "\n" not in str(exc), path
            refused += 1
            continue
        # accepted only where the document stayed valid (a nullable statistic set to
        # null, one caveat fewer, a free-form member), and then nothing was lost
        assert list(check.iter_errors(doc)) == [], path
        assert model.to_json() == doc, path
        accepted += 1
    assert refused > 1500 and accepted < refused / 4, (refused, accepted)


def test_a_report_written_before_outcomes_existed_still_reads() -> None:
    doc = _golden("cef-failure-heavy")
    dropped = 0
    for stratum in doc["strata"]:
        for comparison in stratum["comparisons"]:
            for hypothesis in comparison["hypotheses"]:
                dropped += hypothesis.pop("outcome", None) is not None
    for comparison in doc["aggregate"]["comparisons"]:
        for hypothesis in comparison["hypotheses"]:
            dropped += hypothesis.pop("outcome", None) is not None
    report = _read(doc)
    assert dropped > 3
    assert all(h.outcome is None for c in report.aggregate.comparisons for h in c.hypotheses)
    assert report.to_json() == doc
