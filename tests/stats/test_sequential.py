"""Group-sequential boundaries, betting tests and the sequential gate decisions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ctxbench.stats.betting import crossed, log_wealth
from ctxbench.stats.sequential import (
    conditional_power,
    efficacy_boundaries,
    futility_bounds,
    inflation,
    operating,
    spent,
)
from ctxbench.stats.sequential_gates import carry, claim_decision, gate_looks

FIVE = [0.2, 0.4, 0.6, 0.8, 1.0]


def test_obrien_fleming_boundaries_match_the_published_values() -> None:
    # gsDesign::gsDesign(k = 5, test.type = 1, alpha = 0.025, sfu = sfLDOF)$upper$bound
    # (Anderson 2022): 4.8769 3.3569 2.6803 2.2898 2.0310.
    b = efficacy_boundaries(FIVE, method="obrien_fleming")
    assert b.z == pytest.approx((4.8769, 3.3569, 2.6803, 2.2898, 2.0310), abs=2e-3)
    assert b.spent[-1] == pytest.approx(0.025)


def test_pocock_boundaries_match_the_published_values() -> None:
    # gsDesign(k = 5, test.type = 1, alpha = 0.025, sfu = sfLDPocock):
    # 2.4380 2.4268 2.4101 2.3966 2.3859.
    b = efficacy_boundaries(FIVE, method="pocock")
    assert b.z == pytest.approx((2.4380, 2.4268, 2.4101, 2.3966, 2.3859), abs=2e-3)


def test_boundaries_spend_alpha_under_brownian_motion() -> None:
    # Independent check: simulated score processes cross with the spent probability.
    b = efficacy_boundaries([0.1, 0.3, 0.5, 0.7, 1.0], method="pocock")
    rng = np.random.default_rng(20261202)
    t = np.array(b.fractions)
    steps = rng.normal(0.0, 1.0, (200_000, 5)) * np.sqrt(np.diff(np.concatenate([[0], t])))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    rate = float(np.mean(np.any(z >= np.array(b.z), axis=1)))
    se = math.sqrt(0.025 * 0.975 / 200_000)
    assert abs(rate - 0.025) < 4 * se
    assert operating(b, 0.0).power == pytest.approx(0.025, abs=1e-6)


def test_spending_functions_and_their_domain() -> None:
    assert spent(0.025, 1.0, "obrien_fleming") == pytest.approx(0.025)
    assert spent(0.025, 0.5, "pocock") == pytest.approx(0.025 * math.log(1 + (math.e - 1) / 2))
    assert spent(0.025, 0.2, "obrien_fleming") < 1e-5
    with pytest.raises(ValueError, match="t: expected"):
        spent(0.025, 0.0, "pocock")
    with pytest.raises(ValueError, match="fractions: expected increasing"):
        efficacy_boundaries([0.5, 0.4, 1.0])


def test_inflation_and_expected_information() -> None:
    # Jennison & Turnbull (2000), tables 2.3 / 2.4 and 7.6: five looks cost 2-3% more
    # information at most (O'Brien-Fleming type) or about 20% (Pocock type).
    ob = efficacy_boundaries(FIVE, method="obrien_fleming")
    po = efficacy_boundaries(FIVE, method="pocock")
    assert 1.015 < inflation(ob, 0.9) < 1.035
    assert 1.17 < inflation(po, 0.9) < 1.21


def test_conditional_power_and_futility_bound_agree() -> None:
    b = efficacy_boundaries(FIVE)
    bounds = futility_bounds(b, 0.1)
    assert conditional_power(bounds[1], 0.4, b.z[-1]) == pytest.approx(0.1, abs=1e-9)
    assert bounds[-1] == -math.inf


def test_betting_test_holds_its_level_at_every_observation() -> None:
    # Two points at -1 and +1 with mean -0.01 (the least favourable lattice of the
    # fixed design): the wealth reaches 40 in at most 2.5% of the sequences, however
    # long they are watched.
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        x = np.where(rng.random(400) < 0.495, 1.0, -1.0)
        hits += bool(crossed(log_wealth(x, -0.01, -1.0, 1.0), 0.025)[-1])
    assert hits / 2000 <= 0.025


def test_betting_claims_a_clear_gain_early() -> None:
    x = np.full(200, 0.2)
    wealth = log_wealth(x, -0.01, -1.0, 1.0)
    assert crossed(wealth, 0.025)[60]
    with pytest.raises(ValueError, match="x: expected values"):
        log_wealth(np.array([2.0]), 0.0, -1.0, 1.0)


@pytest.mark.parametrize("method", ["obrien_fleming", "pocock", "betting"])
def test_gate_looks_stop_early_when_clear(method: str) -> None:
    rng = np.random.default_rng(3)
    n = 500
    better = np.clip(rng.normal(0.1, 0.15, n), -1, 1)
    worse = np.clip(rng.normal(-0.15, 0.15, n), -1, 1)
    looks = [100, 200, 300, 400, 500]
    common = dict(max_tasks=n, direction="greater", bounds=(-1.0, 1.0), method=method,
                  alpha=0.025, futility=False)
    up = gate_looks(better, np.ones(n), -0.01, looks, **common)  # type: ignore[arg-type]
    down = gate_looks(worse, np.ones(n), -0.01, looks, **common)  # type: ignore[arg-type]
    assert any(g.claimed for g in up[:-1]) and not any(g.loss_shown for g in up)
    assert any(g.loss_shown for g in down[:-1]) and not any(g.claimed for g in down)


def test_gate_identical_clusters_never_claim() -> None:
    n = 100
    looks = gate_looks(np.full(n, 0.5), np.ones(n), -0.01, [50, 100], max_tasks=n,
                       direction="greater", bounds=(-1.0, 1.0), method="pocock",
                       alpha=0.025, futility=False)
    assert not any(g.claimed for g in looks)


def test_claim_rule() -> None:
    assert claim_decision(["claimed"] * 4, last=False) == "claimed"
    assert claim_decision(["claimed", "loss_shown", "continue", "claimed"],
                          last=False) == "loss_shown"
    assert claim_decision(["claimed", "futile", "continue", "claimed"], last=False) == "futile"
    assert claim_decision(["claimed", "continue", "claimed", "claimed"],
                          last=False) == "continue"
    assert claim_decision(["claimed", "not_shown", "claimed", "claimed"],
                          last=True) == "not_shown"
    assert carry("claimed", gate_looks(np.full(20, -1.0), np.ones(20), -0.01, [20],
                                       max_tasks=20, direction="greater",
                                       bounds=(-1.0, 1.0), method="pocock", alpha=0.025,
                                       futility=False)[0], last=True) == "claimed"
