"""One condition against the baseline: paired columns, joint bootstrap, H1-H4.

For each paired unit the analysis builds one row of column sums (see ``COLUMNS``) and
resamples them with one count matrix (:func:`ctxbench.stats.ratio_savings.resampled_totals`,
the draws of :func:`ctxbench.stats.bootstrap_totals`; within strata, ``bootstrap_totals``
itself), so every metric of a condition, and H4's bootstrap-t, is resampled with the same
indices. Every statistic is a ratio of totals:

* quality deltas: ``sum(candidate - baseline) / pairs`` (failures carry the
  preregistered failure scores);
* context / cost / latency reduction: ``1 - sum(candidate) / sum(baseline)``, where a
  pair in which either side failed is credited zero reduction (its candidate value is
  replaced by the baseline's), so a failed request that consumed nothing never looks
  like a saving;
* mean per-pair context reduction: ``sum(1 - candidate/baseline) / pairs`` (zero for a
  failed pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.stats import BootstrapEstimate, bootstrap_totals
from ctxbench.stats.ratio_savings import (
    log_ratio_parts,
    percentile_estimate,
    resampled_totals,
    studentized_savings,
)
from ctxbench.stats.score import ScoreInterval, ScoreTest, score_interval_and_test

__all__ = [
    "COLUMNS",
    "GATED",
    "STATISTICS",
    "ConditionResult",
    "Gate",
    "Margins",
    "Scores",
    "compare_condition",
    "pair_columns",
]

COLUMNS = (
    "pairs", "task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
    "baseline_context_tokens", "candidate_context_tokens", "pair_context_reduction",
    "baseline_cost_usd", "candidate_cost_usd", "baseline_latency_ms", "candidate_latency_ms",
    "failed_pairs", "candidate_failures", "baseline_failures", "succeeded_pairs",
)
STATISTICS = (
    "task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
    "context_reduction", "mean_pair_context_reduction", "cost_reduction", "latency_reduction",
)

FloatArray = NDArray[np.float64]
# The gated statistics: (statistic, numerator column, denominator column, bounds of
# one pair's value or None). The context reduction is 1 - ratio, so its score interval
# is the ratio's, reflected.
GATED = (
    ("task_score_delta", 1, 0, (-1.0, 1.0)),
    ("evidence_recall_delta", 2, 0, (-1.0, 1.0)),
    ("unsupported_claim_rate_delta", 3, 0, (-1.0, 1.0)),
    ("context_reduction", 5, 4, None),
)


@dataclass(frozen=True, slots=True)
class Margins:
    """Where each gate's null sits: quality deltas at -/+ tolerance, reduction at min."""

    quality_tolerance: float
    min_savings: float


@dataclass(frozen=True, slots=True)
class Gate:
    """One gated statistic: its score interval and the one-sided test at its margin."""

    interval: ScoreInterval
    test: ScoreTest
    passed: bool
    confirm_low: float | None = None
    """H4 only: the lower bound of the context reduction from the symmetric bootstrap-t
    of log(candidate / baseline totals) at ``1 - (1 - level) / 2``; it must clear the
    margin too (see ``_confirm``)."""
    confirm_passed: bool | None = None


@dataclass(frozen=True, slots=True)
class Scores:
    """Per-trial values with failure scores applied (indexed by trial)."""

    task_score: FloatArray
    evidence_recall: FloatArray
    unsupported_claim_rate: FloatArray
    context_tokens: FloatArray
    billed_cost_usd: FloatArray
    latency_ms: FloatArray
    failed: NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class ConditionResult:
    """Point estimates and intervals of every statistic, plus the failure counts."""

    estimates: dict[str, BootstrapEstimate]
    gates: dict[str, Gate]
    """The four gated statistics (H1-H4), decided by score tests over clusters."""
    units: int
    pairs: int
    failed_pairs: int
    candidate_failures: int
    baseline_failures: int
    evaluable_units: int
    """Units holding at least one pair in which both sides succeeded: the context, cost
    and latency reductions rest on these alone (a failed pair is credited zero)."""


