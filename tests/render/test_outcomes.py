"""The one line per NO CLAIM condition that says what each failed hypothesis showed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxbench.core.node import Node
from ctxbench.protocols.cef.model import CefReport
from ctxbench.render.cef import render_markdown
from ctxbench.render.html import render_html
from ctxbench.render.outcomes import outcome_line

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _doc(case: str) -> dict[str, Any]:
    value = json.loads((GOLDEN / case / "report.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _report(doc: dict[str, Any]) -> CefReport:
    return CefReport.from_json(Node("report.json", "", doc))


def test_loss_shown_and_inconclusive_lines() -> None:
    heavy = _report(_doc("cef-failure-heavy")).aggregate.comparisons[0]
    assert outcome_line(heavy) == (
        "H1 (task quality) loss shown: [-0.3666, -0.0163] lies wholly below -0.0100; "
        "H2 (evidence recall) loss shown: [-0.3666, -0.0163] lies wholly below -0.0100; "
        "H3 (grounding) loss shown: [+0.0587, +0.4189] lies wholly above +0.0100")
    report = _report(_doc("cef-two-stratum"))
    first = report.strata[1].comparisons[0]
    assert outcome_line(first) == (
        "H1 (task quality) inconclusive: [-0.2263, +0.1355] straddles -0.0100; this study "
        "supports a margin of -0.2263; the estimate is itself beyond -0.0100, so more tasks "
        "are not expected to show it; H2 (evidence recall) inconclusive: [-0.1828, +0.1790] "
        "straddles -0.0100; this study supports a margin of -0.1828; about 29268 tasks for "
        "-0.0100 at 80% power if the truth were the estimate; H3 (grounding) inconclusive: "
        "[-0.1799, +0.1819] straddles +0.0100; this study supports a margin of +0.1819; "
        "about 22727 tasks for +0.0100 at 80% power if the truth were the estimate")
    md = render_markdown(report)
    assert f"- **{first.condition}: NO CLAIM**: H1 (task quality) inconclusive" in md


def test_not_evaluable_and_an_estimate_beyond_the_margin() -> None:
    doc = _doc("cef-no-claim")
    comparison = doc["aggregate"]["comparisons"][0]
    h2 = comparison["hypotheses"][1]
    h2["outcome"] = {"kind": "not_evaluable", "supported_margin": None,
                     "tasks_needed": None, "power": 0.8}
    line = outcome_line(_report(doc).aggregate.comparisons[0])
    assert line is not None
    assert "; H2 (evidence recall) not evaluable; " in line
    assert ("H1 (task quality) inconclusive: [-0.7829, +0.7530] straddles -0.0100; this "
            "study supports a margin of -0.7829; the estimate is itself beyond -0.0100, so "
            "more tasks are not expected to show it") in line
    assert line.endswith("H4 (context reduction) inconclusive: [26.0%, 36.1%] clears 0.0%, "
                         "but the score test at 0.0% does not (T = -2.147, critical 2.365)")


def test_a_passing_condition_and_an_old_report_have_no_line() -> None:
    report = _report(_doc("cef-passing"))
    assert all(outcome_line(c) is None for c in report.aggregate.comparisons)
    doc = _doc("cef-failure-heavy")
    for stratum in doc["strata"]:
        for c in stratum["comparisons"]:
            for h in c["hypotheses"]:
                h.pop("outcome", None)
    assert "- **entroly: NO CLAIM**\n" in render_markdown(_report(doc))


def test_the_html_page_says_it_in_the_claims_list(tmp_path: Path) -> None:
    page = render_html([GOLDEN / "cef-failure-heavy" / "report.json"], tmp_path / "p.html")
    assert ("<strong>entroly: NO CLAIM</strong>: H1 (task quality) loss shown: "
            "[-0.3666, -0.0163] lies wholly below -0.0100;") in page
