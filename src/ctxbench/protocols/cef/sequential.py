"""A CEF study under a preregistered sequential design: every look, and where it stopped.

``analyze_sequential(table, prereg)`` reads the trials in run order (a task's place is
where its first trial appears; every condition and replicate of a task counts as one
task) and, at each look of ``prereg.sequential``, decides H1-H4 of every claimed
condition over the first ``n_k`` tasks (one cluster per task, over every stratum, as in
the aggregate) with :mod:`ctxbench.stats.sequential_gates`. A condition stops at its
first decision other than ``continue``; the study stops when every condition has. Each
condition is paired with the baseline over the tasks both hold: one that stopped (the
runner runs none of its later tasks) holds exactly the tasks up to its deciding look, so
its looks replay to the same decision (anything else is refused). The result records
every look taken (tasks, boundary, each gate's statistic, threshold, interval and
decision) and the trials and cost saved, per condition and in all, against running
``max_tasks``.
Pure: the same trials and preregistration give the same result.

H4 is decided as in the fixed design, at the look's nominal level: its score test and
the symmetric bootstrap-t bound of the log ratio, taken at two-sided ``1 - 2 nominal``,
must both clear the margin (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.compare import pair_columns
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign
from ctxbench.protocols.cef.table import TrialTable
from ctxbench.stats.ratio_savings import log_ratio_parts, resampled_totals, studentized_savings
from ctxbench.stats.sequential import efficacy_boundaries
from ctxbench.stats.sequential_gates import (
    Decision,
    GateLook,
    carry,
    claim_decision,
    gate_looks,
)

__all__ = ["GATES", "ConditionLooks", "SequentialResult", "analyze_sequential",
           "condition_looks", "confirm_h4", "decided_at", "run_order"]

FloatArray = NDArray[np.float64]
ALPHA_OF_LEVEL = 0.5
"""One-sided alpha = (1 - level) * this."""
# (hypothesis, numerator column, denominator column, direction, bounds)
GATES: tuple[tuple[str, int, int, str, tuple[float, float] | None], ...] = (
    ("H1", 1, 0, "greater", (-1.0, 1.0)),
    ("H2", 2, 0, "greater", (-1.0, 1.0)),
    ("H3", 3, 0, "less", (-1.0, 1.0)),
    ("H4", 5, 4, "less", None),
)


@dataclass(frozen=True, slots=True)
class ConditionLooks:
    """One condition's looks up to its stop: per look, each gate and the claim."""

    condition: str
    looks: tuple[dict[str, tuple[GateLook, Decision]], ...]
    decisions: tuple[Decision, ...]
    """The claim's decision at each look taken."""
    confirm: tuple[float | None, ...]
    """H4's bootstrap-t lower bound of the context reduction at each look."""

    @property
    def decision(self) -> Decision:
        return self.decisions[-1] if self.decisions else "continue"


def _margin(hid: str, tolerance: float, min_savings: float) -> float:
    if hid == "H4":
        return 1.0 - min_savings
    return tolerance if hid == "H3" else -tolerance


def condition_looks(sums: FloatArray, design: SequentialDesign, *, level: float,
                    tolerance: float, min_savings: float, rng: np.random.Generator,
                    n_resamples: int = 1000, interval: bool = False,
                    condition: str = "") -> ConditionLooks:
    """Looks of one condition over ``sums`` (``compare.COLUMNS`` rows, one per task in
    run order), stopping at its first decision; looks past the rows are not taken."""
    alpha = (1.0 - level) * ALPHA_OF_LEVEL
    per_gate = {}
    for hid, num, den, direction, bounds in GATES:
        per_gate[hid] = gate_looks(sums[:, num], sums[:, den],
                                   _margin(hid, tolerance, min_savings), design.looks,
                                   max_tasks=design.max_tasks, direction=direction,  # type: ignore[arg-type]
                                   bounds=bounds, method=design.method, alpha=alpha,
                                   futility=design.futility, interval=interval)
    per_gate["H4"], lows = confirm_h4(per_gate["H4"], sums[:, 5], sums[:, 4],
                                      min_savings=min_savings, rng=rng,
                                      n_resamples=n_resamples)
    looks: list[dict[str, tuple[GateLook, Decision]]] = []
    decisions: list[Decision] = []
    confirms: list[float | None] = []
    previous: dict[str, Decision | None] = {hid: None for hid, *_ in GATES}
    for k in range(len(per_gate["H1"])):
        last = design.looks[k] == design.max_tasks
        row: dict[str, tuple[GateLook, Decision]] = {}
        for hid, *_ in GATES:
            g = per_gate[hid][k]
            if hid == "H4" and g.low is not None and g.high is not None:
                # Reported as the context reduction, 1 - ratio (the bounds swap).
                g = replace(g, low=1.0 - g.high, high=1.0 - g.low)
            decision = carry(previous[hid], g, last=last)
            previous[hid] = decision
            row[hid] = (g, decision)
        confirms.append(lows[k])
        looks.append(row)
        decisions.append(claim_decision([row[h][1] for h, *_ in GATES], last=last))
        if decisions[-1] != "continue":
            break
    return ConditionLooks(condition, tuple(looks), tuple(decisions), tuple(confirms))


