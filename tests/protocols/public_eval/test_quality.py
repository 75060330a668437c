"""The quality gate says what its interval showed when non-inferiority is not shown."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from ctxbench.core.jsonl import JsonLine
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval.analysis import analyze
from ctxbench.protocols.public_eval.model import PublicEvalReport
from ctxbench.protocols.public_eval.pairing import pair_rows
from ctxbench.protocols.public_eval.rows import rows_from_lines
from ctxbench.protocols.public_eval.settings import Settings


def _report(n: int, regressions: int, recoveries: int, margin: float) -> PublicEvalReport:
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    for i in range(n):
        rb = i < regressions or i >= regressions + recoveries
        rt = regressions <= i
        base.append({"instance_id": f"i{i:03d}", "resolved": rb, "tokens": 1000})
        treat.append({"instance_id": f"i{i:03d}", "resolved": rt, "tokens": 600})
    tables = [rows_from_lines([JsonLine(name, k + 1, row) for k, row in enumerate(rows)],
                              path=name) for name, rows in (("b", base), ("t", treat))]
    return analyze(pair_rows(tables[0], tables[1]), Settings(quality_margin_pp=margin))


def test_a_loss_beyond_the_margin_is_loss_shown() -> None:
    q = _report(100, 30, 0, 1.0).quality
    assert q.shows_loss and q.outcome is not None and q.outcome.kind == "loss_shown"
    assert q.outcome.supported_margin_pp == -q.gate_ci_pp[0]
    assert q.outcome.instances_needed is None


def test_a_straddling_interval_is_inconclusive_with_the_instances_needed() -> None:
    report = _report(200, 5, 5, 1.0)
    q = report.quality
    assert not q.non_inferior and not q.shows_loss
    assert q.outcome is not None and q.outcome.kind == "inconclusive"
    # The gate's own interval (the bounded-scale score interval, docs/statistics.md).
    low = q.gate_ci_pp[0]
    assert q.outcome.supported_margin_pp == -low
    z = NormalDist().inv_cdf(0.975)
    sd = (0.0 - low) * math.sqrt(200) / z
    assert q.outcome.instances_needed == math.ceil(((z + NormalDist().inv_cdf(0.8)) * sd
                                                     / 1.0) ** 2)
    assert q.outcome.instances_needed > 200
    assert any(f"about {q.outcome.instances_needed} instances for -1 pp at 80% power" in r
               for r in report.reasons)


def test_an_estimate_beyond_the_margin_needs_no_number_of_instances() -> None:
    q = _report(60, 3, 1, 1.0).quality
    assert q.outcome is not None and q.outcome.kind == "inconclusive"
    assert q.outcome.instances_needed is None


def test_a_non_inferior_gate_has_no_outcome_and_old_reports_read() -> None:
    report = _report(200, 0, 0, 5.0)
    assert report.quality.non_inferior and report.quality.outcome is None
    doc = _report(200, 5, 5, 1.0).to_json()
    del doc["quality"]["outcome"]
    assert PublicEvalReport.from_json(Node("r.json", "", doc)).quality.outcome is None
