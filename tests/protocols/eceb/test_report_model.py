"""The typed ECEB report: round trips, agreement with the JSON Schema, located read errors,
and every verdict coming from its one decision function."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import InputError, PointerError, report_json_bytes
from ctxbench.core.jsonmodel import field_kinds
from ctxbench.core.node import Node
from ctxbench.protocols.eceb import (
    CLAIM_CLASSES,
    GATES,
    REPORT_SCHEMA,
    STRATEGIES,
    evaluate,
    load_benchmark,
    parse_benchmark,
    parse_run,
    seed_paths,
    verify_corpus,
)
from ctxbench.protocols.eceb.model import (
    ClaimClass,
    ClaimName,
    GateName,
    Report,
    StrategyName,
)
from ctxbench.render.eceb import render_markdown
from ctxbench.render.html.eceb_page import eceb_sections, task_failures
from ctxbench.render.html.svg import Ids
from ctxbench.schemas import load_schema
from model_schema import agree_object

# the module, not the function the package exports under the same name
evaluate_module = importlib.import_module("ctxbench.protocols.eceb.analysis")
PATHS = seed_paths()
BENCH = load_benchmark(PATHS.benchmark)
CHECK = verify_corpus(BENCH, PATHS.corpus)
RUN_DOC = json.loads(PATHS.run.read_text(encoding="utf-8"))
BENCH_DOC = json.loads(PATHS.benchmark.read_text(encoding="utf-8"))
GOLDEN_ROOT = Path(__file__).parents[2] / "golden"
SCHEMA = load_schema(REPORT_SCHEMA)
# JSON Schema's "integer" admits 1.0; a report never writes one, so check literals.
_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: type(value) is int)
VALIDATOR = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                         type_checker=_TYPES)(SCHEMA)


def _goldens() -> list[Path]:
    return sorted(p for p in GOLDEN_ROOT.glob("*/report.json")
                  if json.loads(p.read_text(encoding="utf-8")).get("schema") == REPORT_SCHEMA)


def _read(doc: Any, path: str = "report.json") -> Report:
    return Report.from_json(Node(path, "", doc))


# -- randomized inputs -----------------------------------------------------------------


def _random_documents(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The seed benchmark and run with observations dropped, re-measured and re-selected."""
    rng = random.Random(seed)
    bench, run = copy.deepcopy(BENCH_DOC), copy.deepcopy(RUN_DOC)
    bench["claim_class"] = rng.choice(CLAIM_CLASSES)
    run["claim_class"] = rng.choice(CLAIM_CLASSES)
    run["judge"]["human_review"] = rng.choice(("none", "sampled", "full"))
    artifacts = bench["corpus"]["artifacts"]
    dropped_naive = rng.random() < 0.2
    kept = []
    for o in run["observations"]:
        if rng.random() < 0.08 or (dropped_naive and o["strategy"] == "naive_top_k"):
            continue
        if rng.random() < 0.5:
            o["input_tokens"] = rng.randint(1, 6000)
            o["input_cost_micro_usd"] = rng.randint(0, 20_000)
            o["output_cost_micro_usd"] = rng.randint(0, 5_000)
        if rng.random() < 0.3:
            o["quality_milli"] = rng.randint(0, 1000)
        if rng.random() < 0.15:
            o["answer"] = rng.choice(("", "I cannot say.", o["answer"].upper()))
        if rng.random() < 0.1:
            o["context_blake3"] = f"{rng.getrandbits(256):064x}"
        if rng.random() < 0.15:
            a = rng.choice(artifacts)
            digest = a["blake3"] if rng.random() < 0.7 else f"{rng.getrandbits(256):064x}"
            if all(s["artifact_id"] != a["artifact_id"] for s in o["selected_artifacts"]):
                o["selected_artifacts"].append({"artifact_id": a["artifact_id"],
                                                "blake3": digest})
        if rng.random() < 0.1 and o["selected_artifacts"]:
            o["selected_artifacts"].pop(rng.randrange(len(o["selected_artifacts"])))
        if rng.random() < 0.03:
            o["selected_artifacts"].append({"artifact_id": f"unregistered-{rng.randint(0, 9)}",
                                            "blake3": "0" * 64})
            o["selected_artifacts"] = list({s["artifact_id"]: s
                                            for s in o["selected_artifacts"]}.values())
        kept.append(o)
    run["observations"] = kept
    return bench, run


