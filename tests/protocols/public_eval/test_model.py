"""The typed public-eval report: round trips, agreement with the JSON Schema, located
errors, and the status decided in one function."""

from __future__ import annotations

import ast
import dataclasses
import json
import random
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import PointerError
from ctxbench.core.atomic import report_json_bytes
from ctxbench.core.jsonl import JsonLine
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval import (
    PublicEvalReport,
    Settings,
    analyze,
    model_io,
    model_parts,
    pair_rows,
    rows_from_lines,
)
from ctxbench.protocols.public_eval import model as model_module
from ctxbench.protocols.public_eval.verdict import status_and_reasons
from ctxbench.render.public_eval import render_markdown
from ctxbench.schemas import load_schema, validator
from model_schema import agree_object

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden"
SCHEMA = "ctxbench.public-eval-report.v1"
GOLDEN_REPORTS = sorted(GOLDEN.glob("public-eval-*/report.json"))


def _read(doc: Any, path: str = "report.json") -> PublicEvalReport:
    return PublicEvalReport.from_json(Node(path, "", doc))


# -- randomized reports (seeded) ---------------------------------------------------------

def _rows(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Settings]:
    """A random pair of row files exercising every optional part of the report."""
    n = rng.choice([3, 9, 25, 40, 60, 60, 60])
    runs = rng.choice([1, 1, 2, 3])
    has = {name: rng.choice(["all", "none", "some"]) for name in
           ("usd", "latency_ms", "tool_calls", "governance_tokens", "governance_usd",
            "governance_latency_ms", "breakdown", "repeated_calls")}
    reviewed = rng.random() < 0.6
    unmeasured_usd = rng.random() < 0.15
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    resolved_rate = rng.choice([0.0, 0.6, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8]) if n > 3 else 0.7
    flip = rng.choice([0.0, 0.02, 0.3])  # how often the treatment's outcome differs
    loss = rng.random() < 0.3  # every difference a regression
    saving = rng.choice([0.5, 0.7, 1.0, 1.2])
    for i in range(n):
        for run in range(runs):
            resolved = rng.random() < resolved_rate
            for arm, scale in ((base, 1.0), (treat, saving)):
                tokens = max(1, int(rng.lognormvariate(8, 1) * scale))
                if arm is treat and rng.random() < flip:
                    resolved = False if loss else not resolved
                row: dict[str, Any] = {"instance_id": f"task-{i:03d}", "run": run,
                                       "resolved": resolved, "tokens": tokens}

                def present(name: str) -> bool:
                    return has[name] == "all" or (has[name] == "some" and rng.random() < 0.7)

                if present("usd"):
                    row["usd"] = round(tokens * 2.5e-6, 6)
                    if unmeasured_usd and rng.random() < 0.3:
                        row["usd_measured"] = False
                if present("latency_ms"):
                    row["latency_ms"] = rng.randint(100, 90000) + rng.choice([0, 0.25])
                if present("tool_calls"):
                    row["tool_calls"] = rng.randint(0, 40)
                if present("repeated_calls"):
                    row["repeated_calls"] = rng.randint(0, 5)
                if present("breakdown"):
                    row["output_tokens"] = tokens // 4
                    row["reasoning_tokens"] = tokens // 8
                if arm is treat:
                    if present("governance_tokens"):
                        row["governance_tokens"] = rng.randint(0, 300)
                    if present("governance_usd"):
                        row["governance_usd"] = rng.randint(0, 1000) * 1e-6
                    if present("governance_latency_ms"):
                        row["governance_latency_ms"] = rng.randint(0, 5000) / 8
                    if reviewed and rng.random() < 0.6:
                        row["reviewed_stops"] = rng.randint(0, 3)
                        row["false_stops"] = rng.randint(0, row["reviewed_stops"])
                arm.append(row)
    settings = Settings(confidence_level=rng.choice([0.9, 0.95]),
                        quality_margin_pp=rng.choice([1.0, 5.0, 20.0, 40.0]),
                        bootstrap_samples=1000, seed=rng.randint(0, 10**6),
                        min_savings_percent=rng.choice([0.0, 10.0]),
                        max_false_stop_rate=rng.choice([0.0, 0.5]),
                        treatment_name=rng.choice(["treatment", "governor"]))
    return base, treat, settings


def _analyze(base: list[dict[str, Any]], treat: list[dict[str, Any]],
             settings: Settings) -> PublicEvalReport:
    tables = [rows_from_lines([JsonLine(name, k + 1, r) for k, r in enumerate(rows)],
                              path=name) for name, rows in (("b.jsonl", base), ("t.jsonl", treat))]
    return analyze(pair_rows(*tables), settings)