def confirm_h4(looks: list[GateLook], candidate: FloatArray, baseline: FloatArray, *,
               min_savings: float, rng: np.random.Generator, n_resamples: int,
               ) -> tuple[list[GateLook], list[float | None]]:
    """H4's looks with the bootstrap-t confirmation applied where the score test claims.

    At each such look the symmetric bootstrap-t lower bound of the context reduction over
    the tasks seen, at two-sided ``1 - 2 nominal``, must clear ``min_savings`` too.
    """
    parts = log_ratio_parts(candidate, baseline)
    out: list[GateLook] = []
    lows: list[float | None] = []
    for look in looks:
        g = look
        low: float | None = None
        if g.claimed:
            n = g.tasks
            resampled = resampled_totals(parts[:n], rng=rng, n_resamples=n_resamples)
            savings = studentized_savings(parts[:n].sum(axis=0), resampled,
                                          level=1.0 - 2.0 * g.nominal)
            low = None if savings.gate_low is None else savings.gate_low / 100.0
            if low is None or not low > min_savings:
                g = replace(g, claimed=False)
        out.append(g)
        lows.append(low)
    return out, lows


def run_order(table: TrialTable, keep: NDArray[np.bool_],
              ranks: Mapping[str, int] | None = None) -> tuple[NDArray[np.int64], int]:
    """A run-order task index per trial (-1 for trials not kept) and the task count.

    A task is (workload, workload_version, task_id) across strata; its place is the
    first kept trial of it in the table's row order (file order, then line order), or,
    with ``ranks`` (task_id -> its place in a preregistered order), that place.
    """
    keys: dict[tuple[str, str, str], int] = {}
    joint = np.empty(len(table.task_ids), dtype=np.int64)
    for code, task_id in enumerate(table.task_ids):
        stratum = table.strata[int(table.task_stratum[code])]
        joint[code] = keys.setdefault((stratum[2], stratum[3], task_id), len(keys))
    per_trial = joint[table.task]
    rows = np.flatnonzero(keep)
    first = np.full(len(keys), np.iinfo(np.int64).max, dtype=np.int64)
    if ranks is not None:
        missing = [key[2] for key in keys if key[2] not in ranks]
        if missing:
            raise InputError(f"trials: task_id: expected a task of the run order, got "
                             f"{missing[0]!r}")
        place = np.array([ranks[key[2]] for key in keys], dtype=np.int64)
        np.minimum.at(first, per_trial[rows], place[per_trial[rows]])
    else:
        np.minimum.at(first, per_trial[rows], rows)
    seen = np.flatnonzero(first < np.iinfo(np.int64).max)
    rank = np.full(len(keys), -1, dtype=np.int64)
    rank[seen[np.argsort(first[seen], kind="stable")]] = np.arange(seen.shape[0])
    out = np.where(keep, rank[per_trial], -1)
    return out.astype(np.int64), int(seen.shape[0])


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """Every condition's looks, the boundaries of the looks taken, and what was saved."""

    design: SequentialDesign
    boundaries: tuple[float, ...]
    nominal: tuple[float, ...]
    tasks_available: int
    conditions: tuple[ConditionLooks, ...]
    per_task: Mapping[str, tuple[float, float]]
    """Every condition of the matrix (the baseline first) -> (trials, cost in USD) per
    task it ran."""

    @property
    def stopped_at(self) -> int | None:
        """Tasks at which every condition was decided (None: not decided yet)."""
        if any(c.decision == "continue" for c in self.conditions):
            return None
        return max(c.looks[-1]["H1"][0].tasks for c in self.conditions)

    def stops(self) -> dict[str, int | None]:
        """Tasks at which each condition of the matrix stopped (None: it goes on). A
        claimed condition stops at its decision; the baseline and the conditions not
        claimed stop with the study."""
        decided = {c.condition: decided_at(c) for c in self.conditions}
        return {name: decided.get(name, self.stopped_at) for name in self.per_task}

    def saved(self, condition: str) -> tuple[int, float]:
        """Trials and cost not run for ``condition`` against running ``max_tasks``."""
        stop = self.stops()[condition]
        if stop is None:
            return 0, 0.0
        trials, cost = self.per_task[condition]
        left = self.design.max_tasks - stop
        return round(left * trials), left * cost

    def as_json(self) -> dict[str, Any]:
        stop = self.stopped_at
        used = stop if stop is not None else min(self.tasks_available, self.design.max_tasks)
        saved = {name: self.saved(name) for name in self.per_task}
        return {
            "schema_version": "ctxbench.cef-sequential.v1",
            "design": self.design.as_dict(),
            "looks_planned": list(self.design.looks),
            "boundaries": [{"tasks": n, "z": _num(z), "nominal_alpha": a}
                           for n, z, a in zip(self.design.looks, self.boundaries,
                                              self.nominal, strict=True)],
            "tasks_available": self.tasks_available,
            "stopped_at_tasks": stop,
            "tasks_saved": self.design.max_tasks - used,
            "trials_saved": sum(t for t, _ in saved.values()),
            "trials_at_max": sum(round(self.design.max_tasks * t)
                                 for t, _ in self.per_task.values()),
            "cost_saved_usd": sum(c for _, c in saved.values()),
            "conditions": {c.condition: _condition_json(c, self.design, saved[c.condition])
                           for c in self.conditions},
        }


