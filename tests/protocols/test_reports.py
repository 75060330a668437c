"""read_report: any report ctxbench writes, back as the typed model its version names."""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from ctxbench.core import InputError, PointerError
from ctxbench.core.atomic import report_json_bytes
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.planning import StudyDesign, plan_study
from ctxbench.protocols.compile_evaluation.model import EvaluationReport, EvaluationRow, SummaryRow
from ctxbench.protocols.eceb.model import Report as EcebReport
from ctxbench.protocols.public_eval.model import PublicEvalReport
from ctxbench.protocols.reports import REPORT_KINDS, REPORT_MODELS, read_report, report_model
from ctxbench.schemas import load_schema

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize(("case", "model"), [
    ("cef-two-stratum", CefReport), ("cef-no-claim", CefReport),
    ("public-eval-basic", PublicEvalReport), ("public-eval-repeated", PublicEvalReport),
    ("eceb-seed", EcebReport),
])
def test_every_golden_report_reads_as_its_model(case: str, model: type) -> None:
    path = GOLDEN / case / "report.json"
    report = read_report(path)
    assert type(report) is model
    assert report.to_json() == json.loads(path.read_text(encoding="utf-8"))


def _evaluation() -> EvaluationReport:
    row = EvaluationRow("t1", 96, "compiled", True, 1.0, 90, 10, False, 0, 1.23456)
    summary = SummaryRow("compiled", 96, 1, 1, 1.0, 1.0, 90.0, 0.111111, 0, 0, 1.2, 1.3)
    return EvaluationReport("ctxbench.compile-evaluation.v1", "b", "tok", ("compiled",),
                            (96,), (summary,), (row,))


def test_a_compile_evaluation_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "evaluation.json"
    path.write_bytes(report_json_bytes(_evaluation().to_json()))
    report = read_report(path)
    assert isinstance(report, EvaluationReport)
    assert report.to_json() == _evaluation().to_json()


def test_a_study_plan_reads_back_and_a_refused_design_is_located(tmp_path: Path) -> None:
    plan = plan_study(StudyDesign("continuous", margin=0.05, difference=0.0, sd=0.12,
                                  replicates=2), replications=200, seed=3)
    path = tmp_path / "plan.json"
    path.write_bytes(report_json_bytes(plan.to_json()))
    assert read_report(path) == plan
    doc = plan.to_json()
    doc["design"]["sd"] = 0.99
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PointerError, match=r"plan\.json: /design/sd: expected a spread the "):
        read_report(path)
    doc["design"].update(sd=0.12, fragile_share=1.0)
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PointerError, match=r"/design/fragile_share: expected null \(it does "
                                           r"not apply to continuous scores\)"):
        read_report(path)


def test_the_library_door_reads_through_the_one_table_of_kinds() -> None:
    """``ctxbench.read_report`` (path, bytes or dict) and this module read the same kinds
    the same way: the face keeps no table of its own."""
    import ctxbench
    from ctxbench import report_reader

    assert typing.get_args(report_reader.Kind) == tuple(REPORT_KINDS)
    assert not hasattr(report_reader, "KINDS")
    plan = plan_study(StudyDesign("continuous", margin=0.05, difference=0.0, sd=0.12,
                                  replicates=2), replications=200, seed=3)
    assert ctxbench.read_report(plan.to_json()) == plan
    assert report_reader.read_report_of("plan", plan.to_json()) == plan
    for kind in REPORT_KINDS.values():
        assert REPORT_MODELS[kind.version] == (kind.module, kind.model)


def test_the_table_names_every_report_schema_ctxbench_ships() -> None:
    assert set(REPORT_MODELS) == {"ctxbench.cef-report.v1", "ctxbench.public-eval-report.v1",
                                  "symgliph.eceb/report-v0.1",
                                  "ctxbench.compile-evaluation.v1", "ctxbench.plan.v1"}
    for version in REPORT_MODELS:
        assert load_schema(version.replace("/", "__"))["$id"].endswith(version)
        model = report_model(version)
        assert getattr(model, "SCHEMA_VERSION", getattr(model, "VERSION", None)) == version


@pytest.mark.parametrize(("text", "message"), [
    ('{"schema_version": "ctxbench.cef-report.v9"}',
     '/schema_version: expected one of "ctxbench.cef-report.v1", '
     '"ctxbench.public-eval-report.v1", "symgliph.eceb/report-v0.1", '
     '"ctxbench.compile-evaluation.v1", "ctxbench.plan.v1" (a report ctxbench writes), '
     'got the string '
     '"ctxbench.cef-report.v9"'),
    ('{"schema": 3}', '/schema: expected one of "ctxbench.cef-report.v1", '),
    ('{"tasks": 3}', "/schema_version: required field is missing (the schema version "
                     "names the report's kind)"),
    ("[1]", "/: expected a JSON object (a report ctxbench writes), got an array"),
    ('{"schema_version": "ctxbench.public-eval-report.v1", "tasks": 1}',
     "/inputs: required field is missing"),
])
def test_a_bad_file_is_one_located_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PointerError) as caught:
        read_report(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_a_file_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"schema_version":\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"x\.json:\d+: expected valid JSON"):
        read_report(path)


def test_reading_a_cef_report_imports_no_other_model_and_no_numpy() -> None:
    code = ("import sys; from ctxbench.protocols.reports import read_report; "
            f"read_report({str(GOLDEN / 'cef-passing' / 'report.json')!r}); "
            "print(sorted(m for m in ('numpy', 'ctxbench.protocols.public_eval.model', "
            "'ctxbench.protocols.eceb.model', 'ctxbench.compiler') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
