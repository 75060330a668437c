"""ECEB Markdown: golden output, and nothing but what the report says."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ctxbench.core.node import Node
from ctxbench.protocols.eceb.model import Report
from ctxbench.render.eceb import render_markdown

GOLDEN = Path(__file__).parents[1] / "golden" / "eceb-seed"
REPORT = json.loads((GOLDEN / "report.json").read_text(encoding="utf-8"))
MODEL = Report.from_json(Node("report.json", "", REPORT))


def test_golden_markdown() -> None:
    assert render_markdown(MODEL) == (GOLDEN / "report.md").read_text(encoding="utf-8")


def test_markdown_states_claim_trust_boundary_and_denominator() -> None:
    text = render_markdown(MODEL)
    assert "Claim class: **conformance_seed**" in text
    assert "does not re-derive the judge scores" in text
    assert "| compiled | 12 / 13 |" in text
    assert "denominator keeps every task" in text
    assert "### senior-engineer-salary-band (abstention task)" in text
    assert "compiled @ 2048, repetition 1: policy/denied_artifact" in text


def test_rendering_uses_only_report_values() -> None:
    report = copy.deepcopy(REPORT)
    report["tasks"][0]["token_savings_bps"] = 1234
    report["aggregate"]["compiled"]["mean_token_savings_bps"] = 4321
    text = render_markdown(Report.from_json(Node("report.json", "", report)))
    assert "1234 bps (12.34%)" in text and "4321 bps (43.21%)" in text


def test_every_failure_is_listed() -> None:
    text = render_markdown(MODEL)
    total = sum(len(t["failures"]) + (len(t["naive_top_k"]["failures"])
                                      if t["naive_top_k"] else 0) for t in REPORT["tasks"])
    assert text.count("\n- compiled @") + text.count("\n- naive_top_k @") + \
        text.count("\n- full_permitted_context @") == total