def _random_report(seed: int) -> Report:
    bench_doc, run_doc = _random_documents(seed)
    bench = parse_benchmark(bench_doc, path="benchmark.json")
    return evaluate(bench, parse_run(run_doc, path="run.json"), CHECK)


SEEDS = range(24)


@functools.cache
def _reports() -> list[Report]:
    return [_random_report(seed) for seed in SEEDS]


# -- round trips -----------------------------------------------------------------------


def test_there_is_a_golden_report() -> None:
    assert [p.parent.name for p in _goldens()] == ["eceb-seed"]


@pytest.mark.parametrize("path", _goldens(), ids=lambda p: p.parent.name)
def test_golden_round_trip(path: Path) -> None:
    raw = path.read_bytes()
    doc = json.loads(raw)
    model = _read(doc, str(path))
    assert model.to_json() == doc
    assert report_json_bytes(model.to_json()) == raw
    assert _read(model.to_json()) == model


def test_golden_is_what_the_evaluator_builds() -> None:
    built = evaluate(BENCH, parse_run(RUN_DOC, path="run.json"), CHECK)
    assert report_json_bytes(built.to_json()) == (GOLDEN_ROOT / "eceb-seed" /
                                                  "report.json").read_bytes()


def test_randomized_reports_round_trip_and_validate() -> None:
    reports = _reports()
    fractional = sum(1 for r in reports for t in r.tasks
                     if t.baseline_input_tokens is not None
                     and t.baseline_input_tokens.denominator != 1)
    assert fractional > 20  # means that are written rounded are exercised
    assert any(r.aggregate.naive_top_k is None for r in reports)
    assert len({r.claim_class.reported for r in reports}) == 4
    for report in reports:
        doc = report.to_json()
        errors = [e.message for e in VALIDATOR.iter_errors(doc)]
        assert errors == []
        again = _read(json.loads(json.dumps(doc)))
        assert again.to_json() == doc
        assert _read(again.to_json()) == again
        # rounding happens when writing only: the model keeps exact means
        assert all(t.baseline.mean_input_tokens is None
                   or isinstance(t.baseline.mean_input_tokens, Fraction) for t in report.tasks)


def test_notes_round_trip_and_are_left_out_when_empty() -> None:
    doc = json.loads((GOLDEN_ROOT / "eceb-seed" / "report.json").read_text(encoding="utf-8"))
    assert "notes" not in doc
    noted = {**doc, "notes": ["ran on the fixture provider"]}
    model = _read(noted)
    assert model.notes == ("ran on the fixture provider",)
    assert list(model.to_json()) == [*doc, "notes"] and model.to_json() == noted
    assert VALIDATOR.is_valid(noted)


# -- the model and the schema describe the same document -------------------------------


def test_model_and_schema_describe_the_same_members() -> None:
    agree_object(Report, SCHEMA, SCHEMA, "")


def test_closed_sets_match_the_protocol_constants() -> None:
    assert get_args(StrategyName) == STRATEGIES
    assert get_args(ClaimName) == CLAIM_CLASSES
    assert get_args(GateName) == GATES
    assert get_args(field_kinds(Report)["schema"][0]) == (REPORT_SCHEMA,) == (Report.VERSION,)


def test_agreement_check_notices_a_drift() -> None:
    edits = [
        lambda s: s["$defs"]["row"]["properties"].__setitem__("median", {"type": "number"}),
        lambda s: s["$defs"]["task"]["required"].remove("floor_quality_milli"),
        lambda s: s["$defs"]["row"]["properties"]["min_quality_milli"].__setitem__(
            "type", "integer"),
        lambda s: s["$defs"]["strategy"]["properties"]["budgets"].__setitem__(
            "type", "object"),
        lambda s: s["$defs"]["failure"]["properties"]["code"]["enum"].pop(),
    ]
    for edit in edits:
        drifted = copy.deepcopy(SCHEMA)
        edit(drifted)
        with pytest.raises(AssertionError):
            agree_object(Report, drifted, drifted, "")


# -- located errors --------------------------------------------------------------------


def _golden_doc() -> dict[str, Any]:
    return json.loads((GOLDEN_ROOT / "eceb-seed" / "report.json").read_text(encoding="utf-8"))


def _edit(edit: Any) -> dict[str, Any]:
    doc = _golden_doc()
    edit(doc)
    return doc


