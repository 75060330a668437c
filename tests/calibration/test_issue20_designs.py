"""(slow) Issue 20's designs: a few broken tasks among small gains must not pass.

A fixed-seed subset of ``ctxbench calibrate --scenario "0.0 on" --scenario fragile
--scenario "40%"`` (the 1,000-replication table is in benchmarks/RESULTS.md): each row
fails when its false-pass rate exceeds 2.5% by more than two Monte-Carlo standard errors.
On the gates before issue 20 the n = 50 CEF rows gave 21-35% and public-eval at n = 50
3.5% (200 replications).
"""

from __future__ import annotations

import math

import pytest

from ctxbench.calibration.core import Scenario, run_scenario
from ctxbench.calibration.runner import all_scenarios, select

REPLICATIONS = 100
ALPHA = 0.025
SCENARIOS = select(all_scenarios(), names=("0.0 on", "fragile", "40%"), kinds=("type_i",))


def test_every_issue_20_design_is_in_the_calibration() -> None:
    assert {(s.gate, s.n) for s in SCENARIOS} >= {
        ("cef.H1", 50), ("cef.H1", 100), ("cef.H2", 50), ("public_eval.quality", 20),
        ("public_eval.quality", 50)}
    assert len(SCENARIOS) == 9


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.gate}:{s.n}:{s.name}")
def test_issue_20_design_type_i(scenario: Scenario) -> None:
    row = run_scenario(scenario, REPLICATIONS, seed=20)
    limit = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / REPLICATIONS)
    assert row.rate <= limit, (row.gate, row.name, row.n, row.events, row.replications)
