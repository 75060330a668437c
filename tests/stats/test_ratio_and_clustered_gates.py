"""The public-eval gate statistics: exact type I of Tango's gate, the design-effect
correction, and the symmetric bootstrap-t savings interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ctxbench.stats import ratio_savings
from ctxbench.stats.bootstrap import bootstrap_totals
from ctxbench.stats.proportions import clustered_tango_interval, tango_paired_interval
from ctxbench.stats.ratio_savings import (
    log_ratio_parts,
    percentile_estimate,
    resampled_totals,
    studentized_savings,
)


def _exact_type_i(n: int, differ: float, margin: float = 0.01) -> float:
    """P(Tango's lower bound >= -margin) when the true delta is exactly -margin."""
    recover, regress = (differ - margin) / 2, (differ + margin) / 2
    cap = int(n * differ + 8 * np.sqrt(n * differ) + 10)
    total = 0.0
    for b in range(min(n, cap) + 1):
        for c in range(min(n - b, cap) + 1):
            p = sps.multinomial.pmf([b, c, n - b - c], n, [recover, regress, 1 - differ])
            if p > 1e-13 and tango_paired_interval(b, c, n).low >= -margin:
                total += p
    return float(total)


@pytest.mark.parametrize(("differ", "expected"), [(0.03, 0.0112), (0.11, 0.0222)])
def test_tango_gate_exact_type_i_at_the_margin_n_100(differ: float, expected: float) -> None:
    rate = _exact_type_i(100, differ)
    assert rate == pytest.approx(expected, abs=5e-5)
    assert rate <= 0.025


def test_clustered_tango_with_identical_runs_is_the_single_run_interval() -> None:
    rng = np.random.default_rng(4)
    k = 60
    first = (rng.random(k) < 0.1).astype(np.int64)
    second = ((rng.random(k) < 0.12) & (first == 0)).astype(np.int64)
    single = tango_paired_interval(int(first.sum()), int(second.sum()), k)
    ones = np.ones(k, dtype=np.int64)
    same = clustered_tango_interval(first, second, ones)
    assert same.design_effect == 1.0 or same.design_effect == pytest.approx(1.0, abs=0.05)
    tripled = clustered_tango_interval(3 * first, 3 * second, 3 * ones)
    # Three identical runs carry the information of one: deff ~ 3 and the same interval.
    assert tripled.design_effect == pytest.approx(3.0, rel=0.05)
    assert tripled.low == pytest.approx(single.low, abs=0.01)
    assert tripled.high == pytest.approx(single.high, abs=0.01)
    with pytest.raises(ValueError):
        clustered_tango_interval(first, second, ones[:-1])


def test_resampled_totals_are_bootstrap_totals_draws() -> None:
    rng = np.random.default_rng(8)
    sums = rng.uniform(1, 10, (37, 3))

    def stat(totals: np.ndarray) -> np.ndarray:
        return np.asarray(totals[:, :1] / totals[:, 1:2])

    ref = bootstrap_totals(sums, stat, rng=np.random.default_rng(1), n_resamples=1000)[0]
    mine = resampled_totals(sums, rng=np.random.default_rng(1), n_resamples=1000,
                            batch_elements=100)
    got = percentile_estimate(float(sums[:, 0].sum() / sums[:, 1].sum()),
                              mine[:, 0] / mine[:, 1], level=0.95, n_units=37)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_symmetric_bootstrap_t_is_symmetric_on_the_log_scale_and_degenerate_is_none() -> None:
    rng = np.random.default_rng(2)
    b = rng.lognormal(10, 1, 80)
    t = b * rng.lognormal(np.log(0.7), 0.3, 80)
    parts = log_ratio_parts(t, b)
    res = studentized_savings(parts.sum(axis=0),
                              resampled_totals(parts, rng=rng, n_resamples=2000), level=0.95)
    assert res.low is not None and res.high is not None and res.standard_error is not None
    theta = np.log(t.sum() / b.sum())
    lo, hi = np.log(1 - res.high / 100), np.log(1 - res.low / 100)
    assert theta - lo == pytest.approx(hi - theta, rel=1e-9)
    assert res.percent_saved == pytest.approx(100 * (1 - t.sum() / b.sum()))
    flat = log_ratio_parts(0.5 * b, b)
    none = studentized_savings(flat.sum(axis=0),
                               resampled_totals(flat, rng=rng, n_resamples=1000), level=0.95)
    assert none.low is None and none.high is None and none.gate_low is None
    assert none.percent_saved == pytest.approx(50.0)


def test_gate_bound_is_the_lower_end_of_the_symmetric_interval_at_level_one_minus_half_alpha(
) -> None:
    rng = np.random.default_rng(4)
    b = rng.lognormal(10, 1, 60)
    t = b * rng.lognormal(np.log(0.9), 0.3, 60)
    parts = log_ratio_parts(t, b)
    resampled = resampled_totals(parts, rng=rng, n_resamples=3000)
    at_95 = studentized_savings(parts.sum(axis=0), resampled, level=0.95)
    at_975 = studentized_savings(parts.sum(axis=0), resampled, level=0.975)
    assert at_95.gate_low == at_975.low
    assert at_95.low is not None and at_95.gate_low is not None
    assert at_95.gate_low < at_95.low
    at_90 = studentized_savings(parts.sum(axis=0), resampled, level=0.90)
    assert at_90.gate_low == at_95.low


def _reference_totals(sums: np.ndarray, seed: int, n_resamples: int) -> np.ndarray:
    """The resampling rule written out one resample at a time (no batches, no threads)."""
    (gen,) = np.random.default_rng(seed).spawn(1)
    n = sums.shape[0]
    out = np.empty((n_resamples, sums.shape[1]))
    for r in range(n_resamples):
        draws = np.minimum((gen.random(n) * n).astype(np.int64), n - 1)
        out[r] = np.bincount(draws, minlength=n).astype(np.float64) @ sums
    return out


@pytest.mark.parametrize(("threads", "draw_rows"), [(1, 8), (2, 8), (3, 8), (1, 1), (2, 3),
                                                     (1, 32)])
def test_many_units_path_gives_each_resample_its_own_draws(
        threads: int, draw_rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Units beyond batch_elements / 16 take the many-units path (draw_rows resamples
    # counted per call, offset by row), split over threads that each start from the
    # stream advanced to their first resample; 37 resamples end in a part-filled call.
    monkeypatch.setattr(ratio_savings, "_threads", lambda draws, least: threads)
    monkeypatch.setattr(ratio_savings, "_DRAW_ROWS", draw_rows)
    rng = np.random.default_rng(5)
    sums = np.column_stack([rng.integers(0, 50, 300), rng.integers(1, 90, 300),
                            rng.integers(0, 9, 300)]).astype(np.float64)
    got = resampled_totals(sums, rng=np.random.default_rng(11), n_resamples=37,
                           batch_elements=300)
    want = _reference_totals(sums, 11, 37)
    # Integer data: every total is exact, so the paths must agree exactly.
    np.testing.assert_array_equal(got, want)
    batched = resampled_totals(sums, rng=np.random.default_rng(11), n_resamples=37)
    np.testing.assert_array_equal(batched, want)


@pytest.mark.parametrize("units", [1_100, 5_000])
def test_threads_change_no_total_on_float_data(units: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Non-integer sums: a product's rounding depends on which rows it multiplies together,
    # so the threads' shares must be whole blocks of the one-thread products. 1,100 units
    # take the batch path (59 resamples per batch), 5,000 the one-resample path.
    rng = np.random.default_rng(8)
    sums = rng.lognormal(3.0, 1.5, size=(units, 16))  # with 7 columns a bad split agreed
    runs = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(ratio_savings, "_threads", lambda draws, least, k=threads: k)
        runs.append(resampled_totals(sums, rng=np.random.default_rng(4), n_resamples=1_001))
    np.testing.assert_array_equal(runs[1], runs[0])
    np.testing.assert_array_equal(runs[2], runs[0])


def test_thread_shares_are_whole_blocks() -> None:
    assert ratio_savings._shares(2000, 32, 2) == [(0, 1024), (1024, 2000)]
    assert ratio_savings._shares(10, 32, 4) == [(0, 10)]
    assert ratio_savings._shares(100, 26, 3) == [(0, 52), (52, 100)]
    # Below the draw threshold one thread does it all.
    assert ratio_savings._threads(10_000, ratio_savings._BATCH_THREAD_DRAWS) == 1


def test_a_worker_error_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise MemoryError("no room for the counts")

    monkeypatch.setattr(ratio_savings, "_threads", lambda draws, least: 2)
    monkeypatch.setattr(ratio_savings, "_fill_batches", fail)
    with pytest.raises(MemoryError, match="no room"):
        resampled_totals(np.ones((1_100, 3)), rng=np.random.default_rng(4), n_resamples=200)
