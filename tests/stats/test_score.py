"""Score intervals: Tango agreement for binary scores, t quantiles, degeneracy, ratios."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ctxbench.stats.proportions import tango_paired_interval
from ctxbench.stats.score import (
    _distinct,
    score_interval,
    score_interval_and_test,
    score_test,
    t_quantile,
)


def _binary(gains: int, losses: int, n: int) -> np.ndarray:
    return np.array([1.0] * gains + [-1.0] * losses + [0.0] * (n - gains - losses))


@pytest.mark.parametrize(("df", "q"), [(9, 0.975), (49, 0.975), (99, 0.9), (299, 0.995)])
def test_t_quantile_matches_scipy(df: int, q: float) -> None:
    assert t_quantile(q, df) == pytest.approx(float(sps.t.ppf(q, df)), abs=2e-4)


@pytest.mark.parametrize(("gains", "losses", "n"), [(0, 0, 30), (0, 1, 50), (3, 1, 50),
                                                     (10, 4, 100), (12, 7, 300)])
def test_binary_scores_give_tangos_variance_continuity_corrected_and_the_t_quantile(
        gains: int, losses: int, n: int) -> None:
    """With one run of binary scores the variance is Tango's; the total contrast is moved
    one pair's change (half the step +1 -> -1) toward zero, and the critical value is
    Student-t on n - 1 df: the interval contains Tango's, and at Tango's bound, where
    Tango's Z = (b - c - n delta) / sqrt(V) is the normal quantile, ours is
    (b - c - n delta - 1) / sqrt(V)."""
    d = _binary(gains, losses, n)
    ours = score_interval(d, np.ones(n), bounds=(-1.0, 1.0))
    tango = tango_paired_interval(gains, losses, n)
    assert ours.low is not None and ours.high is not None
    assert ours.low <= tango.low + 1e-9 and ours.high >= tango.high - 1e-9
    at_bound = score_test(d, np.ones(n), tango.low, bounds=(-1.0, 1.0))
    z = float(sps.norm.ppf(0.975))
    total = gains - losses - n * tango.low
    assert at_bound.continuity == 1.0
    assert at_bound.statistic == pytest.approx(z * (total - 1.0) / total, abs=1e-6)


def test_identical_pairs_are_degenerate_and_never_pass() -> None:
    d = np.zeros(10)
    interval = score_interval(d, np.ones(10), bounds=(-1.0, 1.0))
    assert interval.degenerate and interval.estimate == 0.0
    # Tango's width for 0 of 10 discordant pairs, widened by t(9): nothing is shown.
    assert interval.low is not None and interval.low < -0.25
    assert not score_test(d, np.ones(10), -0.01, bounds=(-1.0, 1.0)).shows_greater


def test_bound_and_test_agree() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.002, 0.03, 80)
    interval = score_interval(d, np.ones(80), bounds=(-1.0, 1.0))
    assert interval.low is not None
    inside = score_test(d, np.ones(80), interval.low + 1e-6, bounds=(-1.0, 1.0))
    outside = score_test(d, np.ones(80), interval.low - 1e-6, bounds=(-1.0, 1.0))
    assert not inside.shows_greater and outside.shows_greater


def test_ratio_interval_is_fieller_like_and_clustered() -> None:
    rng = np.random.default_rng(9)
    base = rng.gamma(2.0, 500.0, 60)
    cand = base * rng.beta(6.0, 4.0, 60)
    ratio = score_interval(cand, base)
    assert ratio.estimate == pytest.approx(cand.sum() / base.sum())
    assert ratio.low is not None and ratio.high is not None
    assert ratio.low < ratio.estimate < ratio.high
    assert ratio.high - ratio.low < 0.15
    # Duplicating every cluster twice (as if each were two independent units) narrows
    # the interval; summing them into clusters first gives the original back.
    twice = score_interval(np.r_[cand, cand], np.r_[base, base])
    assert twice.high is not None and twice.high - twice.low < ratio.high - ratio.low
    clustered = score_interval(2 * cand, 2 * base)
    assert clustered.low == pytest.approx(ratio.low) and clustered.high == pytest.approx(
        ratio.high)


def test_constant_ratio_is_degenerate() -> None:
    base = np.arange(1.0, 21.0) * 100
    assert score_interval(base * 0.5, base).degenerate


@pytest.mark.parametrize("bounds", [None, (-1.0, 1.0)])
def test_interval_and_test_together_equal_the_separate_calls(
        bounds: tuple[float, float] | None) -> None:
    rng = np.random.default_rng(21)
    den = rng.integers(1, 4, 60).astype(np.float64)
    if bounds is None:
        num = den * rng.lognormal(6.0, 1.0, 60)
        theta0 = 0.9 * float(num.sum() / den.sum())
    else:
        num = np.round(den * rng.uniform(-0.3, 0.5, 60), 4)
        theta0 = -0.01
    interval, test = score_interval_and_test(num, den, theta0, level=0.95, bounds=bounds)
    assert interval == score_interval(num, den, level=0.95, bounds=bounds)
    assert test == score_test(num, den, theta0, level=0.95, bounds=bounds)
    assert interval.low is not None and interval.low < interval.estimate < interval.high
    with pytest.raises(ValueError, match=r"^level: expected a number in \(0, 1\), got 1\.5$"):
        score_interval_and_test(num, den, theta0, level=1.5)


def test_one_null_solver_matches_the_batched_solver_bit_for_bit() -> None:
    # Two nulls in one call take the array path; each alone takes the scalar path.
    from ctxbench.stats import score as module

    rng = np.random.default_rng(4)
    z = rng.normal(0.1, 1.0, (2, 500))
    w = rng.integers(1, 3, 500).astype(np.float64)
    lo = -1.0 / z.max(axis=1)
    hi = -1.0 / z.min(axis=1)
    both = module._solve_lambda(z, w, lo, hi)
    for i in range(2):
        alone = module._solve_lambda(z[i : i + 1], w, lo[i : i + 1], hi[i : i + 1])
        assert alone.tolist() == [both[i]]
    total = (w * z[0] / (1.0 + both[0] * z[0])).sum()
    assert abs(total) <= 1e-9 * (w * np.abs(z[0])).sum()


def test_the_extreme_cell_sits_at_the_end_of_the_scale_not_at_the_largest_change() -> None:
    """50 pairs that all gained 0.05, tested at -0.01: the empty cell is a full loss.

    By hand: contrasts z = 0.06; the extreme a = -1 - (-0.01) = -0.99 takes the mass the
    KKT solution leaves, p_i = (1/n) a / (a - z) (each 0.99 / 1.05 / 50), so
    V = 0.942857 * 0.06^2 + 0.057143 * 0.99^2; the contrast total moves one pair's full
    change toward zero: mean = 0.06 - 1/50. With the cell at the largest change observed
    (+-0.05) the same data passed H1 (T = 0.06 / sqrt(0.0036 / 50), about 7.1)."""
    n = 50
    d = np.full(n, 0.05)
    test = score_test(d, np.ones(n), -0.01, bounds=(-1.0, 1.0))
    p = 0.99 / 1.05
    var = p * 0.06**2 + (1.0 - p) * 0.99**2
    assert test.statistic == pytest.approx((0.06 - 1.0 / n) / np.sqrt(var / n), rel=1e-9)
    assert not test.shows_greater


def test_a_cluster_of_replicates_can_lose_all_of_them() -> None:
    """Replicates: the test of cluster totals r x over r pairs is the test of the cluster
    means x (cells, statistic and correction scale by r), not of one replicate's change."""
    rng = np.random.default_rng(3)
    means = rng.choice(np.arange(-3, 4) / 3.0, size=40, p=[0.02, 0.03, 0.05, 0.6, 0.1,
                                                          0.1, 0.1])
    single = score_test(means, np.ones(40), -0.01, bounds=(-1.0, 1.0))
    clustered = score_test(3.0 * means, np.full(40, 3.0), -0.01, bounds=(-1.0, 1.0))
    assert clustered.statistic == pytest.approx(single.statistic, rel=1e-9)
    assert clustered.continuity == 3.0 and single.continuity == 1.0
    a = score_interval(means, np.ones(40), bounds=(-1.0, 1.0))
    b = score_interval(3.0 * means, np.full(40, 3.0), bounds=(-1.0, 1.0))
    assert a.low == pytest.approx(b.low, abs=1e-9) and a.high == pytest.approx(b.high, abs=1e-9)