def pair_columns(scores: Scores, base: NDArray[np.int64], cand: NDArray[np.int64],
                 cluster: NDArray[np.int64] | None) -> FloatArray:
    """One row per resampling unit holding the sums of ``COLUMNS``.

    ``base``/``cand`` are the trial indices of each pair. With ``cluster`` (a cluster
    index per pair, e.g. its task) the pairs of a cluster are summed into one row, in
    the order of the cluster indices.
    """
    n = base.shape[0]
    failed_b = scores.failed[base]
    failed_c = scores.failed[cand]
    either = failed_b | failed_c
    out = np.empty((n, len(COLUMNS)), dtype=np.float64)
    out[:, 0] = 1.0
    out[:, 1] = scores.task_score[cand] - scores.task_score[base]
    out[:, 2] = scores.evidence_recall[cand] - scores.evidence_recall[base]
    out[:, 3] = scores.unsupported_claim_rate[cand] - scores.unsupported_claim_rate[base]
    base_ctx = scores.context_tokens[base]
    cand_ctx = np.where(either, base_ctx, scores.context_tokens[cand])
    out[:, 4] = base_ctx
    out[:, 5] = cand_ctx
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(base_ctx > 0, cand_ctx / np.where(base_ctx > 0, base_ctx, 1.0), 1.0)
    out[:, 6] = 1.0 - ratio
    base_cost = scores.billed_cost_usd[base]
    out[:, 7] = base_cost
    out[:, 8] = np.where(either, base_cost, scores.billed_cost_usd[cand])
    base_lat = scores.latency_ms[base]
    out[:, 9] = base_lat
    out[:, 10] = np.where(either, base_lat, scores.latency_ms[cand])
    out[:, 11] = either
    out[:, 12] = failed_c
    out[:, 13] = failed_b
    out[:, 14] = ~either
    if cluster is None:
        return out
    _, inverse = np.unique(cluster, return_inverse=True)
    k = int(inverse.max()) + 1
    return np.column_stack([np.bincount(inverse, weights=out[:, j], minlength=k)
                            for j in range(out.shape[1])])


