"""Sequential designs: type-I error under the stopping rule, and tasks saved.

The normal suite runs every sequential scenario at 100 replications (fixed seed) and
fails when a false-pass rate exceeds 2.5% by more than two Monte-Carlo standard errors;
the 1,000-replication table is ``ctxbench calibrate --sequential --replications 1000``
(docs/statistics.md), and the slow test below reruns the least favourable rows at 1,000.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ctxbench.calibration.core import run_scenario
from ctxbench.calibration.runner import calibrate
from ctxbench.calibration.sequential import SCENARIOS, efficiency

ALPHA = 0.025


def _limit(replications: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / replications)


def test_every_gate_and_method_has_a_row_of_at_least_five_looks() -> None:
    gates = {s.gate for s in SCENARIOS}
    assert {"sequential.cef.H1", "sequential.cef.H2", "sequential.cef.H3",
            "sequential.cef.H4"} <= gates
    for method in ("obrien_fleming", "pocock", "betting"):
        assert any(method in s.name for s in SCENARIOS)
    assert all("5 looks" in s.name or "10 looks" in s.name for s in SCENARIOS)


def test_the_gate_filter_reads_without_its_prefix() -> None:
    rows = calibrate(replications=2, seed=1, gates=("cef.H4",), sequential=True)
    assert rows and all(r.gate == "sequential.cef.H4" for r in rows)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.n <= 300],
                         ids=lambda s: f"{s.gate}:{s.name}:{s.n}")
def test_type_i_error_under_the_stopping_rule(scenario: object) -> None:
    row = run_scenario(scenario, 100, seed=11)  # type: ignore[arg-type]
    assert row.rate <= _limit(100), (row.gate, row.name, row.events)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if "two points -1 / +1" in s.name],
                         ids=lambda s: f"{s.name}:{s.n}")
def test_least_favourable_lattice_at_1000_replications(scenario: object) -> None:
    row = run_scenario(scenario, 1000, seed=20261201)  # type: ignore[arg-type]
    assert row.rate <= _limit(1000), (row.name, row.events)


def test_a_clearly_worse_candidate_stops_early_and_a_clear_one_claims_early() -> None:
    rows = efficiency(fixed_tasks=159, sd=0.15, margin=0.05,
                      truths={"worse": -0.15, "better": 0.05}, methods=("obrien_fleming",),
                      replications=40, seed=5)
    worse, better = rows
    assert worse.sequential_claims == 0 and worse.saved >= 0.3
    assert better.sequential_claims >= better.fixed_claims - 1 and better.saved > 0.2


def test_one_look_is_the_fixed_design_exactly() -> None:
    from ctxbench.calibration.sequential_exact import exact_two_point
    from ctxbench.calibration.worst_case import type_i_fast

    # One look at the maximum spends all of alpha: the fixed design's exact type-I.
    fixed, _ = type_i_fast([-1.0, 1.0], [0.505, 0.495], 200)
    assert exact_two_point(-1.0, 1.0, [200], 200, method="obrien_fleming") == (
        pytest.approx(fixed, abs=1e-9))


def test_exact_worst_case_under_the_stopping_rule_at_small_n() -> None:
    from ctxbench.calibration.sequential_exact import worst_two_point

    for method in ("obrien_fleming", "pocock"):
        found = worst_two_point(100, 5, method, lattice=10)
        assert found.distributions == 110 and found.type_i <= ALPHA


def test_the_calibrate_command_writes_the_sequential_tables(tmp_path: Path) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    out = tmp_path / "c.json"
    assert run_guarded(cli, ["calibrate", "--sequential", "--gate", "cef.H4",
                             "--replications", "3", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert {r["gate"] for r in doc["rows"]} == {"sequential.cef.H4"}
    assert {e["method"] for e in doc["efficiency"]} == {"obrien_fleming", "pocock"}