def test_one_gained_replicate_does_not_pass_as_300_independent_pairs() -> None:
    """100 tasks x 3 replicates, one replicate of one task gained a full point."""
    num = np.zeros(100)
    num[0] = 1.0
    test = score_test(num, np.full(100, 3.0), -0.01, bounds=(-1.0, 1.0))
    assert not test.shows_greater
    interval = score_interval(num, np.full(100, 3.0), bounds=(-1.0, 1.0))
    assert interval.low is not None and interval.low < -0.03


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([-1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.0]),
                          st.sampled_from([0.0, 1.0, 2.0, 3.0])), min_size=1, max_size=60),
       st.integers(0, 2**32 - 1))
def test_distinct_clusters_are_numpys_unique_rows(rows: list[tuple[float, float]],
                                                 seed: int) -> None:
    # The distinct (num, den) rows, their order and counts are np.unique's over the rows
    # (the sums of the root finding run in this order), ties and signed zeros included.
    pairs = np.array(rows, dtype=np.float64)
    extra = np.random.default_rng(seed).random((len(rows), 2)).round(2)
    for data in (pairs, np.vstack([pairs, extra])):
        num, den = data[:, 0].copy(), data[:, 1].copy()
        expected, counts = np.unique(data, axis=0, return_counts=True)
        got_num, got_den, got_counts = _distinct(num, den)
        np.testing.assert_array_equal(got_num, expected[:, 0])
        np.testing.assert_array_equal(got_den, expected[:, 1])
        np.testing.assert_array_equal(got_counts, counts.astype(np.float64))
        assert got_counts.dtype == np.float64 and got_num.flags.c_contiguous