BAD = [
    (lambda d: d["tasks"][2]["budgets"][1].pop("passed"),
     "report.json: /tasks/2/budgets/1/passed: required field is missing"),
    (lambda d: d["tasks"][0].__setitem__("qualified", "yes"),
     'report.json: /tasks/0/qualified: expected a boolean, got the string "yes"'),
    (lambda d: d["summary"].__setitem__("observations", 239.0),
     "report.json: /summary/observations: expected an integer, got the number 239.0"),
    (lambda d: d["tasks"][1]["budgets"][0]["gates"].__setitem__("policy", "ok"),
     'report.json: /tasks/1/budgets/0/gates/policy: expected one of "pass", "fail", '
     '"not_applicable", got the string "ok"'),
    (lambda d: d["aggregate"]["compiled"].__setitem__("median_savings_bps", 1),
     "report.json: /aggregate/compiled/median_savings_bps: expected no such member (the "
     "format does not define it), got the integer 1"),
    (lambda d: d["tasks"][0].__setitem__("baseline_input_tokens", "17248"),
     'report.json: /tasks/0/baseline_input_tokens: expected a number, got the string "17248"'),
    (lambda d: d["identities"]["model"].__setitem__("revision", [1]),
     "report.json: /identities/model/revision: expected a string, an integer, a boolean or "
     "null, got an array"),
    (lambda d: d["corpus"].__setitem__("verified", False),
     "report.json: /corpus/verified: expected true, got the boolean false"),
    (lambda d: d.__setitem__("schema", "symgliph.eceb/report-v0.2"),
     'report.json: /schema: expected "symgliph.eceb/report-v0.1" (an ECEB-0.1 report), '
     'got the string "symgliph.eceb/report-v0.2"'),
    (lambda d: d.__setitem__("gates", d["gates"][::-1]),
     "report.json: /gates: expected the seven gates in §11 order"),
    (lambda d: d.__setitem__("notes", []),
     "report.json: /notes: expected at least one note"),
    (lambda d: d.__setitem__("notes", ["fixture", ""]),
     "report.json: /notes/1: expected a non-empty note, got the empty string"),
    (lambda d: d["tasks"][3].__setitem__("naive_top_k", {}),
     "report.json: /tasks/3/naive_top_k/qualified: required field is missing"),
]


@pytest.mark.parametrize(("edit", "message"), BAD, ids=[m.split(":")[1] for _, m in BAD])
def test_a_bad_member_is_named_by_its_pointer(edit: Any, message: str) -> None:
    with pytest.raises(PointerError) as caught:
        _read(_edit(edit))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_the_schema_rejects_what_the_reader_rejects() -> None:
    for edit, message in BAD:
        assert not VALIDATOR.is_valid(_edit(edit)), message


@pytest.mark.parametrize("command", ["render", "report"])
def test_cli_exits_2_with_one_line(tmp_path: Path, command: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "report.json"
    doc = _golden_doc()
    del doc["tasks"][4]["baseline"]["gates"]["repeatability"]
    bad.write_text(json.dumps(doc))
    args = (["eceb", "render", str(bad)] if command == "render"
            else ["report", str(bad), "--html", str(tmp_path / "page.html")])
    code = run_guarded(cli, args)
    _, err = capsys.readouterr()
    assert code == 2
    assert err == (f"ctxbench: error: {bad}: /tasks/4/baseline/gates/repeatability: "
                   "required field is missing\n")


# -- every verdict from one function ---------------------------------------------------


def test_claim_comes_from_decide_claim_only(monkeypatch: pytest.MonkeyPatch) -> None:
    decided = ClaimClass("public_reproduction", "enterprise_proxy", "public_reproduction",
                         ("decided once",))
    calls: list[str] = []

    def decide(run: Any, benchmark: Any) -> ClaimClass:
        calls.append(run.run_id)
        return decided

    monkeypatch.setattr(evaluate_module, "decide_claim", decide)
    report = evaluate(BENCH, parse_run(RUN_DOC, path="run.json"), CHECK)
    assert calls == [RUN_DOC["run_id"]]
    assert report.claim_class is decided
    assert "Claim class: **public_reproduction** (run declared enterprise_proxy" in \
        render_markdown(report)
    html = "".join(s.body for s in eceb_sections(report, Ids()))
    assert "<strong>public_reproduction</strong> (run declared enterprise_proxy" in html
    assert "decided once" in html


def test_qualification_comes_from_qualifies_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluate_module, "qualifies", lambda best, base, tokens: False)
    report = evaluate(BENCH, parse_run(RUN_DOC, path="run.json"), CHECK)
    assert not any(t.qualified for t in report.tasks)
    assert all(t.token_savings_bps is None for t in report.tasks)
    assert report.summary.qualified == 0 and report.summary.all_qualified is False
    assert report.aggregate.compiled is not None
    assert report.aggregate.compiled.qualified_tasks.numerator == 0
    assert report.aggregate.compiled.mean_token_savings_bps is None
    assert "0 of 13 tasks qualified" in render_markdown(report)