RANDOM_SEEDS = range(32)


@pytest.fixture(scope="module")
def random_reports() -> list[tuple[PublicEvalReport, Settings]]:
    out = []
    for seed in RANDOM_SEEDS:
        base, treat, settings = _rows(random.Random(seed))
        out.append((_analyze(base, treat, settings), settings))
    return out


def test_random_reports_cover_every_optional_part(
        random_reports: list[tuple[PublicEvalReport, Settings]]) -> None:
    reports = [r for r, _ in random_reports]
    assert {r.status for r in reports} == {"not_evaluable", "supported", "no_savings",
                                           "not_non_inferior", "quality_loss",
                                           "false_stop_risk"}
    assert any(r.savings.net for r in reports) and any(not r.savings.net for r in reports)
    assert any(r.false_stops is not None for r in reports)
    assert any(r.baseline.token_breakdown is not None for r in reports)
    assert any(r.savings.usd is None for r in reports)
    assert any(r.quality.design_effect is not None for r in reports)
    # overhead in some rows only: the net headline is unknown, the gross one stays
    assert any(r.savings.tokens is None and r.savings.gross_tokens is not None
               for r in reports)
    assert any(r.savings.gross_usd is None and "usd" in r.savings.net for r in reports)


# -- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize("path", GOLDEN_REPORTS, ids=lambda p: p.parent.name)
def test_golden_reports_round_trip_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    doc = json.loads(raw)
    report = _read(doc, str(path))
    assert report.to_json() == doc
    assert report_json_bytes(report.to_json()) == raw
    assert _read(report.to_json()) == report
    assert report.as_written() == report


def test_random_reports_round_trip_and_validate(
        random_reports: list[tuple[PublicEvalReport, Settings]]) -> None:
    check = validator(SCHEMA)
    for report, _ in random_reports:
        doc = report.to_json()
        assert [e.message for e in check.iter_errors(doc)] == []
        again = _read(doc)
        assert again.to_json() == doc
        assert report_json_bytes(again.to_json()) == report_json_bytes(doc)
        assert _read(again.to_json()) == again
        # built from the model, without writing it: what a reader of its JSON gets back
        assert report.as_written() == again
        # the model read back is the fresh one rounded: same status, same Markdown
        assert again.status == report.status and again.reasons == report.reasons
        assert render_markdown(again) == render_markdown(report)


def test_a_fresh_model_holds_full_precision_and_rounds_only_when_written(
        random_reports: list[tuple[PublicEvalReport, Settings]]) -> None:
    report = next(r for r, _ in random_reports if r.savings.tokens is not None
                  and r.savings.tokens.percent_saved is not None)
    tokens = report.savings.tokens
    assert tokens is not None and tokens.percent_saved is not None
    written = report.to_json()["savings"]["tokens"]["percent_saved"]
    assert written == round(tokens.percent_saved, 4)
    assert tokens.percent_saved != written  # not pre-rounded
    assert isinstance(report.baseline.tokens, int)


def test_notes_and_extra_methodology_members_are_kept_in_order() -> None:
    doc = json.loads(GOLDEN_REPORTS[0].read_text())
    doc["methodology"]["operator"] = "lab A"
    doc["methodology"]["budget_usd"] = 12
    doc["notes"] = ["conformance fixture: nothing was measured"]
    report = _read(doc)
    assert report.methodology.extra == (("operator", "lab A"), ("budget_usd", 12))
    assert report.notes == ("conformance fixture: nothing was measured",)
    assert report.to_json() == doc
    assert [e.message for e in validator(SCHEMA).iter_errors(doc)] == []


# -- the model and the schema describe the same members ------------------------------------

def test_model_and_schema_describe_the_same_members() -> None:
    schema = load_schema(SCHEMA)
    assert schema["properties"]["schema_version"] == {"const": PublicEvalReport.SCHEMA_VERSION}
    # Savings reads itself: ``net`` says which gross_* members exist (each may be absent)
    gross = frozenset({"gross_tokens", "gross_usd", "gross_latency_ms"})
    agree_object(PublicEvalReport, schema, schema, "",
                 {model_module.Savings: {"unlisted": frozenset({"net"}), "absent": gross}})