def decided_at(c: ConditionLooks) -> int | None:
    """The tasks at the look where ``c`` was decided (None: it continues)."""
    return None if c.decision == "continue" else c.looks[-1]["H1"][0].tasks


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _gate_json(g: GateLook, d: Decision) -> dict[str, Any]:
    out: dict[str, Any] = {"statistic": _num(g.statistic), "critical": _num(g.critical),
                           "nominal_alpha": g.nominal, "low": g.low, "high": g.high,
                           "decision": d}
    if g.log_wealth_claim is not None:
        out.update(log_wealth_claim=g.log_wealth_claim, log_wealth_loss=g.log_wealth_loss)
    return out


def _condition_json(c: ConditionLooks, design: SequentialDesign,
                    saved: tuple[int, float]) -> dict[str, Any]:
    at = decided_at(c)
    return {
        "decision": c.decision,
        "decided_at_tasks": at,
        "decided_at_look": None if at is None else design.looks.index(at) + 1,
        "trials_saved": saved[0],
        "cost_saved_usd": saved[1],
        "looks": [{"look": k + 1, "tasks": row["H1"][0].tasks, "decision": c.decisions[k],
                   "h4_bootstrap_t_low": c.confirm[k],
                   "gates": {h: _gate_json(*row[h]) for h in row}}
                  for k, row in enumerate(c.looks)],
    }


def _check_stopped(c: ConditionLooks, held: NDArray[np.int64], tasks: int) -> None:
    """A condition with fewer tasks than the baseline must hold exactly the tasks up to
    the look where it was decided (it stopped there)."""
    at = decided_at(c)
    if at is None or held.shape[0] != at or int(held[-1]) != at - 1:
        raise InputError(
            f"trials: condition {c.condition}: expected every task of the run order up to "
            "the look where it was decided (under a sequential design a condition stops "
            f"only there), got {held.shape[0]} of the {tasks} tasks"
            + ("" if at is None else f" (decided at {at})"))


def analyze_sequential(table: TrialTable, prereg: Preregistration, *,
                       design: SequentialDesign | None = None,
                       claims: Sequence[str] | None = None,
                       ranks: Mapping[str, int] | None = None) -> SequentialResult:
    """Every look of ``design`` (default: the preregistered one) over the trials, in
    file order or in the order ``ranks`` gives (task_id -> place)."""
    from ctxbench.protocols.cef.analysis import effective_scores
    from ctxbench.protocols.cef.pairing import pair_trials

    design = design or prereg.sequential
    if design is None:
        raise InputError("preregistration: sequential: expected a sequential design "
                         "(a [sequential] table, or --sequential FILE), got none")
    pairing = pair_trials(table, prereg)
    scores, _ = effective_scores(table, prereg, pairing.keep)
    order, tasks = run_order(table, pairing.keep, ranks)
    unit_order = order[pairing.rows[:, 0]]
    chosen = list(claims if claims is not None else
                  (prereg.claims if prereg.claims is not None else pairing.conditions[1:]))
    threshold = max(prereg.min_savings_for(s[2]) for s in pairing.strata)
    results = []
    per_task = {}
    for k, condition in enumerate(pairing.conditions):
        rows = pairing.rows[:, k][pairing.rows[:, k] >= 0]
        ran = max(int(np.unique(order[rows]).shape[0]), 1)
        per_task[condition] = (rows.shape[0] / ran, float(table.billed_cost_usd[rows].sum()) / ran)
        if k == 0 or condition not in chosen:
            continue
        # Paired over the tasks both hold: a condition stopped at its decision has only
        # the tasks up to that look, so its looks replay to the same decision.
        units = np.flatnonzero(pairing.rows[:, k] >= 0)
        sums = pair_columns(scores, pairing.rows[units, 0], pairing.rows[units, k],
                            unit_order[units])
        looks = condition_looks(
            sums, design, level=prereg.confidence_level, tolerance=prereg.quality_tolerance,
            min_savings=threshold, rng=derive_rng(prereg.seed, "cef", "sequential", condition),
            n_resamples=prereg.bootstrap_samples, interval=True, condition=condition)
        if units.shape[0] < pairing.rows.shape[0]:
            _check_stopped(looks, np.unique(unit_order[units]), tasks)
        results.append(looks)
    b = efficacy_boundaries(design.fractions(), alpha=(1.0 - prereg.confidence_level) / 2.0,
                            method="pocock" if design.method == "pocock" else "obrien_fleming")
    return SequentialResult(design=design, boundaries=b.z, nominal=b.nominal,
                            tasks_available=tasks, conditions=tuple(results),
                            per_task=per_task)
