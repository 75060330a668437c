"""Markdown of public-eval reports, checked against golden files and the protocol's sentence.

Golden files: ``tests/golden/public-eval-*/report.{json,md}``. Regenerate them with
``CTXBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_public_eval.py`` (never
updated otherwise).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.atomic import report_json_bytes
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval import PublicEvalReport, Settings, compare_files
from ctxbench.render import public_eval as md
from ctxbench.schemas import validator

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = {
    "public-eval-basic": Settings(treatment_name="marginal", quality_margin_pp=10.0),
    "public-eval-repeated": Settings(treatment_name="governor", quality_margin_pp=2.0),
    "public-eval-within-margin": Settings(treatment_name="compressor"),
}


def render_markdown(doc: dict[str, Any]) -> str:
    """The Markdown of a report document, read through the model as a report file is."""
    return md.render_markdown(PublicEvalReport.from_json(Node("report.json", "", doc)))


def claim_sentence(doc: dict[str, Any]) -> str:
    return md.claim_sentence(PublicEvalReport.from_json(Node("report.json", "", doc)))


def _check_golden(path: Path, data: bytes) -> None:
    if os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1":
        path.write_bytes(data)
    assert path.exists(), f"missing golden file {path}; run with CTXBENCH_UPDATE_GOLDEN=1"
    assert data == path.read_bytes(), f"{path} differs (CTXBENCH_UPDATE_GOLDEN=1 to accept)"


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_reports(case: str) -> None:
    folder = GOLDEN / case
    model = compare_files(folder / "baseline.jsonl", folder / "treatment.jsonl", CASES[case])
    report = model.to_json()
    assert list(validator("ctxbench.public-eval-report.v1").iter_errors(report)) == []
    _check_golden(folder / "report.json", report_json_bytes(report))
    _check_golden(folder / "report.md", md.render_markdown(model).encode("utf-8"))
    # the Markdown of the fresh model and of its JSON read back are the same bytes
    assert md.render_markdown(model) == render_markdown(report)


def test_golden_statuses() -> None:
    import json

    statuses = {case: json.loads((GOLDEN / case / "report.json").read_text())["status"]
                for case in CASES}
    assert statuses == {"public-eval-basic": "supported",
                        "public-eval-repeated": "not_non_inferior",
                        "public-eval-within-margin": "not_non_inferior"}


def _example() -> dict[str, Any]:
    report = compare_files(GOLDEN / "public-eval-basic" / "baseline.jsonl",
                           GOLDEN / "public-eval-basic" / "treatment.jsonl",
                           Settings(quality_margin_pp=10.0)).to_json()
    report["savings"]["tokens"].update(percent_saved=38.4, ci=[31.0, 45.2])
    report["quality"].update(resolved_delta_pp=-0.4, gate_ci_pp=[-2.1, 1.3], margin_pp=1.0,
                             non_inferior=True)
    return report


def test_protocol_sentence_form() -> None:
    assert claim_sentence(_example()) == (
        "38.4% fewer tokens (95% CI 31.0\u201345.2) with a -0.4 pp resolve-rate delta "
        "(95% CI -2.1 to 1.3) under a preregistered 1.0 pp margin: non-inferior.")


def test_sentence_for_more_tokens_and_failed_gate() -> None:
    report = _example()
    report["savings"]["tokens"].update(percent_saved=-12.5, ci=[-20.0, -4.1])
    report["quality"].update(non_inferior=False)
    assert claim_sentence(report) == (
        "12.5% more tokens (95% CI of the saving -20.0 to -4.1) with a -0.4 pp resolve-rate "
        "delta (95% CI -2.1 to 1.3) under a preregistered 1.0 pp margin: not shown "
        "non-inferior.")


def test_markdown_uses_only_report_numbers() -> None:
    report = _example()
    text = render_markdown(report)
    assert "| Metric | Baseline (baseline) | Treatment (treatment) | Change |" in text
    assert "| Tokens | 2,026,717 | 1,221,133 | 38.4% fewer (95% CI 31.0\u201345.2) |" in text
    assert "**Status: supported**" in text
    changed = copy.deepcopy(report)
    changed["baseline"]["tokens"] = 5
    assert "| Tokens | 5 | 1,221,133 |" in render_markdown(changed)


def test_markdown_shows_unknown_usd_and_warnings() -> None:
    report = _example()
    report["baseline"]["usd"] = None
    report["savings"]["usd"] = None
    report["warnings"] = ["usd is not measured (baseline: 1 of 40 rows)"]
    text = render_markdown(report)
    assert "| USD | not measured | $14.6536 | \u2014 |" in text
    assert "## Warnings\n\n- usd is not measured (baseline: 1 of 40 rows)" in text


def test_net_and_gross_rows_are_labeled() -> None:
    folder = GOLDEN / "public-eval-repeated"
    report = compare_files(folder / "baseline.jsonl", folder / "treatment.jsonl",
                           CASES["public-eval-repeated"]).to_json()
    text = render_markdown(report)
    net, gross = report["savings"]["tokens"], report["savings"]["gross_tokens"]
    assert net["basis"] == "net" and gross["basis"] == "agent"
    assert net["treatment_total"] == report["treatment"]["tokens"] + 4529
    assert "| Tokens, agent only (gross) | 251,153 | 191,683 |" in text
    assert "| **Tokens, net: agent + governance (headline)** | 251,153 | 196,212 |" in text
    assert "fewer tokens net of governance overhead" in claim_sentence(report)


def test_regressions_and_recoveries_are_listed_by_instance() -> None:
    folder = GOLDEN / "public-eval-repeated"
    report = compare_files(folder / "baseline.jsonl", folder / "treatment.jsonl",
                           CASES["public-eval-repeated"]).to_json()
    text = render_markdown(report)
    assert ("- Regressions (baseline resolved, treatment not), all 11 cells listed: "
            "`task-00` (runs 0, 1, 2), `task-01` (run 2), ") in text
    single = _example()
    assert ("- Recoveries (treatment resolved, baseline not), all 2 instances listed: "
            "`django__django-11006`, `django__django-11025`") in render_markdown(single)
    assert "- Regressions (baseline resolved, treatment not): none" in render_markdown(single)


def test_a_bounded_listing_says_how_many_are_left_and_ids_stay_code() -> None:
    report = _example()
    listed = [{"instance_id": f"a`b{i}", "run": 0} for i in range(1000)]
    report["quality"]["regressed_cells"] = {"total": 1234, "limit": 1000, "listed": listed}
    text = render_markdown(report)
    assert ("- Regressions (baseline resolved, treatment not), the first 1,000 of 1,234 "
            "instances in (instance_id, run) order: `` a`b0 ``, `` a`b1 ``,") in text
    assert text.count("`` a`b") == 1000


def test_savings_table_shows_the_gate_bound_beside_the_reported_interval() -> None:
    report = _example()
    report["savings"]["tokens"]["gate_lower_bound"] = 29.87
    text = render_markdown(report)
    assert "| tokens | agent only | 38.40% | 31.00\u201345.20 | 29.87% | 32.36\u201345.81 |" in text
    assert "the lower end of the symmetric 97.5% studentized bootstrap interval" in text
