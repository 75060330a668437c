"""The sequential design beside the fixed one: its maximum and expected tasks at equal power.

For each target power the fixed design needs ``n`` tasks (:func:`plan_study`). A
sequential design of ``looks`` equally spaced looks (``method``, futility on or off) starts
at the maximum ``ceil(R n)``, where ``R`` is the design's inflation in the normal
approximation (:func:`ctxbench.stats.sequential.inflation`), and grows it by 5% at a time
until its own power, simulated by the gate itself at every look
(:func:`ctxbench.stats.sequential_gates.gate_looks`, studies drawn as the planner draws
them), reaches the target. The plan then gives that maximum, the simulated power, the
expected tasks at the planned change and at the margin (where the candidate is just not
non-inferior), and the normal approximation's expected tasks beside them: on a bounded
scale the gate's continuity correction weighs most at the early looks, so the simulated
saving is smaller than the normal approximation's (docs/planning.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.planning import StudyDesign, StudyPlan, draw_study
from ctxbench.stats.sequential import drift_for_power, efficacy_boundaries, inflation, operating
from ctxbench.stats.sequential_gates import gate_looks

__all__ = ["SequentialPlan", "plan_sequential"]

_GROWTH = 1.05
_TRIES = 12


@dataclass(frozen=True, slots=True)
class SequentialPlan:
    """One target power: the fixed tasks and the sequential design's figures beside them."""

    target: float
    fixed_tasks: int
    method: str
    looks: int
    futility: bool
    max_tasks: int
    power: float
    expected_tasks: float
    """Simulated, at the planned change."""
    expected_at_margin: float
    """Simulated, with the true change exactly at ``-margin``."""
    normal_expected_tasks: float
    """The normal approximation's expected tasks at the planned change."""
    replications: int

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "fixed_tasks": self.fixed_tasks, "method": self.method,
                "looks": self.looks, "futility": self.futility, "max_tasks": self.max_tasks,
                "power": self.power, "expected_tasks": self.expected_tasks,
                "expected_at_margin": self.expected_at_margin,
                "normal_expected_tasks": self.normal_expected_tasks,
                "replications": self.replications}


def _simulate(design: StudyDesign, max_tasks: int, marks: list[int], method: str,
              futility: bool, replications: int, rng: np.random.Generator,
              alpha: float) -> tuple[float, float]:
    """(power, mean tasks at the stop) of the sequential gate over simulated studies."""
    den = np.full(max_tasks, float(design.replicates))
    claims = 0
    used = 0
    for _ in range(replications):
        num = draw_study(design, max_tasks, rng)
        looks = gate_looks(num, den, -design.margin,
                           marks, max_tasks=max_tasks, direction="greater",
                           bounds=(-1.0, 1.0), method=method, alpha=alpha, futility=futility)
        stop = next((g for g in looks if g.claimed or g.loss_shown or g.futile), looks[-1])
        claims += stop.claimed
        used += stop.tasks
    return claims / replications, used / replications


def _marks(max_tasks: int, looks: int) -> list[int]:
    return [max(1, round(max_tasks * (k + 1) / looks)) for k in range(looks)]


def plan_sequential(plan: StudyPlan, *, looks: int, method: str, futility: bool,
                    replications: int, seed: int) -> list[SequentialPlan]:
    """The sequential design beside each target the fixed plan reached."""
    if looks < 2:
        raise ValueError(f"looks: expected at least 2, got {looks!r}")
    if method not in ("obrien_fleming", "pocock", "betting"):
        raise ValueError(f"method: expected obrien_fleming, pocock or betting, got {method!r}")
    design = plan.design
    alpha = (1.0 - design.level) / 2.0
    b = efficacy_boundaries([(k + 1) / looks for k in range(looks)], alpha=alpha,
                            method="pocock" if method == "pocock" else "obrien_fleming")
    at_margin = replace(design, difference=-design.margin)
    out = []
    for target in plan.targets:
        if target.tasks is None:
            continue
        size = math.ceil(target.tasks * inflation(b, target.target))
        for _ in range(_TRIES):
            marks = _marks(size, looks)
            rng = derive_rng(seed, "plan-sequential", method, str(size))
            power, expected = _simulate(design, size, marks, method, futility,
                                        replications, rng, alpha)
            if power >= target.target:
                break
            size = math.ceil(size * _GROWTH)
        rng = derive_rng(seed, "plan-sequential-margin", method, str(size))
        _, at_null = _simulate(at_margin, size, marks, method, futility, replications, rng,
                               alpha)
        normal = operating(b, drift_for_power(b, target.target)).expected_fraction * size
        out.append(SequentialPlan(target.target, target.tasks, method, looks, futility, size,
                                  power, expected, at_null, normal, replications))
    return out
