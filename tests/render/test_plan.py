"""A study plan in words, its preregistration table, and the recorded plan in a report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.protocols.cef.api import analyze_files
from ctxbench.protocols.cef.planning import StudyDesign, plan_study
from ctxbench.render.cef import render_markdown
from ctxbench.render.html import render_html
from ctxbench.render.plan import plan_text, prereg_table

EXAMPLE = Path(__file__).resolve().parents[2] / "src/ctxbench/data/examples/cef"
_PLAN = """
[plan]
scores = "binary"
margin = 0.01
level = 0.95
replicates = 1
difference = 0.0
discordance = 0.1
power = 0.8
tasks = 7850
method = "exact"
"""


def test_plan_text_says_not_reached_and_beyond_the_margin() -> None:
    far = plan_study(StudyDesign("binary", margin=0.01, difference=0.0, discordance=0.1),
                     powers=(0.8,), max_tasks=200)
    assert "80% power: not reached within 200 tasks (normal approximation 7849)" in \
        plan_text(far)
    assert prereg_table(far, 0.8) is None
    beyond = plan_study(StudyDesign("binary", margin=0.01, difference=-0.02, discordance=0.1),
                        powers=(0.9,))
    assert ("90% power: the expected change is not above the margin (normal "
            "approximation none)") in plan_text(beyond)


def test_a_recorded_plan_is_shown_beside_the_tasks_analyzed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLE / "trials.jsonl", tmp_path / "trials.jsonl")
    (tmp_path / "prereg.toml").write_text((EXAMPLE / "prereg.toml").read_text() + _PLAN)
    monkeypatch.chdir(tmp_path)
    report = analyze_files(["trials.jsonl"], prereg_path="prereg.toml")
    line = ("7850 tasks for 80% power (exact; binary scores, discordance 0.1, expected "
            f"change 0.0); {report.aggregate.tasks} tasks analyzed")
    assert f"- Study plan (preregistered): {line}\n" in render_markdown(report)
    (tmp_path / "report.json").write_text(json.dumps(report.to_json()))
    page = render_html([tmp_path / "report.json"], tmp_path / "page.html")
    assert f"study plan (preregistered)</th><td>{line}</td>" in page


def test_rendering_a_cef_report_does_not_import_the_planner() -> None:
    code = ("import sys, ctxbench.render.cef, ctxbench.render.html.report; print(sorted(m "
            "for m in ('numpy', 'ctxbench.protocols.cef.planning') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
