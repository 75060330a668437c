"""A public-eval comparison read look by look under a sequential design.

``sequential_files(baseline, treatment, settings, design)`` pairs the two row files as
the fixed comparison does, puts the instances in run order (where each first appears in
the baseline file) and, at each look of ``design`` (a ``[sequential]`` table, as in a CEF
preregistration: docs/cef.md), decides over the first ``n_k`` instances:

* **quality**: the public-eval quality gate's own score test (bounds [-1, 1], over
  instance clusters: :func:`ctxbench.stats.sequential_gates.gate_looks`) at the look's
  nominal level, against ``-quality_margin_pp`` points;
* **token savings**: the gate's symmetric bootstrap-t of the log ratio of token totals
  (:func:`ctxbench.stats.ratio_savings.studentized_savings`) at the look's nominal level
  (O'Brien-Fleming spending under ``betting``): claimed when its lower bound at two-sided
  ``1 - nominal`` is above ``min_savings_percent``, a loss shown when the upper bound at
  that level is below it.

The comparison is claimed when both are; it stops as the CEF claim does
(:func:`ctxbench.stats.sequential_gates.claim_decision`). Rows that carry governance
overhead are refused (the fixed gate reads net savings there; the sequential one reads
the ``tokens`` column only). The false-stop review and warnings of the fixed report are
not part of the sequential decision.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign
from ctxbench.protocols.public_eval.pairing import pair_rows
from ctxbench.protocols.public_eval.rows import read_rows
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, Settings
from ctxbench.stats.ratio_savings import log_ratio_parts, resampled_totals, studentized_savings
from ctxbench.stats.sequential import efficacy_boundaries
from ctxbench.stats.sequential_gates import Decision, GateLook, carry, claim_decision, gate_looks

__all__ = ["PublicEvalSequential", "sequential_files"]

_OVERHEAD = ("governance_tokens",)


@dataclass(frozen=True, slots=True)
class PublicEvalSequential:
    """Both gates at each look taken, and the comparison's decision."""

    design: SequentialDesign
    instances: int
    looks: tuple[dict[str, tuple[GateLook, Decision]], ...]
    decisions: tuple[Decision, ...]

    @property
    def decision(self) -> Decision:
        return self.decisions[-1] if self.decisions else "continue"

    def as_json(self) -> dict[str, Any]:
        stop = None if self.decision == "continue" else self.looks[-1]["quality"][0].tasks
        return {
            "schema_version": "ctxbench.public-eval-sequential.v1",
            "design": self.design.as_dict(), "instances_available": self.instances,
            "decision": self.decision, "decided_at_instances": stop,
            "instances_saved": None if stop is None else self.design.max_tasks - stop,
            "looks": [{"look": k + 1, "instances": row["quality"][0].tasks,
                       "decision": self.decisions[k],
                       "gates": {name: {"statistic": _num(g.statistic),
                                        "critical": _num(g.critical),
                                        "nominal_alpha": g.nominal, "low": g.low,
                                        "high": g.high, "decision": d}
                                 for name, (g, d) in row.items()}}
                      for k, row in enumerate(self.looks)],
        }

    def summary_lines(self) -> list[str]:
        d = self.design
        out = [f"sequential design: {d.method}, looks at {', '.join(map(str, d.looks))} "
               f"instances (max {d.max_tasks}); {self.instances} instances in run order"]
        for k, row in enumerate(self.looks):
            gates = ", ".join(f"{n} {dec.replace('_', ' ')}" for n, (_, dec) in row.items())
            out.append(f"  look {k + 1} ({row['quality'][0].tasks} instances): {gates} -> "
                       f"{self.decisions[k].replace('_', ' ')}")
        if self.decision == "continue":
            out.append("  not decided by the instances available")
        else:
            out.append(f"  {self.decision.replace('_', ' ')} at "
                       f"{self.looks[-1]['quality'][0].tasks} of {d.max_tasks} instances")
        return out


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _savings_looks(t: np.ndarray, b: np.ndarray, quality: list[GateLook],
                   nominal: tuple[float, ...], floor: float, futility: bool,
                   rng: np.random.Generator, n_resamples: int,
                   max_tasks: int) -> list[GateLook]:
    parts = log_ratio_parts(t, b)
    out = []
    for k, q in enumerate(quality):
        n, a = q.tasks, nominal[k]
        resampled = resampled_totals(parts[:n], rng=rng, n_resamples=n_resamples)
        point = parts[:n].sum(axis=0)
        low = studentized_savings(point, resampled, level=1.0 - 2.0 * a).gate_low
        high = studentized_savings(point, resampled, level=1.0 - a).high
        est = 100.0 * (1.0 - float(t[:n].sum()) / float(b[:n].sum()))
        claimed = low is not None and low > floor
        loss = high is not None and high < floor
        last = n >= max_tasks
        out.append(GateLook(n, est - floor, math.nan, a, low, high, claimed, loss,
                            futility and not claimed and not loss and not last
                            and est <= floor))
    return out


