"""Reduced calibration run in CI: every gate's type-I error at the margin, n = 100.

Each scenario simulates studies whose truth sits exactly at the gate's margin and runs
them through the analysis ``ctxbench cef analyze`` uses (and public-eval's, when its
scenarios are installed). The test fails when a measured false-pass rate exceeds the
one-sided 2.5% by more than two Monte-Carlo standard errors of a 2.5% rate at this
number of replications (the full table, at 1,000 replications, is in
docs/statistics.md). The replications are reduced to keep the suite near a minute.
"""

from __future__ import annotations

import math

import pytest

from ctxbench.calibration.core import run_scenario
from ctxbench.calibration.runner import all_scenarios, select

REPLICATIONS = 40
ALPHA = 0.025
SCENARIOS = select(all_scenarios(), sizes=(100,), kinds=("type_i",))


def test_the_ci_run_covers_every_cef_gate() -> None:
    gates = {s.gate for s in SCENARIOS}
    assert {"cef.H1", "cef.H2", "cef.H3", "cef.H4"} <= gates


@pytest.mark.timeout(240)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.gate}:{s.name}")
def test_type_i_error_at_the_margin(scenario: object) -> None:
    row = run_scenario(scenario, REPLICATIONS, seed=9)  # type: ignore[arg-type]
    limit = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / REPLICATIONS)
    assert row.rate <= limit, (row.gate, row.name, row.events, row.replications)
