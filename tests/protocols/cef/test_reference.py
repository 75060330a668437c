"""CEF intervals against an independent reference, and (slow) their simulated coverage.

Reference: ``scipy.stats.bootstrap(..., paired=True, method="percentile")`` on the same
pairs. Two percentile bootstraps with different random streams agree only up to Monte-
Carlo error, so bounds are compared within a tolerance of a fraction of the interval's
width (with 20,000 resamples the quantile error is well under 5% of the width).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy import stats

from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.model import AggregateComparison
from ctxbench.protocols.cef.prereg import default_preregistration
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.testing.cef_trials import base_record

RESAMPLES = 20_000


def _pairs(n: int, seed: int, true_ratio: float = 0.6) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        base = int(rng.integers(500, 5000))
        cand = max(1, int(base * rng.uniform(true_ratio - 0.3, true_ratio + 0.3)))
        qb, qc = float(rng.uniform(0, 1)), float(rng.uniform(0, 1))
        for cond, ctx, q in (("raw", base, qb), ("native_compaction", cand, qc)):
            records.append(base_record(task_id=f"t{i}", condition=cond, context_tokens=ctx,
                                       task_score=q, provider_request_id=f"{i}{cond}"))
    return records


def _analyze(records: list[dict[str, Any]], samples: int, seed: int) -> AggregateComparison:
    trials = [parse_trial(r, path="t", line=i) for i, r in enumerate(records)]
    prereg = replace(default_preregistration(), bootstrap_samples=samples, seed=seed)
    report = analyze(trials, prereg, invocation={})
    return report.aggregate.comparisons[0]


def test_intervals_match_scipy_paired_percentile_bootstrap() -> None:
    records = _pairs(60, seed=3)
    comp = _analyze(records, RESAMPLES, seed=11)
    base = np.array([r["context_tokens"] for r in records if r["condition"] == "raw"], float)
    cand = np.array([r["context_tokens"] for r in records if r["condition"] != "raw"], float)
    qb = np.array([r["task_score"] for r in records if r["condition"] == "raw"])
    qc = np.array([r["task_score"] for r in records if r["condition"] != "raw"])

    def reduction(b: Any, c: Any, axis: int = -1) -> Any:
        return 1 - np.sum(c, axis=axis) / np.sum(b, axis=axis)

    def delta(b: Any, c: Any, axis: int = -1) -> Any:
        return np.mean(c - b, axis=axis)

    for name, fn, data in (("context_reduction", reduction, (base, cand)),
                           ("task_score_delta", delta, (qb, qc))):
        ref = stats.bootstrap(data, fn, paired=True, vectorized=True, method="percentile",
                              n_resamples=RESAMPLES, confidence_level=0.95,
                              random_state=np.random.default_rng(5))
        ours = comp.statistic(name)
        width = ref.confidence_interval.high - ref.confidence_interval.low
        assert ours.estimate == pytest.approx(float(fn(*data)), abs=1e-12)
        if name == "task_score_delta":
            # The gated quality interval is the score interval on the bounded scale,
            # whose empty cells sit at the scale's ends: it contains the percentile one.
            assert ours.low <= ref.confidence_interval.low
            assert ours.high >= ref.confidence_interval.high
        else:
            assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.05 * width)
            assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.05 * width)
        assert ours.standard_error == pytest.approx(ref.standard_error, rel=0.05)


@pytest.mark.slow
def test_context_reduction_interval_covers_about_95_percent() -> None:
    """Simulate 1000 studies of 40 pairs from a known population; count covering intervals."""
    rng = np.random.default_rng(2024)
    pop_base = rng.integers(500, 5000, size=200_000).astype(float)
    pop_cand = pop_base * rng.uniform(0.3, 0.9, size=pop_base.shape[0])
    truth = 1 - pop_cand.sum() / pop_base.sum()
    covered = 0
    studies = 1000
    for study in range(studies):
        pick = rng.integers(0, pop_base.shape[0], size=40)
        records = []
        for i, j in enumerate(pick):
            records.append(base_record(task_id=f"t{i}", condition="raw",
                                       context_tokens=int(pop_base[j])))
            records.append(base_record(task_id=f"t{i}", condition="native_compaction",
                                       context_tokens=max(1, int(pop_cand[j]))))
        comp = _analyze(records, 1000, seed=study)
        red = comp.context_reduction
        assert red.low is not None and red.high is not None
        covered += red.low <= truth <= red.high
    rate = covered / studies
    print(f"coverage {rate:.3f} over {studies} studies")
    # binomial sd at 95% with 1000 studies is about 0.7 percentage points; percentile
    # intervals undercover slightly at n = 40
    assert 0.93 <= rate <= 0.97, rate