def _reduction(candidate: FloatArray, baseline: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(baseline > 0, 1.0 - candidate / np.where(baseline > 0, baseline, 1.0),
                        np.nan)


def _statistic(totals: FloatArray) -> FloatArray:
    pairs = totals[:, 0]
    return np.stack([
        totals[:, 1] / pairs,
        totals[:, 2] / pairs,
        totals[:, 3] / pairs,
        _reduction(totals[:, 5], totals[:, 4]),
        totals[:, 6] / pairs,
        _reduction(totals[:, 8], totals[:, 7]),
        _reduction(totals[:, 10], totals[:, 9]),
    ], axis=1)


def _gate(sums: FloatArray, stat: str, num: int, den: int,
          bounds: tuple[float, float] | None, level: float, margins: Margins) -> Gate:
    if stat == "context_reduction":
        # reduction > min  <=>  ratio of totals < 1 - min.
        ratio, test = score_interval_and_test(sums[:, num], sums[:, den],
                                              1.0 - margins.min_savings, level=level)
        interval = ScoreInterval(
            estimate=1.0 - ratio.estimate,
            low=None if ratio.high is None else 1.0 - ratio.high,
            high=None if ratio.low is None else 1.0 - ratio.low,
            level=level, n_clusters=ratio.n_clusters, degenerate=ratio.degenerate)
        shown = test.shows_less
    else:
        upper = stat == "unsupported_claim_rate_delta"
        margin = margins.quality_tolerance if upper else -margins.quality_tolerance
        interval, test = score_interval_and_test(sums[:, num], sums[:, den], margin,
                                                 level=level, bounds=bounds)
        shown = test.shows_less if upper else test.shows_greater
    # No gate passes on a statistic the data cannot vary (a degenerate distribution).
    return Gate(interval=interval, test=test, passed=bool(shown and not interval.degenerate))


def _confirm(gate: Gate, sums: FloatArray, resampled: FloatArray, *, level: float,
             min_savings: float) -> Gate:
    """H4 must also clear its margin under the symmetric bootstrap-t of the log ratio.

    With right-skewed token counts the score test's one-sided error on the reduction side
    exceeds alpha / 2 at a few hundred clusters (calibration: 3.5% at n = 300); the
    symmetric bootstrap-t bound taken at ``1 - alpha/2`` cannot miss on one side more
    often than its two-sided level allows (Hall 1988), and requiring both can only lower
    the false-pass rate (docs/statistics.md). ``resampled`` holds the resampled totals
    of :func:`log_ratio_parts`' five columns.
    """
    point = log_ratio_parts(sums[:, 5], sums[:, 4]).sum(axis=0)
    savings = studentized_savings(point, resampled, level=level)
    low = None if savings.gate_low is None else savings.gate_low / 100.0
    confirmed = low is not None and low > min_savings
    return Gate(interval=gate.interval, test=gate.test, passed=gate.passed and confirmed,
                confirm_low=low, confirm_passed=confirmed)


def _bootstrap(sums: FloatArray, *, rng: np.random.Generator, n_resamples: int, level: float,
               strata: NDArray[np.int64] | None) -> tuple[tuple[BootstrapEstimate, ...],
                                                         FloatArray]:
    """The percentile intervals of every statistic and H4's resampled log-ratio parts.

    Without strata both come from one set of resamples: the (units x 16) product of one
    count matrix, drawn exactly as :func:`bootstrap_totals` draws it, so the percentile
    intervals are the ones it gives. With strata the percentile intervals resample within
    them and the bootstrap-t, which is defined over independent clusters, draws its own.
    """
    parts = log_ratio_parts(sums[:, 5], sums[:, 4])
    if strata is not None:
        estimates = bootstrap_totals(sums[:, :11], _statistic, rng=rng,
                                     n_resamples=n_resamples, level=level,
                                     method="percentile", strata=strata)
        return estimates, resampled_totals(parts, rng=rng, n_resamples=n_resamples)
    columns = sums[:, :11]
    resampled = resampled_totals(np.column_stack([columns, parts]), rng=rng,
                                 n_resamples=n_resamples)
    theta_hat = _statistic(columns.sum(axis=0)[None, :])[0]
    theta = _statistic(resampled[:, :11])
    estimates = tuple(percentile_estimate(float(theta_hat[j]), theta[:, j], level=level,
                                          n_units=int(sums.shape[0]))
                      for j in range(theta.shape[1]))
    return estimates, resampled[:, 11:]


def compare_condition(sums: FloatArray, *, rng: np.random.Generator, n_resamples: int,
                      level: float, margins: Margins,
                      strata: NDArray[np.int64] | None = None) -> ConditionResult:
    """Gate H1-H4 by score tests over the rows (clusters); bootstrap every statistic.

    Each row of ``sums`` is one independent cluster. The bootstrap intervals (one set of
    resamples for every statistic) are reported beside the gates and decide nothing;
    without strata H4's bootstrap-t confirmation reads the same resamples.
    """
    estimates, log_parts = _bootstrap(sums, rng=rng, n_resamples=n_resamples, level=level,
                                      strata=strata)
    totals = sums.sum(axis=0)
    gates = {stat: _gate(sums, stat, num, den, bounds, level, margins)
             for stat, num, den, bounds in GATED}
    gates["context_reduction"] = _confirm(gates["context_reduction"], sums, log_parts,
                                          level=level, min_savings=margins.min_savings)
    return ConditionResult(
        estimates=dict(zip(STATISTICS, estimates, strict=True)),
        gates=gates,
        units=int(sums.shape[0]),
        pairs=round(totals[0]),
        failed_pairs=round(totals[11]),
        candidate_failures=round(totals[12]),
        baseline_failures=round(totals[13]),
        evaluable_units=int(np.count_nonzero(sums[:, 14] > 0)),
    )