def test_arms_and_per_resolved_share_the_schema_of_each_side() -> None:
    schema = load_schema(SCHEMA)
    assert schema["properties"]["baseline"] == schema["properties"]["treatment"]
    savings = schema["properties"]["savings"]["properties"]
    assert savings["tokens"]["oneOf"] == savings["gross_tokens"]["oneOf"]


# -- located errors ------------------------------------------------------------------------

def _golden() -> dict[str, Any]:
    return typing.cast(dict[str, Any], json.loads(GOLDEN_REPORTS[1].read_text()))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.pop("status"), "/status: required field is missing"),
    (lambda r: r.update(status="passed"),
     '/status: expected one of "not_evaluable", "quality_loss", "not_non_inferior", '
     '"false_stop_risk", "no_savings", "supported", got the string "passed"'),
    (lambda r: r["baseline"]["resolve_rate"].pop("ci"),
     "/baseline/resolve_rate/ci: required field is missing"),
    (lambda r: r["treatment"].update(tokens=1.5),
     "/treatment/tokens: expected an integer, got the number 1.5"),
    (lambda r: r["savings"]["tokens"].update(basis="gross"),
     '/savings/tokens/basis: expected one of "net", "agent", got the string "gross"'),
    (lambda r: r["savings"].pop("gross_tokens"),
     "/savings/tokens/basis: expected 'agent' (no gross_tokens member beside it), got 'net'"),
    (lambda r: r["quality"]["gate_ci_pp"].append(1.0),
     "/quality/gate_ci_pp: expected an array of two numbers, got an array"),
    (lambda r: r["quality"]["regressed_cells"]["listed"][2].update(run="1"),
     '/quality/regressed_cells/listed/2/run: expected an integer, got the string "1"'),
    (lambda r: r["quality"]["not_gating"].update(extra_ci_pp=[1, 2]),
     "/quality/not_gating/extra_ci_pp: expected no such member "
     "(ctxbench.public-eval-report.v1 does not define it), got an array"),
    (lambda r: r["inputs"].update({"note\nb": 1}),
     "/inputs/note\\nb: expected no such member (ctxbench.public-eval-report.v1 does not "
     "define it), got the integer 1"),
    (lambda r: r["methodology"].update(seed=None),
     "/methodology/seed: expected an integer, got null"),
    (lambda r: r["methodology"].update(operator=["a"]),
     "/methodology/operator: expected a string or a number, got an array"),
    (lambda r: r.update(schema_version="ctxbench.public-eval-report.v2"),
     "/schema_version: expected 'ctxbench.public-eval-report.v1' (the version this "
     'ctxbench reads), got the string "ctxbench.public-eval-report.v2"'),
])
def test_a_missing_mistyped_or_unknown_field_names_its_pointer(edit: Any, message: str) -> None:
    doc = _golden()
    edit(doc)
    with pytest.raises(PointerError) as info:
        _read(doc)
    assert str(info.value) == f"report.json: {message}"


