"""The library face: the same verbs in ctxbench.cef, .public_eval and .eceb, ctxbench.run,
ctxbench.compile and ctxbench.read_report, checked against the golden reports and pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ctxbench
import ctxbench.cef
import ctxbench.compile
import ctxbench.eceb
import ctxbench.public_eval
import ctxbench.run
from ctxbench.core import InputError, PointerError

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
FACES = (ctxbench.cef, ctxbench.public_eval, ctxbench.eceb)
VERBS = ("read_inputs", "analyze", "read_report", "write_report", "render_markdown",
         "render_html")
REPORTS = {
    "cef-two-stratum": "CefReport", "cef-failure-heavy": "CefReport",
    "cef-no-claim": "CefReport", "cef-passing": "CefReport",
    "public-eval-basic": "PublicEvalReport", "public-eval-repeated": "PublicEvalReport",
    "public-eval-within-margin": "PublicEvalReport", "eceb-seed": "Report",
}


def test_each_protocol_face_has_the_same_verbs() -> None:
    for face in FACES:
        assert all(callable(getattr(face, verb)) for verb in VERBS), face.__name__
    assert {"read_report", "write_report", "render_markdown"} <= set(ctxbench.compile.__all__)


def _sources(path: Path) -> list[Any]:
    raw = path.read_bytes()
    return [path, str(path), raw, json.loads(raw)]


@pytest.mark.parametrize("case", sorted(REPORTS))
def test_read_report_gives_the_typed_model_from_a_path_str_bytes_or_dict(case: str) -> None:
    path = GOLDEN / case / "report.json"
    read = [ctxbench.read_report(source) for source in _sources(path)]
    assert {type(r).__name__ for r in read} == {REPORTS[case]}
    assert all(r == read[0] for r in read)
    face = {"CefReport": ctxbench.cef, "PublicEvalReport": ctxbench.public_eval,
            "Report": ctxbench.eceb}[REPORTS[case]]
    assert face.read_report(path) == read[0]
    # What the model writes is the file, byte for byte (2-space JSON, final newline).
    assert json.dumps(read[0].to_json(), indent=2, ensure_ascii=False) + "\n" == \
        path.read_text(encoding="utf-8")


def test_read_report_reads_a_compile_evaluation(tmp_path: Path) -> None:
    seed = ctxbench.eceb.seed_paths()
    report = ctxbench.compile.evaluate(seed.benchmark, seed.corpus, strategies=["compiled"])
    ctxbench.compile.write_report(tmp_path / "evidence.json", report)
    again = ctxbench.read_report(tmp_path / "evidence.json")
    assert type(again).__name__ == "EvaluationReport"
    assert again == ctxbench.compile.read_report(tmp_path / "evidence.json")
    assert again.to_json() == report.to_json()  # the model as written, rounded
    assert ctxbench.compile.render_markdown(again).startswith(f"{report.benchmark_id}: ")


def test_a_face_refuses_another_protocols_report_at_its_schema_name() -> None:
    cef_report = GOLDEN / "cef-passing" / "report.json"
    with pytest.raises(PointerError) as caught:
        ctxbench.eceb.read_report(cef_report)
    assert str(caught.value) == (f"{cef_report}: /schema_version: expected an ECEB report, "
                                 'got a CEF report (the string "ctxbench.cef-report.v1")')
    with pytest.raises(PointerError) as caught:
        ctxbench.cef.read_report(GOLDEN / "eceb-seed" / "report.json", display="r.json")
    assert str(caught.value) == ('r.json: /schema: expected a CEF report, got an ECEB report '
                                 '(the string "symgliph.eceb/report-v0.1")')
    with pytest.raises(PointerError) as caught:
        ctxbench.read_report({"schema_version": "ctxbench.trial.v1"})
    assert str(caught.value) == ('<document>: /schema_version: expected one of '
                                 '"ctxbench.cef-report.v1", "ctxbench.public-eval-report.v1", '
                                 '"symgliph.eceb/report-v0.1", '
                                 '"ctxbench.compile-evaluation.v1", "ctxbench.plan.v1" (a '
                                 'report ctxbench writes), got the string "ctxbench.trial.v1"')
    with pytest.raises(PointerError, match=r"^<document>: /schema_version: expected "
                                           r"'ctxbench.cef-report.v1'"):
        ctxbench.cef.read_report({"schema_version": "ctxbench.cef-report.v9"})


def test_bad_bytes_are_located_errors() -> None:
    with pytest.raises(InputError, match=r"^<bytes>: expected UTF-8 text, got an invalid "
                                         r"byte at offset 1$"):
        ctxbench.read_report(b"{\xff}")
    with pytest.raises(InputError, match=r"^<bytes>:1: expected valid JSON"):
        ctxbench.read_report(b"{")
    with pytest.raises(TypeError, match="source: expected a path, bytes or a decoded JSON"):
        ctxbench.read_report(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("case", "face"), [
    ("cef-two-stratum", ctxbench.cef), ("cef-failure-heavy", ctxbench.cef),
    ("public-eval-basic", ctxbench.public_eval), ("public-eval-repeated", ctxbench.public_eval),
    ("eceb-seed", ctxbench.eceb)])
def test_renderings_are_the_golden_markdown_and_page(case: str, face: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    name = f"tests/golden/{case}/report.json"
    report = face.read_report(name)
    markdown = (face.render_markdown(report, report_name="report.json") if face is ctxbench.cef
                else face.render_markdown(report))
    assert markdown == (GOLDEN / case / "report.md").read_text(encoding="utf-8")
    page = (GOLDEN / f"html-{case}" / "page.html").read_text(encoding="utf-8")
    assert face.render_html(report, report_name=name) == page


def test_analyze_gives_the_golden_reports(tmp_path: Path) -> None:
    folder = GOLDEN / "public-eval-basic"
    report = ctxbench.public_eval.analyze(
        folder / "baseline.jsonl", folder / "treatment.jsonl",
        ctxbench.public_eval.Settings(treatment_name="marginal", quality_margin_pp=10.0))
    ctxbench.public_eval.write_report(tmp_path / "pe.json", report)
    assert (tmp_path / "pe.json").read_bytes() == (folder / "report.json").read_bytes()
    cells = ctxbench.public_eval.read_inputs(folder / "baseline.jsonl",
                                             folder / "treatment.jsonl")
    assert len(cells.instance) == report.cells
    seed = ctxbench.eceb.seed_paths()
    ctxbench.eceb.write_report(tmp_path / "eceb.json",
                               ctxbench.eceb.analyze(seed.benchmark, seed.run, seed.corpus))
    assert (tmp_path / "eceb.json").read_bytes() == \
        (GOLDEN / "eceb-seed" / "report.json").read_bytes()
    inputs = ctxbench.eceb.read_inputs(seed.benchmark, seed.run, seed.corpus)
    assert inputs.corpus.root == inputs.benchmark.root


def test_cef_analyze_records_only_the_command_it_is_given(tmp_path: Path) -> None:
    trials, prereg = ctxbench.cef.example_paths()
    report = ctxbench.cef.analyze([trials], prereg, output=tmp_path / "report.json")
    assert report.methodology.reproduce is None  # the library spells no command line
    given = ctxbench.cef.analyze([trials], prereg, command=["my-tool", "analyze"])
    assert given.methodology.reproduce == "my-tool analyze"
    table = ctxbench.cef.read_inputs([trials])
    assert len(table.task) > 0 and "raw" in table.conditions
    assert ctxbench.cef.read_preregistration(prereg).source == "file"


def test_importing_the_faces_imports_no_analysis() -> None:
    """On a plain install (no extra importable) the faces import, and load nothing heavy."""
    from test_optional_extras import EXTRAS

    code = ("import importlib.abc, sys\n"
            "class Missing(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            f"        if name.split('.')[0] in {set(EXTRAS)!r}:\n"
            "            raise ModuleNotFoundError(name, name=name)\n"
            "sys.meta_path.insert(0, Missing())\n"
            "import ctxbench, ctxbench.cef, ctxbench.public_eval, ctxbench.eceb, "
            "ctxbench.run, ctxbench.compile, ctxbench.testing\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'click', 'blake3') or m.startswith(('ctxbench.protocols', "
            "'ctxbench.runner.', 'ctxbench.compiler', 'ctxbench.render')))\n"
            "print(heavy)\n"
            # and they work there: an analysis and an evaluation, read back
            "t, p = ctxbench.cef.example_paths()\n"
            "print(ctxbench.cef.analyze([t], p).claim_class.class_)\n"
            "s = ctxbench.eceb.seed_paths()\n"
            "r = ctxbench.eceb.analyze(s.benchmark, s.run, s.corpus)\n"
            "print(type(ctxbench.read_report(r.to_json())).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout == "[]\nconformance_fixture\nReport\n"


def test_run_face_runs_and_resumes_the_example(tmp_path: Path) -> None:
    spec = tmp_path / "seed.toml"
    spec.write_text(ctxbench.run.example_spec().read_text(encoding="utf-8")
                    .replace("replicates = 3", "replicates = 1"), encoding="utf-8")
    first = ctxbench.run.run(ctxbench.run.read_spec(spec))
    assert first.completed == first.planned > 0 and first.skipped == 0
    again = ctxbench.run.resume(spec)
    assert again.completed == 0 and again.skipped == first.planned
    cef = ctxbench.read_report(again.reports["cef-report.json"])
    assert type(cef).__name__ == "CefReport"
    with pytest.raises(InputError, match="example spec: expected one of "):
        ctxbench.run.example_spec("nope")
