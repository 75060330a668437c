"""Sequential designs: type-I error under the stopping rule, and tasks saved at equal power.

**Type-I rows** (:data:`SCENARIOS`): each replication draws one study of ``max_tasks``
tasks whose truth sits exactly at a gate's margin, takes every look of the design
(``every`` tasks, at least 5 looks) with :func:`ctxbench.stats.sequential_gates.gate_looks`
(H4 with its bootstrap-t confirmation, :func:`ctxbench.protocols.cef.sequential.confirm_h4`)
and counts a false pass when the gate is claimed at *any* look. The gate is judged
alone and without futility: the other gates and a futility stop can only end a study
earlier, so this is the largest false-pass rate the stopping rule allows the gate. The
designs are the fixed calibration's (binary pairs, rare +-0.1 jumps, lognormal tokens),
issue 20's rare-large-loss designs (a few broken tasks among small gains, fragile
replicates) and the least favourable two-point lattices of the fixed design's exact
worst-case search (:mod:`ctxbench.calibration.worst_case`).

**Efficiency** (:func:`efficiency`): in one simulation, the fixed design at the tasks the
planner finds for a target power and the sequential design whose maximum is that
number times the design's inflation (:func:`ctxbench.stats.sequential.inflation`, the
same power in the normal approximation), each study drawn once and read by both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from ctxbench.calibration.core import Scenario
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign
from ctxbench.protocols.cef.sequential import confirm_h4
from ctxbench.stats.score import score_test
from ctxbench.stats.sequential import efficacy_boundaries, inflation
from ctxbench.stats.sequential_gates import gate_looks

__all__ = ["EFFICIENCY_TRUTHS", "SCENARIOS", "TWO_POINTS", "EfficiencyRow", "design", "efficiency",
           "efficiency_markdown", "efficiency_table"]

FloatArray = NDArray[np.float64]
TOLERANCE = 0.01
ALPHA = 0.025
METHODS = ("obrien_fleming", "pocock", "betting")
Draw = Callable[[np.random.Generator, int], tuple[FloatArray, FloatArray]]


def design(max_tasks: int, looks: int, method: str, futility: bool = False) -> SequentialDesign:
    """``looks`` equally spaced looks up to ``max_tasks``."""
    every = max_tasks // looks
    marks = [every * (k + 1) for k in range(looks - 1)] + [max_tasks]
    return SequentialDesign(looks=tuple(marks), max_tasks=max_tasks,
                            method=method, futility=futility)  # type: ignore[arg-type]


# --- studies at the margin: (num, den) per task in run order ------------------------------

def _jumps(down: float, up: float, step: float) -> Draw:
    def draw(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
        u = rng.random(n)
        return np.where(u < down, -step, np.where(u < down + up, step, 0.0)), np.ones(n)
    return draw


def _broken_few(gain: float, share: float) -> Draw:
    broken = (gain * share + TOLERANCE) / 0.9

    def draw(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
        u = rng.random(n)
        return np.where(u < broken, -0.9, np.where(u < broken + share, gain, 0.0)), np.ones(n)
    return draw


def _fragile(fragile: float) -> Draw:
    gain = (0.5 * fragile - TOLERANCE) / (1.0 - fragile)

    def draw(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
        is_fragile = rng.random(n) < fragile
        lost = rng.binomial(3, 0.5, n)
        gained = rng.binomial(3, gain, n)
        return np.where(is_fragile, -lost, gained).astype(np.float64), np.full(n, 3.0)
    return draw


def _two_points(low: float, high: float) -> Draw:
    p_low = (high + TOLERANCE) / (high - low)

    def draw(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
        return np.where(rng.random(n) < p_low, low, high), np.ones(n)
    return draw


def _lognormal_tokens(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
    base = np.maximum(1, np.round(rng.lognormal(8.0, 1.0, n)))
    cand = np.maximum(1, np.round(base * rng.lognormal(-0.5 * 0.3**2, 0.3, n)))
    return cand.astype(np.float64), base.astype(np.float64)


def _false_pass(draw: Draw, gate: str, d: SequentialDesign,
                rng: np.random.Generator) -> bool:
    num, den = draw(rng, d.max_tasks)
    if gate == "cef.H4":
        looks = gate_looks(num, den, 1.0, d.looks, max_tasks=d.max_tasks, direction="less",
                           bounds=None, method=d.method, alpha=ALPHA, futility=False)
        looks, _ = confirm_h4(looks, num, den, min_savings=0.0, rng=rng, n_resamples=1000)
    elif gate == "cef.H3":  # the unsupported-claim delta must be shown below +tolerance
        looks = gate_looks(-num, den, TOLERANCE, d.looks, max_tasks=d.max_tasks,
                           direction="less", bounds=(-1.0, 1.0), method=d.method,
                           alpha=ALPHA, futility=False)
    else:
        looks = gate_looks(num, den, -TOLERANCE, d.looks, max_tasks=d.max_tasks,
                           direction="greater", bounds=(-1.0, 1.0), method=d.method,
                           alpha=ALPHA, futility=False)
    return any(g.claimed for g in looks)


Support = tuple[float, float] | None
"""The two points of a two-point design (its exact type-I is computable), else None."""


def _designs() -> list[tuple[str, str, Draw, tuple[int, ...], Support]]:
    jumps = "rare +-0.1 jumps (11% toward the harm, 1% away)"
    return [
        ("cef.H1", "binary scores, 11% of pairs differ", _jumps(0.06, 0.05, 1.0), (300, 1000),
         None),
        ("cef.H1", "binary scores, 2% of pairs differ", _jumps(0.015, 0.005, 1.0),
         (300, 1000), None),
        ("cef.H2", jumps, _jumps(0.11, 0.01, 0.1), (300,), None),
        # H3's draw is the unsupported-claim delta's mirror: a rise is the harm.
        ("cef.H3", jumps, _jumps(0.11, 0.01, 0.1), (300,), None),
        ("cef.H1", "base 0.9; +0.05 on a third of tasks, 0.0 on 3%",
         _broken_few(0.05, 1.0 / 3.0), (100, 300), None),
        ("cef.H2", "base 0.9; +0.02 on half of tasks, 0.0 on 2.2%", _broken_few(0.02, 0.5),
         (100, 300), None),
        ("cef.H1", "3 binary replicates per task, 4% of tasks fragile", _fragile(0.04),
         (300,), None),
        ("cef.H1", "two points -1 / +1 (least favourable lattice)", _two_points(-1.0, 1.0),
         (300, 1000), (-1.0, 1.0)),
        ("cef.H1", "two points -1 / +0.5", _two_points(-1.0, 0.5), (300,),
         (-1.0, 0.5)),
        ("cef.H4", "zero true reduction, lognormal(1) tokens", _lognormal_tokens, (300,),
         None),
    ]


def _call(draw: Draw, gate: str, d: SequentialDesign, rng: np.random.Generator) -> bool:
    return _false_pass(draw, gate, d, rng)


def _scenarios() -> tuple[tuple[Scenario, ...],
                          dict[tuple[str, str, int], tuple[float, float, SequentialDesign]]]:
    out = []
    two_points = {}
    for gate, name, draw, sizes, support in _designs():
        for n in sizes:
            looks = 10 if n >= 1000 else 5
            for method in METHODS:
                d = design(n, looks, method)
                s = Scenario(gate=f"sequential.{gate}", name=f"{name}; {method}, {looks} looks",
                             n=n, kind="type_i", simulate=partial(_call, draw, gate, d),
                             goal="<= 2.5%")
                out.append(s)
                if support is not None and method != "betting":
                    two_points[(s.gate, s.name, s.n)] = (support[0], support[1], d)
    return tuple(out), two_points


SCENARIOS, TWO_POINTS = _scenarios()
"""The type-I rows, and (gate, name, n) -> (low, high, design) of the two-point rows whose
exact false-pass probability :func:`ctxbench.calibration.sequential_exact.exact_two_point`
computes (the betting rows are not: their decision depends on the order of the tasks)."""


# --- tasks saved at the same power ---------------------------------------------------------

@dataclass(frozen=True, slots=True)
class EfficiencyRow:
    """One truth read by the fixed and the sequential design in the same simulation."""

    truth: str
    method: str
    futility: bool
    fixed_tasks: int
    max_tasks: int
    replications: int
    fixed_claims: int
    sequential_claims: int
    sequential_losses: int
    mean_tasks: float

    @property
    def saved(self) -> float:
        return 1.0 - self.mean_tasks / self.fixed_tasks


def efficiency(*, fixed_tasks: int, sd: float, margin: float, truths: dict[str, float],
               methods: tuple[str, ...] = ("obrien_fleming", "pocock"), looks: int = 5,
               power: float = 0.9, futility: bool = True, replications: int = 1000,
               seed: int = 20261201) -> list[EfficiencyRow]:
    """H1 on continuous task deltas ``N(truth, sd)`` (clipped to [-1, 1]), fixed vs
    sequential; ``fixed_tasks`` is the fixed design's size for ``power`` at the truth the
    study was planned for. Each study is drawn once and read by both designs."""
    rows = []
    for method in methods:
        b = efficacy_boundaries([(k + 1) / looks for k in range(looks)], alpha=ALPHA,
                                method="pocock" if method == "pocock" else "obrien_fleming")
        max_tasks = math.ceil(fixed_tasks * inflation(b, power))
        d = design(max_tasks, looks, method, futility)
        for label, truth in truths.items():
            rng = derive_rng(seed, "sequential-efficiency", method, label)
            fixed = seq = losses = 0
            used = 0
            for _ in range(replications):
                x = np.clip(rng.normal(truth, sd, max(max_tasks, fixed_tasks)), -1.0, 1.0)
                ones = np.ones(x.shape[0])
                fixed += score_test(x[:fixed_tasks], ones[:fixed_tasks], -margin,
                                    bounds=(-1.0, 1.0)).shows_greater
                gl = gate_looks(x, ones, -margin, d.looks, max_tasks=max_tasks,
                                direction="greater", bounds=(-1.0, 1.0), method=method,
                                alpha=ALPHA, futility=futility)
                stop = next((g for g in gl if g.claimed or g.loss_shown or g.futile), gl[-1])
                seq += stop.claimed
                losses += stop.loss_shown
                used += stop.tasks
            rows.append(EfficiencyRow(label, method, futility, fixed_tasks, max_tasks,
                                      replications, fixed, seq, losses, used / replications))
    return rows


def efficiency_markdown(rows: list[EfficiencyRow]) -> str:
    lines = ["| truth | method | fixed tasks | fixed power | max tasks | sequential power | "
             "loss shown | expected tasks | fewer than fixed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.truth} | {r.method}{', futility' if r.futility else ''} | "
                     f"{r.fixed_tasks} | {100 * r.fixed_claims / r.replications:.1f}% | "
                     f"{r.max_tasks} | {100 * r.sequential_claims / r.replications:.1f}% | "
                     f"{100 * r.sequential_losses / r.replications:.1f}% | "
                     f"{r.mean_tasks:.1f} | {100 * r.saved:.1f}% |")
    return "\n".join(lines) + "\n"


EFFICIENCY_TRUTHS = {
    "no change (the planned truth)": 0.0,
    "clearly non-inferior (+0.05)": 0.05,
    "clearly worse (-0.15)": -0.15,
}
"""H1 on continuous deltas, sd 0.15, margin 0.05: the truths of the efficiency table."""


def efficiency_table(*, replications: int, seed: int) -> list[EfficiencyRow]:
    """The efficiency rows ``ctxbench calibrate --sequential`` prints: the fixed design
    at the planner's 90%-power size, beside O'Brien-Fleming and Pocock designs of 5 looks
    with futility."""
    from ctxbench.protocols.cef.planning import StudyDesign, plan_study

    plan = plan_study(StudyDesign("continuous", margin=0.05, difference=0.0, sd=0.15),
                      powers=(0.9,), replications=2000, seed=seed)
    tasks = plan.targets[0].tasks
    if tasks is None:  # the planner found no size below its maximum (not for this design)
        raise ValueError("the efficiency design needs more tasks than the planner searches")
    return efficiency(fixed_tasks=tasks, sd=0.15, margin=0.05,
                      truths=EFFICIENCY_TRUTHS, replications=replications, seed=seed)