def test_the_render_command_reports_a_bad_report_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _golden()
    del doc["quality"]["not_gating"]["bootstrap_method"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = run_guarded(cli, ["report", str(path), "--html", str(tmp_path / "p.html")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (f"ctxbench: error: {path}: /quality/not_gating/bootstrap_method: required "
                   "field is missing\n")
    assert not (tmp_path / "p.html").exists()


def test_the_markdown_dispatcher_reads_through_the_model() -> None:
    from ctxbench.render.markdown import render_markdown as any_markdown

    doc = _golden()
    assert any_markdown(doc) == render_markdown(_read(doc))
    doc["baseline"]["governance"]["false_stops"] = -0.5
    with pytest.raises(PointerError, match=r"^run/x.json: /baseline/governance/false_stops: "
                                           "expected an integer, got the number -0.5$"):
        any_markdown(doc, where="run/x.json")


# -- the status: decided in one function, carried by the model ------------------------------

def _decide(report: PublicEvalReport, settings: Settings) -> tuple[str, list[str]]:
    return status_and_reasons(
        tasks=report.tasks, resolved=(report.baseline.resolved, report.treatment.resolved),
        quality=report.quality, token_savings=report.savings.tokens,
        false_stops=report.false_stops, settings=settings)


def test_the_status_is_the_decision_on_the_models_own_fields(
        random_reports: list[tuple[PublicEvalReport, Settings]]) -> None:
    for report, settings in random_reports:
        status, reasons = _decide(report, settings)
        assert (status, tuple(reasons)) == (report.status, report.reasons)


def test_changing_one_decision_input_changes_the_status_through_the_one_function(
        random_reports: list[tuple[PublicEvalReport, Settings]]) -> None:
    report, settings = next((r, s) for r, s in random_reports if r.status == "supported")
    q, tokens = report.quality, report.savings.tokens
    assert tokens is not None
    cases = [
        (dict(tasks=9), "not_evaluable"),
        (dict(quality=dataclasses.replace(q, shows_loss=True, non_inferior=False)),
         "quality_loss"),
        (dict(quality=dataclasses.replace(q, non_inferior=False)), "not_non_inferior"),
        (dict(savings=dataclasses.replace(report.savings, tokens=dataclasses.replace(
            tokens, gate_lower_bound=settings.min_savings_percent))), "no_savings"),
        (dict(savings=dataclasses.replace(report.savings, tokens=None)), "no_savings"),
        (dict(false_stops=model_parts.FalseStops(4, 3, 0.75, (0.3, 0.95), "wilson", 0.5,
                                                 True)), "false_stop_risk"),
    ]
    for change, expected in cases:
        status, _ = _decide(dataclasses.replace(report, **change), settings)
        assert status == expected, change


def test_no_other_module_names_a_failing_status() -> None:
    """Status literals appear only in the model (the closed set), the decision, and the
    HTML page's explanation of each status (CEF's own outcome kinds, among them
    ``not_evaluable`` for a hypothesis, live in its protocol and renderer)."""
    failing = {"not_evaluable", "quality_loss", "not_non_inferior", "false_stop_risk",
               "no_savings"}
    cef = {"ctxbench/protocols/cef", "ctxbench/render/outcomes.py"}
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "src" / "ctxbench").rglob("*.py")):
        if any(str(path.relative_to(ROOT / "src")).startswith(part) for part in cef):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in failing:
                found.setdefault(str(path.relative_to(ROOT / "src")), set()).add(node.value)
    assert set(found) == {"ctxbench/protocols/public_eval/model.py",
                          "ctxbench/protocols/public_eval/verdict.py",
                          "ctxbench/render/html/public_eval_page.py"}
    verdict = ast.parse((ROOT / "src/ctxbench/protocols/public_eval/verdict.py").read_text())
    deciders = {fn.name for fn in ast.walk(verdict) if isinstance(fn, ast.FunctionDef)
                and any(isinstance(n, ast.Constant) and n.value in failing
                        for n in ast.walk(fn))}
    assert deciders == {"status_and_reasons"}


def test_the_model_module_imports_no_numpy() -> None:
    for module in (model_module, model_parts, model_io):
        tree = ast.parse(Path(typing.cast(str, module.__file__)).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(name.split(".")[0] in ("numpy", "scipy") for name in imported)


# -- fuzzed documents: a located error or a consistent model, never a crash ---------------

def _pointers(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every member path of a document (key and index tuples), depth first."""
    items = (list(value.items()) if isinstance(value, dict) else
             list(enumerate(value)) if isinstance(value, list) else [])
    out: list[tuple[Any, ...]] = []
    for key, child in items:
        out.append((*prefix, key))
        out += _pointers(child, (*prefix, key))
    return out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                  max_size=3),
    max_leaves=6)


@hypothesis_settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_fuzzed_report_reads_as_a_located_error_or_a_stable_model(data: st.DataObject) -> None:
    doc = json.loads(GOLDEN_REPORTS[data.draw(st.integers(0, len(GOLDEN_REPORTS) - 1))]
                     .read_text())
    paths = _pointers(doc)
    path = paths[data.draw(st.integers(0, len(paths) - 1))]
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(_JSON)
    try:
        report = _read(doc)
    except PointerError as exc:
        text = str(exc)
        assert text.startswith("report.json: /") and "\n" not in text and len(text) < 600
        return
    assert _read(report.to_json()).to_json() == report.to_json()


def test_reading_and_rendering_a_report_does_not_import_numpy() -> None:
    code = ("import sys, ctxbench.protocols.public_eval.model, ctxbench.render.public_eval, "
            "ctxbench.render.html.report; print(sorted(m for m in ('numpy', 'scipy', "
            "'ctxbench.protocols.public_eval.analysis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_a_report_written_before_outcomes_existed_still_reads() -> None:
    doc = json.loads((GOLDEN / "public-eval-repeated" / "report.json").read_text())
    del doc["quality"]["outcome"]
    report = _read(doc)
    assert report.quality.outcome is None and report.to_json() == doc
    doc["quality"]["outcome"] = None  # present means present: null is not "absent"
    with pytest.raises(PointerError, match=r"/quality/outcome: expected an object, got null"):
        _read(doc)