def sequential_files(baseline: str | os.PathLike[str], treatment: str | os.PathLike[str],
                     settings: Settings, design: SequentialDesign) -> PublicEvalSequential:
    """Every look of ``design`` over the paired rows of two public-eval files."""
    tables = [read_rows(path) for path in (baseline, treatment)]
    for table in tables:
        for name in _OVERHEAD:
            if name in table.metrics and not np.isnan(table.metrics[name]).all():
                raise InputError(f"{table.path}: {name}: expected rows without governance "
                                 "overhead for a sequential analysis (its savings gate reads "
                                 "the tokens column only), got a recorded overhead")
    cells = pair_rows(tables[0], tables[1])
    names = {name: i for i, name in enumerate(cells.instance_ids.tolist())}
    first: dict[int, int] = {}
    for name in tables[0].instance_id.tolist():
        first.setdefault(names[name], len(first))
    rank = np.array([first[i] for i in range(cells.tasks)], dtype=np.int64)[cells.instance]
    k = cells.tasks

    def per(values: np.ndarray) -> np.ndarray:
        return np.bincount(rank, weights=values, minlength=k).astype(np.float64)

    den = per(np.ones(cells.cells))
    num = per(cells.treatment.resolved.astype(np.float64)
              - cells.baseline.resolved.astype(np.float64))
    alpha = (1.0 - settings.confidence_level) / 2.0
    quality = gate_looks(num, den, -settings.quality_margin_pp / 100.0, design.looks,
                         max_tasks=design.max_tasks, direction="greater", bounds=(-1.0, 1.0),
                         method=design.method, alpha=alpha, futility=design.futility,
                         interval=True)
    b = efficacy_boundaries(design.fractions(), alpha=alpha,
                            method="pocock" if design.method == "pocock" else "obrien_fleming")
    savings = _savings_looks(per(cells.treatment.tokens), per(cells.baseline.tokens), quality,
                             b.nominal, settings.min_savings_percent, design.futility,
                             derive_rng(settings.seed, RANDOM_STREAM, "sequential"),
                             settings.bootstrap_samples, design.max_tasks)
    looks: list[dict[str, tuple[GateLook, Decision]]] = []
    decisions: list[Decision] = []
    previous: dict[str, Decision | None] = {"quality": None, "token_savings": None}
    for i, (q_look, s) in enumerate(zip(quality, savings, strict=True)):
        last = design.looks[i] == design.max_tasks
        row: dict[str, tuple[GateLook, Decision]] = {}
        q = q_look
        if q.low is not None and q.high is not None:
            q = replace(q, low=100.0 * q.low, high=100.0 * q.high)  # points
        for name, g in (("quality", q), ("token_savings", s)):
            decided = carry(previous[name], g, last=last)
            previous[name] = decided
            row[name] = (g, decided)
        looks.append(row)
        decisions.append(claim_decision([row[n][1] for n in row], last=last))
        if decisions[-1] != "continue":
            break
    return PublicEvalSequential(design, k, tuple(looks), tuple(decisions))
