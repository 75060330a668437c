"""Simulated coverage of the resolve-rate delta intervals with repeated runs: the gate
(the score interval over instance clusters on the bounded scale) and the clustered
bootstrap (not gating)."""

from __future__ import annotations

import numpy as np
import pytest

from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.public_eval import Settings, analyze, pair_rows, rows_from_lines


@pytest.mark.slow
def test_delta_interval_covers_the_true_difference_with_repeated_runs() -> None:
    rng = np.random.default_rng(99)
    tasks, runs, sims = 60, 3, 300
    hits = boot_hits = 0
    for _ in range(sims):
        # Task difficulty makes runs of one instance correlated; the treatment lowers the
        # resolve probability by 0.03 on every task, so the true delta is -3 pp.
        difficulty = rng.uniform(0.2, 0.9, tasks)
        base, treat = [], []
        for i in range(tasks):
            for r in range(runs):
                base.append({"instance_id": f"i{i}", "run": r, "tokens": 100,
                             "resolved": bool(rng.random() < difficulty[i])})
                treat.append({"instance_id": f"i{i}", "run": r, "tokens": 60,
                              "resolved": bool(rng.random() < difficulty[i] - 0.03)})
        tables = [rows_from_lines([JsonLine(p, k + 1, row) for k, row in enumerate(rows)],
                                  path=p) for p, rows in (("b", base), ("t", treat))]
        report = analyze(pair_rows(*tables), Settings(bootstrap_samples=1000,
                                                     seed=int(rng.integers(1 << 30))))
        low, high = report.quality.gate_ci_pp
        hits += low <= -3.0 <= high
        boot = report.quality.not_gating.bootstrap_ci_pp
        assert boot is not None and boot[0] is not None and boot[1] is not None
        boot_hits += boot[0] <= -3.0 <= boot[1]
    # Since issue 20 the gate allows an instance to lose every run and is continuity-
    # corrected, so it is conservative here (297 of 300; Tango on design-effect-scaled
    # counts covered 93-98%): it must never undercover.
    assert hits / sims >= 0.93
    # The percentile bootstrap with 60 clusters undercovers slightly; it must stay close.
    assert 0.90 <= boot_hits / sims <= 0.98