@pytest.mark.parametrize("case", range(40))
def test_each_bound_is_where_the_statistic_crosses_the_critical_value(case: int) -> None:
    # The bracket probes (the normal approximation's bound, then secants) change where
    # the search starts, never where it ends: at each bound the statistic equals the
    # critical value, bounded scales and unbounded ratios, small and large samples, with
    # the bound at the end of the scale when it is there.
    rng = np.random.default_rng(20261202 + case)
    n = int(rng.choice([12, 80, 600, 2500]))
    bounded = case % 2 == 0
    if bounded:
        num = np.clip(rng.normal(rng.uniform(-0.3, 0.3), rng.uniform(0.01, 0.6), n), -1, 1)
        den = np.ones(n)
        bounds: tuple[float, float] | None = (-1.0, 1.0)
    else:
        den = rng.integers(1, 4, n).astype(float)
        num = den * rng.uniform(0.0, rng.uniform(0.05, 1.0), n)
        bounds = None
    interval = score_interval(num, den, bounds=bounds)
    if interval.degenerate:
        return
    crit = t_quantile(0.975, n - 1)
    for bound, target in ((interval.low, crit), (interval.high, -crit)):
        assert bound is not None
        edge = bounds if bounds is not None else (float((num / den).min()),
                                                 float((num / den).max()))
        if bound in edge:
            continue
        t = score_test(num, den, bound, bounds=bounds).statistic
        assert t == pytest.approx(target, abs=1e-6)
