"""The sequential type-I table judges two-point rows on their exact value, others by
their simulated rate and its Monte-Carlo standard error (docs/statistics.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.calibration.core import CalibrationRow
from ctxbench.calibration.sequential import SCENARIOS, TWO_POINTS
from ctxbench.calibration.sequential_verdict import (
    CONSISTENT,
    exact_type_i,
    sequential_markdown,
    sequential_verdict,
)

OBF_LATTICE = "two points -1 / +1 (least favourable lattice); obrien_fleming, 10 looks"


def _row(name: str, n: int, events: int, replications: int = 1000) -> CalibrationRow:
    return CalibrationRow(gate="sequential.cef.H1", name=name, n=n, kind="type_i",
                          goal="<= 2.5%", replications=replications, events=events)


def test_a_two_point_row_at_2_6_percent_simulated_is_judged_on_its_exact_value() -> None:
    # The 1,000-replication table read 2.6% here ("OUTSIDE goal" by the simulated rate).
    row = _row(OBF_LATTICE, 1000, 26)
    exact = exact_type_i(row)
    assert exact == pytest.approx(0.02239, abs=5e-5)
    assert sequential_verdict(row, exact) == "within goal (exact)"
    half = _row("two points -1 / +0.5; obrien_fleming, 5 looks", 300, 26)
    assert exact_type_i(half) == pytest.approx(0.01877, abs=5e-5)
    table = sequential_markdown([row, half])
    assert "| 2.6% | 0.5 pp | 2.24% | <= 2.5% | within goal (exact) |" in table
    assert "| 2.6% | 0.5 pp | 1.88% | <= 2.5% | within goal (exact) |" in table


def test_every_two_point_spending_row_has_an_exact_value_and_no_other_row_does() -> None:
    for s in SCENARIOS:
        two = "two points" in s.name and "betting" not in s.name
        assert ((s.gate, s.name, s.n) in TWO_POINTS) == two, s.name
    assert len(TWO_POINTS) == 6


def test_a_simulated_only_row_is_consistent_within_two_se_and_outside_beyond() -> None:
    name = "binary scores, 11% of pairs differ; obrien_fleming, 10 looks"
    assert exact_type_i(_row(name, 1000, 0)) is None
    assert sequential_verdict(_row(name, 1000, 25), None) == "within goal"
    assert sequential_verdict(_row(name, 1000, 36), None) == CONSISTENT  # 3.6% - 1.18 pp
    assert sequential_verdict(_row(name, 1000, 40), None) == "OUTSIDE goal"  # 4.0% - 1.24
    # An exact value above the goal is OUTSIDE whatever the simulation read.
    assert sequential_verdict(_row(OBF_LATTICE, 1000, 0), 0.026) == "OUTSIDE goal (exact)"


def test_the_command_prints_and_writes_the_exact_value(tmp_path: Path) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    out = tmp_path / "c.json"
    assert run_guarded(cli, ["calibrate", "--sequential", "--scenario", "two points -1 / +0.5",
                             "--replications", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    exact = {r["scenario"].split("; ")[1]: r["exact_type_i"] for r in doc["rows"]}
    assert exact["betting, 5 looks"] is None
    assert exact["obrien_fleming, 5 looks"] == pytest.approx(0.01877, abs=5e-5)
    assert all(r["verdict"].startswith("within goal") for r in doc["rows"])
    assert "verdict_rule" in doc
