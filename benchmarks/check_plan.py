"""Check ``ctxbench plan`` against independent simulations of the CEF H1 gate.

Run: ``.venv/bin/python benchmarks/check_plan.py [--replications R]``. For each design,
the plan's tasks for 80% power, then independent studies of that many tasks (their own
random stream and generator code) decided by ``compare._gate``, the function ``cef
analyze`` decides H1 with; prints the plan's power, the independent rate, and their
difference in Monte-Carlo standard errors (of both, for a simulated plan).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.compare import COLUMNS, GATED, Margins, _gate
from ctxbench.protocols.cef.planning import StudyDesign, plan_study

_H1 = next(g for g in GATED if g[0] == "task_score_delta")


def _passes(change: np.ndarray, pairs: float, margin: float) -> bool:
    sums = np.zeros((change.shape[0], len(COLUMNS)))
    sums[:, 0] = pairs
    sums[:, 1] = change
    stat, num, den, bounds = _H1
    return _gate(sums, stat, num, den, bounds, 0.95, Margins(margin, 0.0)).passed


def _independent(design: StudyDesign, n: int, replications: int) -> float:
    rng = derive_rng(99, "check_plan", design.scores, str(n))
    hits = 0
    decided: dict[tuple[int, int], bool] = {}
    for _ in range(replications):
        if design.scores == "binary" and design.replicates == 1:
            assert design.discordance is not None
            gain = (design.discordance + design.difference) / 2
            g, loss, _tie = rng.multinomial(n, [gain, design.discordance - gain,
                                                1 - design.discordance]).tolist()
            if (g, loss) not in decided:
                change = np.zeros(n)
                change[:g], change[g:g + loss] = 1.0, -1.0
                decided[(g, loss)] = _passes(change, 1.0, design.margin)
            hits += decided[(g, loss)]
            continue
        assert design.sd is not None
        task = rng.normal(design.difference, design.sd, n)
        noise = rng.normal(0.0, design.replicate_sd, (n, design.replicates))
        change = np.clip(task[:, None] + noise, -1.0, 1.0).sum(axis=1)
        hits += _passes(change, float(design.replicates), design.margin)
    return hits / replications


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replications", type=int, default=2000,
                        help="simulated studies per size (plan) and independent studies "
                             "(continuous designs)")
    parser.add_argument("--binary-replications", type=int, default=100_000,
                        help="independent studies of binary designs (one gate call per "
                             "distinct count, so cheap)")
    args = parser.parse_args()
    designs = [
        StudyDesign("binary", margin=0.05, difference=0.0, discordance=0.2),
        StudyDesign("binary", margin=0.1, difference=0.02, discordance=0.3),
        StudyDesign("continuous", margin=0.05, difference=0.0, sd=0.15, replicates=3,
               replicate_sd=0.1),
    ]
    print("| design | method | tasks (80%) | plan power | independent rate (studies) | "
          "difference / SE |")
    print("|---|---|---|---|---|---|")
    for d in designs:
        plan = plan_study(d, powers=(0.8,), replications=args.replications)
        t = plan.targets[0]
        assert t.tasks is not None and t.power is not None
        reps = args.binary_replications if plan.method == "exact" else args.replications
        rate = _independent(d, t.tasks, reps)
        var = rate * (1 - rate) / reps + (t.mc_se or 0.0) ** 2
        spread = f"sd {d.sd}" if d.scores == "continuous" else f"discordance {d.discordance}"
        print(f"| {d.scores}, {spread}, replicates {d.replicates}, margin {d.margin}, "
              f"difference {d.difference} | {plan.method} | {t.tasks} | {t.power:.4f} | "
              f"{rate:.4f} ({reps}) | {(rate - t.power) / math.sqrt(var):+.2f} |")


if __name__ == "__main__":
    main()
