"""The CEF Markdown renderer prints only what the report (read from its JSON) holds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ctxbench.core.node import Node
from ctxbench.protocols.cef.model import CefReport
from ctxbench.render.cef import render_markdown as render_model

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def render_markdown(document: dict[str, Any]) -> str:
    return render_model(CefReport.from_json(Node("report.json", "", document)))


def _report(case: str) -> dict[str, Any]:
    value = json.loads((GOLDEN / case / "report.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def test_failures_caveats_and_h3_are_shown_beside_passes() -> None:
    md = render_markdown(_report("cef-two-stratum"))
    assert "H3 unsupported-claim-rate delta" in md
    assert "**entroly: NO CLAIM**" in md and "**quality_preserving_context_win**" in md
    assert "## Caveats" in md and "hardware, energy, operations and depreciation" in md
    assert "one-sided test at 2.5%" in md
    assert "task ops-logs-000029 in ops-logs" in md


def test_numbers_come_from_the_json() -> None:
    report = _report("cef-passing")
    changed = copy.deepcopy(report)
    comp = changed["strata"][0]["comparisons"][0]
    comp["context_reduction"]["low"] = 0.123456
    comp["headline"] = "A headline written only in the JSON."
    changed["headlines"] = [comp["headline"]]
    md = render_markdown(changed)
    assert "[12.3%," in md and "- A headline written only in the JSON." in md
    assert render_markdown(report) != md


def test_reproduce_command_has_every_flag_used() -> None:
    md = render_markdown(_report("cef-failure-heavy"))
    assert ("ctxbench cef analyze trials.jsonl --bootstrap-samples 1000 --seed 3 "
            "--quality-tolerance 0.01 --confidence-level 0.95 --unit task "
            "--output report.json") in md
    assert "ctxbench cef render report.json --output report.md" in md


def test_no_headline_is_explained() -> None:
    md = render_markdown(_report("cef-no-claim"))
    assert "No headline: no claimed condition holds a quality-preserving context win." in md
    assert "too few paired units: 8 < the preregistered minimum 10" in md


def test_cost_references_say_when_the_list_is_cut() -> None:
    report = _report("cef-passing")
    cc = report["claim_class"]
    listed = len(cc["cost_source_references"])
    assert f"(the first {listed} of" not in render_markdown(report)
    cc["cost_source_references_total"] = listed + 7
    assert f"(the first {listed} of {listed + 7})" in render_markdown(report)


def test_the_frontier_shows_failures_and_conditions_that_are_not_evaluable() -> None:
    md = render_markdown(_report("cef-failure-heavy"))
    assert "| yes (17 of 60 trials failed) |" in md
    assert "Pareto frontier (descriptive): raw, entroly (17 of 60 trials failed)" in md
    changed = _report("cef-failure-heavy")
    for block in (changed["aggregate"], *changed["strata"]):
        for p in block["operating_points"]:
            if p["condition"] == "entroly":
                p["failures"], p["on_pareto_frontier"] = p["trials"], False
        block["pareto_frontier"] = ["raw"]
    md = render_markdown(changed)
    assert "| not evaluable (60 of 60 trials failed) |" in md
    assert ("Pareto frontier (descriptive): raw; not evaluable (every trial failed): "
            "entroly") in md


def test_markdown_lists_budgets_in_numeric_order_and_cuts_corpus_roots() -> None:
    root = "8b9fecf380d5" + "0" * 52
    text = json.dumps(_report("cef-no-claim")).replace(
        '"native_compaction"', '"compiled@1024"').replace('"entroly"', '"compiled@128"')
    report = json.loads(text)
    label = report["strata"][0]["label"]
    report["strata"][0]["label"] = f"{label}@corpus-root:{root}"
    md = render_markdown(report)
    points = md[md.index("### Operating points"):]
    assert points.index("| compiled@128 |") < points.index("| compiled@1024 |")
    claims = md[md.index("## Claims"):]
    assert claims.index("| compiled@128 |") < claims.index("| compiled@1024 |")
    heading = next(line for line in md.splitlines() if line.startswith("## Stratum:"))
    assert "corpus-root:8b9fecf380d5\u2026" in heading and root not in heading
    assert f"Full stratum: `{label}@corpus-root:{root}`" in md
