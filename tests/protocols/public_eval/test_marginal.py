"""MARGINAL's rows and comparator cases: read unchanged, same figures, stricter gates.

Cases from MARGINAL's own comparator tests (tests/evaluation/test_public_eval_governance.py,
tests/evaluation/test_cli_public_eval_governance.py) reach MARGINAL's status wherever
ctxbench's stricter rules do not apply; each one task there is replicated to 40 varied
instances here, because ctxbench needs at least 10 and an interval (docs/public-eval.md
lists the differences).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.public_eval import (
    Settings,
    analyze,
    compare_files,
    pair_rows,
    rows_from_lines,
)
from ctxbench.render.public_eval import render_markdown
from ctxbench.schemas import validator

SMOKE = Path(__file__).resolve().parent / "data" / "marginal-smoke"


def _report(base: list[dict[str, Any]], treat: list[dict[str, Any]],
            **settings: Any) -> dict[str, Any]:
    tables = [rows_from_lines([JsonLine(name, i + 1, r) for i, r in enumerate(rows)], path=name)
              for name, rows in (("b.jsonl", base), ("t.jsonl", treat))]
    report = analyze(pair_rows(*tables), Settings(**settings)).to_json()
    assert list(validator("ctxbench.public-eval-report.v1").iter_errors(report)) == []
    return report


def _arms(n: int, base: dict[str, Any], treat: dict[str, Any],
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """n instances (a multiple of 5); treatment tokens vary by -2..+2% (mean 0) so the
    per-instance ratios differ and the savings interval has spread."""
    b_rows, t_rows = [], []
    for i in range(n):
        wobble = 1.0 + 0.02 * ((i % 5) - 2) / 2
        b = {**base, "instance_id": f"task-{i:02d}"}
        t = {**treat, "instance_id": f"task-{i:02d}"}
        t["tokens"] = round(treat["tokens"] * wobble)
        b_rows.append(b)
        t_rows.append(t)
    return b_rows, t_rows


def test_published_smoke_rows_read_unchanged_and_match_marginal_figures() -> None:
    report = compare_files(SMOKE / "baseline_verified.ndjson",
                           SMOKE / "marginal_verified.ndjson").to_json()
    for side in ("baseline", "treatment"):
        assert report["inputs"][side]["read_and_ignored"] == ["applied_denies"]
        assert report["inputs"][side]["rows"] == 3
    savings = report["savings"]
    # MARGINAL's public-benchmark.json: tokens 24.93, tool calls 3.03, latency 5.8 / 4.61.
    assert round(savings["tokens"]["percent_saved"], 2) == 24.93
    assert savings["tokens"]["basis"] == "net"
    assert round(savings["gross_tokens"]["percent_saved"], 2) == 24.93
    assert round(savings["tool_calls"]["percent_saved"], 2) == 3.03
    assert round(savings["gross_latency_ms"]["percent_saved"], 2) == 5.80
    assert round(savings["latency_ms"]["percent_saved"], 2) == 4.61
    assert savings["latency_ms"]["treatment_total"] == 565768
    assert savings["tokens"]["percentile_ci_not_gating"] == [21.5172, 28.0706]
    assert (report["baseline"]["tokens"], report["treatment"]["tokens"]) == (1098747, 824839)
    # MARGINAL says pass_through (nothing resolved); ctxbench: not_evaluable (3 < 10).
    assert report["status"] == "not_evaluable"
    assert report["reasons"][0] == "only 3 distinct instance(s); at least 10 are needed"


def test_governance_tax_gives_no_savings_never_supported() -> None:
    # Issue case: 40 tasks, the agent saves 15% of tokens, the governor spends 20%.
    base, treat = _arms(40, {"resolved": True, "tokens": 1000},
                        {"resolved": True, "tokens": 850, "governance_tokens": 200})
    report = _report(base, treat, quality_margin_pp=20.0)
    assert report["status"] == "no_savings"
    assert report["savings"]["gross_tokens"]["percent_saved"] == 15.0
    assert report["savings"]["tokens"]["percent_saved"] == -5.0
    assert report["savings"]["tokens"]["ci"][0] < 0.0
    assert report["reasons"][0].startswith("no net token savings (agent + governance_tokens) "
                                           "shown")


def test_marginal_gross_and_net_case_is_supported_on_net() -> None:
    # MARGINAL: 1000 -> 700 + 200 governance: gross 30%, net 10%, supported.
    base, treat = _arms(40, {"resolved": True, "tokens": 1000, "usd": 1.0},
                        {"resolved": True, "tokens": 700, "usd": 0.7,
                         "governance_tokens": 200, "governance_usd": 0.2,
                         "repeated_calls": 1})
    report = _report(base, treat, quality_margin_pp=20.0)
    assert report["savings"]["gross_tokens"]["percent_saved"] == 30.0
    assert report["savings"]["tokens"]["percent_saved"] == 10.0
    assert report["savings"]["usd"]["percent_saved"] == 10.0
    assert report["status"] == "supported"


def test_usd_measured_false_makes_governance_usd_unknown_not_zero() -> None:
    # MARGINAL: a row with usd_measured false has no known dollars; its governance_usd
    # (0.0 here) is not a measured zero.
    base, treat = _arms(40, {"resolved": True, "tokens": 1000, "usd": 0.0,
                             "usd_measured": False},
                        {"resolved": True, "tokens": 700, "usd": 0.0, "usd_measured": False,
                         "governance_tokens": 100, "governance_usd": 0.0})
    tables = [rows_from_lines([JsonLine(name, i + 1, r) for i, r in enumerate(rows)],
                              path=name) for name, rows in (("b.jsonl", base), ("t.jsonl", treat))]
    analyzed = analyze(pair_rows(*tables), Settings(quality_margin_pp=10.0))
    report = analyzed.to_json()
    assert report["treatment"]["governance"]["governance_usd"] is None
    assert report["treatment"]["usd"] is None and report["savings"]["usd"] is None
    assert report["savings"]["tokens"]["percent_saved"] == 20.0
    markdown = render_markdown(analyzed)
    assert "| Governance USD | — | not measured | — |" in markdown
    assert "| Governance USD | — | 0 |" not in markdown


def test_marginal_minimum_net_savings_case_passes_through() -> None:
    # MARGINAL CLI test: 1000 -> 850 + 100: net 5% under a 10% minimum -> pass_through.
    base, treat = _arms(40, {"resolved": True, "tokens": 1000},
                        {"resolved": True, "tokens": 850, "governance_tokens": 100})
    report = _report(base, treat, quality_margin_pp=20.0, min_savings_percent=10.0)
    assert report["savings"]["tokens"]["percent_saved"] == 5.0
    assert report["status"] == "no_savings"


def test_all_reviewed_stops_false_is_false_stop_risk() -> None:
    # Issue case: 40 of 40 reviewed stops judged false (MARGINAL: 1 of 1).
    base, treat = _arms(40, {"resolved": True, "tokens": 1000},
                        {"resolved": True, "tokens": 500, "reviewed_stops": 1,
                         "false_stops": 1})
    report = _report(base, treat, quality_margin_pp=20.0)
    stops = report["false_stops"]
    assert (stops["reviewed_stops"], stops["false_stops"], stops["rate"]) == (40, 40, 1.0)
    assert stops["ci"][0] > 0.9 and stops["exceeds_max"] is True
    assert report["status"] == "false_stop_risk"
    allowed = _report(base, treat, quality_margin_pp=20.0, max_false_stop_rate=1.0)
    assert allowed["status"] == "supported"


def test_zero_verified_successes_cannot_be_supported() -> None:
    # MARGINAL: pass_through; ctxbench: not_evaluable (an arm resolved nothing).
    base, treat = _arms(40, {"resolved": False, "tokens": 1000},
                        {"resolved": False, "tokens": 500})
    report = _report(base, treat)
    assert report["status"] == "not_evaluable"
    assert "baseline resolved no task" in report["reasons"]


def test_thirty_identical_pairs_are_not_supported() -> None:
    # The bootstrap collapses to [0, 0]; the score gate on the bounded scale is
    # +-17.53 pp (Tango's interval would be +-11.35 pp) and fails at 1 pp.
    base, treat = _arms(30, {"resolved": True, "tokens": 1000},
                        {"resolved": True, "tokens": 500})
    report = _report(base, treat)
    assert report["quality"]["not_gating"]["bootstrap_ci_pp"] == [0.0, 0.0]
    assert report["quality"]["gate_ci_pp"] == [-17.5316, 17.5316]
    assert report["status"] == "not_non_inferior"


def test_totals_near_two_to_the_53_are_exact_and_never_wrap() -> None:
    big = 2**53 - 1
    n = 1100
    base = [{"instance_id": f"i{i:04d}", "resolved": True, "tokens": big} for i in range(n)]
    treat = [{"instance_id": f"i{i:04d}", "resolved": True, "tokens": big - 2**40 * (i % 3)}
             for i in range(n)]
    report = _report(base, treat, quality_margin_pp=1.0)
    assert report["baseline"]["tokens"] == n * big
    assert report["treatment"]["tokens"] == n * big - 2**40 * sum(i % 3 for i in range(n))
    assert report["savings"]["tokens"]["baseline_total"] == n * big
    assert report["savings"]["tokens"]["percent_saved"] > 0


def test_overhead_in_some_rows_only_makes_net_savings_unknown_not_agent_only() -> None:
    base, treat = _arms(40, {"resolved": True, "tokens": 1000},
                        {"resolved": True, "tokens": 500, "governance_tokens": 50})
    del treat[7]["governance_tokens"]
    report = _report(base, treat, quality_margin_pp=20.0)
    assert report["savings"]["tokens"] is None
    assert report["savings"]["gross_tokens"]["percent_saved"] == 50.0
    assert report["status"] == "no_savings"
    assert report["reasons"][0] == ("token savings are unknown: an overhead or token total is "
                                    "not recorded in every row")
