"""Reduced calibration of the public-eval gates: type I at the margin, n = 100 (CI check).

The full table (1,000 replications per row) is in docs/statistics-public-eval.md; this
runs the n = 100 type-I scenarios at fewer replications and fails if a gate's false-pass
rate exceeds 2.5% by more than 2 Monte-Carlo standard errors (of the nominal 2.5%).
The token-savings gate's type-I scenario is not in this check: it measures 3.3% at
n = 100 (1,000 replications), above its 2.5% goal, and is reported as open in
docs/statistics-public-eval.md; a loose check would pass it by Monte-Carlo slack alone.
"""

from __future__ import annotations

import math

import pytest

from ctxbench.calibration.core import run_scenario
from ctxbench.calibration.public_eval import SCENARIOS

REPLICATIONS = 250
ALPHA = 0.025


@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.kind == "type_i" and s.n == 100
                 and s.gate == "public_eval.quality"],
    ids=lambda s: f"{s.gate}:{s.name}")
def test_type_i_at_the_margin_holds_at_n_100(scenario: object) -> None:
    from ctxbench.calibration.core import Scenario

    assert isinstance(scenario, Scenario)
    row = run_scenario(scenario, REPLICATIONS, seed=9)
    bound = ALPHA + 2.0 * math.sqrt(ALPHA * (1.0 - ALPHA) / REPLICATIONS)
    assert row.replications == REPLICATIONS
    assert row.rate <= bound, f"{scenario.name}: {row.rate:.3%} false passes > {bound:.3%}"


def test_scenarios_cover_both_tables_of_the_issue() -> None:
    quality = {(s.name.split(",")[0], s.n) for s in SCENARIOS
               if s.gate == "public_eval.quality" and s.kind == "type_i"
               and "runs" not in s.name}
    assert quality == {(f"{d}% of instances differ", n) for d in (3, 11) for n in (50, 100, 300)}
    power = {s.n for s in SCENARIOS if s.kind == "power"}
    assert power == {100, 300}
    coverage = {s.n for s in SCENARIOS if s.kind == "coverage"}
    assert coverage == {50, 200}
