"""One condition's bootstrap: the percentile intervals and H4's bootstrap-t share resamples."""

from __future__ import annotations

import numpy as np
import pytest

from ctxbench.protocols.cef.compare import COLUMNS, Margins, _statistic, compare_condition
from ctxbench.stats.bootstrap import bootstrap_totals
from ctxbench.stats.ratio_savings import log_ratio_parts, resampled_totals, studentized_savings


def _sums(clusters: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.zeros((clusters, len(COLUMNS)))
    out[:, 0] = 1.0
    out[:, 1] = np.round(rng.normal(0.0, 0.05, clusters), 4)
    out[:, 2] = np.round(rng.normal(0.0, 0.05, clusters), 4)
    out[:, 3] = np.round(rng.normal(0.0, 0.02, clusters), 4)
    base = rng.integers(2000, 12000, clusters).astype(np.float64)
    out[:, 4] = base
    out[:, 5] = np.round(base * rng.uniform(0.5, 0.7, clusters))
    out[:, 6] = 1.0 - out[:, 5] / base
    out[:, 7], out[:, 8] = base * 4e-7, out[:, 5] * 4e-7
    out[:, 9], out[:, 10] = 200.0 + base * 0.05, 200.0 + out[:, 5] * 0.05
    out[:, 14] = 1.0
    return out


def test_without_strata_h4_confirmation_reads_the_percentile_resamples() -> None:
    sums = _sums(80, 3)
    margins = Margins(quality_tolerance=0.01, min_savings=0.2)
    got = compare_condition(sums, rng=np.random.default_rng(9), n_resamples=1000, level=0.95,
                            margins=margins)
    # The percentile intervals are bootstrap_totals' with the same generator ...
    want = bootstrap_totals(sums[:, :11], _statistic, rng=np.random.default_rng(9),
                            n_resamples=1000, level=0.95)
    for mine, ref in zip(got.estimates.values(), want, strict=True):
        assert mine.estimate == ref.estimate
        assert (mine.low, mine.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
        assert mine.undefined_resamples == ref.undefined_resamples
    # ... and H4's bound comes from the log-ratio parts of those same resamples.
    parts = log_ratio_parts(sums[:, 5], sums[:, 4])
    same = resampled_totals(parts, rng=np.random.default_rng(9), n_resamples=1000)
    bound = studentized_savings(parts.sum(axis=0), same, level=0.95).gate_low
    assert bound is not None
    assert got.gates["context_reduction"].confirm_low == pytest.approx(bound / 100.0,
                                                                       rel=1e-12)
    assert got.gates["context_reduction"].confirm_passed is (bound / 100.0 > 0.2)


def test_with_strata_h4_confirmation_draws_its_own_unstratified_resamples() -> None:
    sums = _sums(60, 5)
    strata = np.repeat(np.arange(2, dtype=np.int64), 30)
    got = compare_condition(sums, rng=np.random.default_rng(2), n_resamples=1000, level=0.95,
                            margins=Margins(0.01, 0.2), strata=strata)
    rng = np.random.default_rng(2)
    bootstrap_totals(sums[:, :11], _statistic, rng=rng, n_resamples=1000, level=0.95,
                     strata=strata)
    parts = log_ratio_parts(sums[:, 5], sums[:, 4])
    own = resampled_totals(parts, rng=rng, n_resamples=1000)
    bound = studentized_savings(parts.sum(axis=0), own, level=0.95).gate_low
    assert bound is not None
    assert got.gates["context_reduction"].confirm_low == pytest.approx(bound / 100.0,
                                                                       rel=1e-12)
