"""The study planner against independent simulations of the CEF gate itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.compare import COLUMNS, GATED, Margins, _gate
from ctxbench.protocols.cef.planning import (
    StudyDesign,
    binary_gate,
    gate_passes,
    plan_study,
    simulated_power,
)
from ctxbench.stats.planning import exact_binary_power

_H1 = next(g for g in GATED if g[0] == "task_score_delta")


def _real_gate(change: np.ndarray, pairs: np.ndarray, margin: float) -> bool:
    """H1 as ``cef analyze`` decides it: compare._gate on a matrix of cluster sums."""
    sums = np.zeros((change.shape[0], len(COLUMNS)))
    sums[:, 0] = pairs
    sums[:, 1] = change
    stat, num, den, bounds = _H1
    return _gate(sums, stat, num, den, bounds, 0.95, Margins(margin, 0.0)).passed


@pytest.mark.parametrize(("gains", "losses", "n"), [(0, 0, 20), (5, 0, 20), (6, 3, 30),
                                                    (15, 2, 40), (20, 20, 40), (40, 0, 40),
                                                    (9, 4, 60)])
def test_gate_passes_is_the_gate_of_the_report(gains: int, losses: int, n: int) -> None:
    change = np.zeros(n)
    change[:gains] = 1.0
    change[gains:gains + losses] = -1.0
    for margin in (0.05, 0.2):
        assert gate_passes(change, np.ones(n), margin=margin, level=0.95) == \
            _real_gate(change, np.ones(n), margin)


def test_exact_binary_power_agrees_with_simulating_the_gate() -> None:
    # 40 tasks, 40% discordant, true change 0, margin 0.2: the exact power against
    # 4,000 simulated studies decided by compare._gate (one decision per distinct count).
    n, margin, p_gain, p_loss = 40, 0.2, 0.2, 0.2
    passes = binary_gate(margin, 0.95)
    exact = exact_binary_power(n, p_gain, p_loss, passes)
    rng = derive_rng(7, "test", "exact-vs-simulated")
    counts = rng.multinomial(n, [p_gain, p_loss, 1 - p_gain - p_loss], size=4000)
    decided: dict[tuple[int, int], bool] = {}
    hits = 0
    for g, loss, _tie in counts.tolist():
        if (g, loss) not in decided:
            change = np.zeros(n)
            change[:g] = 1.0
            change[g:g + loss] = -1.0
            decided[(g, loss)] = _real_gate(change, np.ones(n), margin)
        hits += decided[(g, loss)]
    rate = hits / counts.shape[0]
    se = math.sqrt(exact * (1 - exact) / counts.shape[0])
    assert 0.2 < exact < 0.95
    assert abs(rate - exact) < 3.5 * se


def test_simulated_power_agrees_with_an_independent_simulation() -> None:
    # Continuous changes, 2 replicates: the planner's simulation against another draw
    # (different stream, its own generator code) decided by compare._gate.
    design = StudyDesign("continuous", margin=0.05, difference=0.0, sd=0.12, replicates=2,
                    replicate_sd=0.05)
    n, reps = 110, 400
    planned = simulated_power(design, n, replications=reps, rng=derive_rng(1, "a"))
    rng = derive_rng(2, "independent")
    hits = 0
    for _ in range(reps):
        task = rng.normal(0.0, 0.12, n)
        change = np.clip(task[:, None] + rng.normal(0.0, 0.05, (n, 2)), -1, 1).sum(axis=1)
        hits += _real_gate(change, np.full(n, 2.0), 0.05)
    other = hits / reps
    se = math.sqrt((planned * (1 - planned) + other * (1 - other)) / reps)
    assert 0.2 < planned < 0.95
    assert abs(planned - other) < 3.5 * se


def test_fragile_binary_replicates_agree_with_an_independent_simulation() -> None:
    # 20% of pairs differ, all of them in 40% of the tasks, 3 replicates per task.
    design = StudyDesign("binary", margin=0.15, difference=0.0, discordance=0.2,
                         replicates=3, fragile_share=0.4)
    n, reps = 40, 400
    planned = simulated_power(design, n, replications=reps, rng=derive_rng(3, "a"))
    rng = derive_rng(4, "independent")
    hits = 0
    for _ in range(reps):
        fragile = rng.random(n) < 0.4
        u = rng.random((n, 3))
        change = np.select([u < 0.25, u < 0.5], [1.0, -1.0], 0.0) * fragile[:, None]
        hits += _real_gate(change.sum(axis=1), np.full(n, 3.0), 0.15)
    other = hits / reps
    se = math.sqrt((planned * (1 - planned) + other * (1 - other)) / reps)
    assert 0.2 < planned < 0.95
    assert abs(planned - other) < 3.5 * se


def test_exact_plan_is_the_first_size_reaching_each_target() -> None:
    design = StudyDesign("binary", margin=0.2, difference=0.0, discordance=0.4)
    plan = plan_study(design, powers=(0.8, 0.9))
    passes = binary_gate(0.2, 0.95)
    assert plan.method == "exact" and plan.replications is None
    for target in plan.targets:
        assert target.tasks is not None and target.power is not None
        assert target.power >= target.target and target.mc_se is None
        assert target.power == exact_binary_power(target.tasks, 0.2, 0.2, passes)
        assert exact_binary_power(target.tasks - 1, 0.2, 0.2, passes) < target.target
    assert plan.targets[0].tasks < plan.targets[1].tasks  # type: ignore[operator]


def test_simulated_plan_states_its_monte_carlo_error_and_is_reproducible() -> None:
    design = StudyDesign("binary", margin=0.2, difference=0.0, discordance=0.4, replicates=2)
    first = plan_study(design, powers=(0.8,), replications=200, seed=5)
    again = plan_study(design, powers=(0.8,), replications=200, seed=5)
    assert first == again and first.method == "simulated"
    t = first.targets[0]
    assert t.tasks is not None and t.power is not None and t.power >= 0.8
    assert t.mc_se == pytest.approx(math.sqrt(t.power * (1 - t.power) / 200))
    assert first.to_json()["schema_version"] == "ctxbench.plan.v1"


def test_a_change_beyond_the_margin_needs_no_number_of_tasks() -> None:
    plan = plan_study(StudyDesign("binary", margin=0.05, difference=-0.06, discordance=0.2))
    assert all(t.tasks is None and t.normal_approximation is None for t in plan.targets)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"scores": "binary", "discordance": None}, "discordance: expected a share"),
    ({"scores": "binary", "discordance": 0.1, "difference": 0.2}, "difference: expected at"),
    ({"scores": "continuous", "sd": None}, "sd: expected a spread in (0, 1)"),
    ({"scores": "continuous", "sd": 0.3, "difference": 0.0}, "scale [-1, 1] can hold"),
    ({"scores": "binary", "discordance": 0.1, "margin": 1.5}, "margin: expected"),
    ({"scores": "binary", "discordance": 0.3, "fragile_share": 0.2},
     "fragile_share: expected a share of tasks in [discordance 0.3, 1]"),
    ({"scores": "continuous", "sd": 0.1, "fragile_share": 0.5},
     "fragile_share: expected none for continuous"),
])
def test_designs_the_planner_cannot_hold_are_refused(kwargs: dict[str, object],
                                                     message: str) -> None:
    args: dict[str, object] = {"margin": 0.05, "difference": 0.0, **kwargs}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        StudyDesign(**args)  # type: ignore[arg-type]