def test_minimum_viable_budget_comes_from_minimum_viable_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    original = evaluate_module.minimum_viable

    def last(results: Any) -> Any:  # the highest passing rung instead of the lowest
        return original(list(results)[::-1])

    monkeypatch.setattr(evaluate_module, "minimum_viable", last)
    report = evaluate(BENCH, parse_run(RUN_DOC, path="run.json"), CHECK)
    task = next(t for t in report.tasks if t.task_id == "payments-failover-region")
    assert task.minimum_viable_budget == 2048  # the seed's own B* is 256
    assert "| payments-failover-region | yes | 2048 |" in render_markdown(report)


@pytest.mark.parametrize("seed", list(SEEDS))
def test_verdicts_agree_with_the_gate_records(seed: int) -> None:
    """Each row's gates fail exactly where a failure was recorded; B* is the first passing
    rung; a task qualifies only with a B* and a passing baseline (as decided once)."""
    report = _reports()[seed]
    for task in report.tasks:
        strategies: list[tuple[StrategyName, Any]] = [("compiled", task)]
        if task.naive_top_k is not None:
            strategies.append(("naive_top_k", task.naive_top_k))
        failures = task_failures(task)
        base_failed = {f.gate for f in failures if f.strategy == "full_permitted_context"}
        assert {g for g, s in task.baseline.gates.items() if s == "fail"} == base_failed
        assert task.baseline.passed == (not base_failed)
        for name, result in strategies:
            for row in result.budgets:
                failed = {f.gate for f in failures
                          if f.strategy == name and f.budget == row.budget}
                assert {g for g, s in row.gates.items() if s == "fail"} == failed
                assert row.passed == (not failed)
            passing = [r.budget for r in result.budgets if r.passed]
            assert result.minimum_viable_budget == (passing[0] if passing else None)
            assert result.qualified == (bool(passing) and task.baseline.passed
                                        and task.baseline.repetitions > 0)


def test_renderers_read_verdicts_without_deciding_them() -> None:
    doc = _golden_doc()
    task = doc["tasks"][0]
    assert task["qualified"] is True and task["budgets"][0]["passed"] is True
    task["qualified"] = False  # contradicts the rows on purpose: shown as written
    task["budgets"][0]["passed"] = False
    report = _read(doc)
    text = render_markdown(report)
    assert f"| {task['task_id']} | no | " in text
    html = "".join(s.body for s in eceb_sections(report, Ids()))
    assert f"{task['task_id']}</td><td><span class=\"bad\">no</span>" in html


def test_input_error_is_the_base() -> None:
    assert issubclass(PointerError, InputError)


def test_html_lists_each_failed_assertion_once() -> None:
    """Baseline failures are part of a task's failures and are listed once, not twice."""
    report = next(r for r in _reports() for t in r.tasks if t.baseline.failures)
    total = sum(len(task_failures(t)) for t in report.tasks)
    assert total == sum(len(t.failures) + (len(t.naive_top_k.failures) if t.naive_top_k
                                           else 0) for t in report.tasks)
    html = "".join(s.body for s in eceb_sections(report, Ids()))
    assert f"All {total} failed assertions" in html
    markdown = render_markdown(report)
    assert markdown.count("\n- full_permitted_context @") == sum(
        len(t.baseline.failures) for t in report.tasks)


def test_the_located_read_gives_the_same_model_as_the_fast_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.core import jsonfast, jsonmodel

    docs = [_golden_doc(), *(json.loads(json.dumps(r.to_json())) for r in _reports()[:4])]
    fast = [_read(d) for d in docs]

    def refuse(cls: type) -> Any:
        def read(value: Any) -> Any:
            raise jsonfast.MISMATCH
        return read

    monkeypatch.setattr(jsonmodel, "fast_object", refuse)
    assert [_read(d) for d in docs] == fast
