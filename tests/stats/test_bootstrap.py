"""bootstrap_totals: agreement with scipy, exact reproduction, invariances, edge cases.

Monte-Carlo tolerance used against ``scipy.stats.bootstrap``: both sides draw 20,000
resamples from independent streams, so their interval endpoints differ by Monte-Carlo
noise only. For a 2.5% / 97.5% quantile the standard error of one endpoint is about
``sqrt(0.025 * 0.975 / B) / phi(1.96) = 0.019`` bootstrap standard errors (SE), so the
difference of two independent endpoints has a standard deviation of about 0.027 SE. We
allow 0.10 SE for percentile intervals (about 3.7 standard deviations) and 0.15 SE for
BCa, whose endpoints also carry the Monte-Carlo noise of the bias correction z0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ctxbench.core import derive_rng
from ctxbench.stats import BootstrapEstimate, bootstrap_totals, distinct_resamples

B_REFERENCE = 20_000
PERCENTILE_TOL_SE = 0.10
BCA_TOL_SE = 0.15

FloatArray = np.ndarray


def ratio(totals: FloatArray) -> FloatArray:
    """Ratio of the first two column totals, NaN where the denominator is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (totals[:, 0] / totals[:, 1])[:, None]


def mean_difference(totals: FloatArray) -> FloatArray:
    """(sum a - sum b) / count, with columns (a, b, 1)."""
    return ((totals[:, 0] - totals[:, 1]) / totals[:, 2])[:, None]


def _paired_sample(n: int, seed: int) -> tuple[FloatArray, FloatArray]:
    rnd = np.random.default_rng(seed)
    base = rnd.lognormal(mean=6.0, sigma=0.8, size=n)  # skewed, like token counts
    cand = base * rnd.beta(5.0, 3.0, size=n) + rnd.normal(0.0, 20.0, size=n)
    return cand, base


def _close(ours: BootstrapEstimate, low: float, high: float, tol_se: float) -> None:
    assert ours.low is not None
    assert ours.high is not None
    assert ours.standard_error is not None
    tol = tol_se * ours.standard_error
    assert abs(ours.low - low) < tol, (ours.low, low, tol)
    assert abs(ours.high - high) < tol, (ours.high, high, tol)


# -- agreement with scipy ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_mean_difference_matches_scipy(method: str) -> None:
    a, b = _paired_sample(60, seed=11)
    sums = np.column_stack([a, b, np.ones_like(a)])
    (ours,) = bootstrap_totals(sums, mean_difference, rng=derive_rng(1, "t"),
                               n_resamples=B_REFERENCE, method=method)  # type: ignore[arg-type]
    ref = sps.bootstrap(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True, vectorized=True,
        n_resamples=B_REFERENCE, method="percentile" if method == "percentile" else "BCa",
        rng=np.random.default_rng(2),
    )
    assert ours.estimate == pytest.approx(float(np.mean(a - b)), rel=1e-12)
    assert ours.standard_error == pytest.approx(float(ref.standard_error), rel=0.05)
    _close(ours, float(ref.confidence_interval.low), float(ref.confidence_interval.high),
           PERCENTILE_TOL_SE if method == "percentile" else BCA_TOL_SE)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_ratio_of_totals_matches_scipy(method: str) -> None:
    cand, base = _paired_sample(80, seed=5)
    sums = np.column_stack([cand, base])
    (ours,) = bootstrap_totals(sums, ratio, rng=derive_rng(3, "ratio"),
                               n_resamples=B_REFERENCE, method=method)  # type: ignore[arg-type]
    ref = sps.bootstrap(
        (cand, base), lambda x, y, axis: np.sum(x, axis=axis) / np.sum(y, axis=axis),
        paired=True, vectorized=True, n_resamples=B_REFERENCE,
        method="percentile" if method == "percentile" else "BCa",
        rng=np.random.default_rng(4),
    )
    assert ours.estimate == pytest.approx(cand.sum() / base.sum(), rel=1e-12)
    assert ours.undefined_resamples == 0
    _close(ours, float(ref.confidence_interval.low), float(ref.confidence_interval.high),
           PERCENTILE_TOL_SE if method == "percentile" else BCA_TOL_SE)


def test_bca_differs_from_percentile_on_skewed_data() -> None:
    # Guards against BCa silently falling back to percentile levels.
    rnd = np.random.default_rng(9)
    x = rnd.exponential(1.0, size=40) ** 2
    sums = np.column_stack([x, np.ones_like(x)])
    (pct,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "s"), n_resamples=4000)
    (bca,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "s"), n_resamples=4000,
                              method="bca")
    assert pct.low is not None and bca.low is not None
    assert pct.high is not None and bca.high is not None
    assert bca.low > pct.low
    assert bca.high > pct.high
    assert bca.standard_error == pct.standard_error  # same resamples


# -- exact reproduction by an independent loop ----------------------------------------------


def _reference_draws(seed: int, name: str, n_resamples: int, n: int) -> np.ndarray:
    """The documented draw: one child stream, floor(uniform * n) per unit per resample."""
    (child,) = derive_rng(seed, name).spawn(1)
    return np.minimum(np.floor(child.random((n_resamples, n)) * n).astype(np.int64), n - 1)


def test_cluster_bootstrap_on_presummed_rows_equals_explicit_cluster_resampling() -> None:
    rnd = np.random.default_rng(21)
    n_clusters = 9
    cluster_of_row = np.repeat(np.arange(n_clusters), rnd.integers(1, 6, size=n_clusters))
    num = rnd.integers(0, 50, size=cluster_of_row.shape[0]).astype(float)
    den = rnd.integers(20, 60, size=cluster_of_row.shape[0]).astype(float)
    cluster_sums = np.array([[num[cluster_of_row == c].sum(), den[cluster_of_row == c].sum()]
                             for c in range(n_clusters)])
    n_resamples = 500
    (ours,) = bootstrap_totals(cluster_sums, ratio, rng=derive_rng(8, "cluster"),
                               n_resamples=n_resamples)

    # Independent reference: a Python loop that, for each resample, concatenates every
    # raw row of each drawn cluster and takes the ratio of the row totals.
    draws = _reference_draws(8, "cluster", n_resamples, n_clusters)
    values = []
    for picked in draws:
        rows = np.concatenate([np.flatnonzero(cluster_of_row == c) for c in picked])
        values.append(num[rows].sum() / den[rows].sum())
    ref = np.asarray(values)
    assert ours.estimate == num.sum() / den.sum()
    assert ours.low == pytest.approx(np.percentile(ref, 2.5), rel=1e-12)
    assert ours.high == pytest.approx(np.percentile(ref, 97.5), rel=1e-12)
    assert ours.standard_error == pytest.approx(np.std(ref, ddof=1), rel=1e-9)
    assert ours.n_units == n_clusters


def test_all_statistics_of_one_call_share_the_same_resamples() -> None:
    rnd = np.random.default_rng(2)
    sums = np.column_stack([rnd.normal(size=30), np.ones(30)])

    def mean_and_negated(totals: FloatArray) -> FloatArray:
        m = totals[:, 0] / totals[:, 1]
        return np.column_stack([m, -m, 2.0 * m])

    mean, neg, double = bootstrap_totals(sums, mean_and_negated, rng=derive_rng(1, "j"),
                                         n_resamples=999)
    assert neg.low == pytest.approx(-mean.high, rel=1e-12)  # type: ignore[operator]
    assert neg.high == pytest.approx(-mean.low, rel=1e-12)  # type: ignore[operator]
    assert double.low == pytest.approx(2 * mean.low, rel=1e-12)  # type: ignore[operator]
    assert neg.estimate == -mean.estimate


# -- invariances ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_batch_size_does_not_change_results_on_integer_data(method: str) -> None:
    rnd = np.random.default_rng(3)
    sums = np.column_stack([rnd.integers(0, 1000, 37), rnd.integers(1, 1000, 37)]).astype(float)
    strata = rnd.integers(0, 3, 37)
    for labels in (None, strata):
        results = [
            bootstrap_totals(sums, ratio, rng=derive_rng(4, "b"), n_resamples=1001,
                             method=method, strata=labels,  # type: ignore[arg-type]
                             batch_elements=batch)
            for batch in (1, 37 * 3 + 5, 10_000, 1 << 24)
        ]
        assert all(r == results[0] for r in results[1:])


def test_batch_size_changes_float_results_by_at_most_rounding() -> None:
    rnd = np.random.default_rng(4)
    sums = np.column_stack([rnd.normal(100, 30, 50), rnd.normal(200, 10, 50)])
    (small,) = bootstrap_totals(sums, ratio, rng=derive_rng(5, "f"), n_resamples=2000,
                                batch_elements=7)
    (default,) = bootstrap_totals(sums, ratio, rng=derive_rng(5, "f"), n_resamples=2000)
    for field in ("estimate", "low", "high", "standard_error"):
        assert getattr(small, field) == pytest.approx(getattr(default, field), abs=1e-9)
    assert small.undefined_resamples == default.undefined_resamples == 0


def test_same_rng_same_result_different_rng_different_result() -> None:
    sums = np.column_stack([np.arange(20.0), np.ones(20)])
    first = bootstrap_totals(sums, ratio, rng=derive_rng(1, "x"), n_resamples=500)
    again = bootstrap_totals(sums, ratio, rng=derive_rng(1, "x"), n_resamples=500)
    other = bootstrap_totals(sums, ratio, rng=derive_rng(1, "y"), n_resamples=500)
    assert first == again
    assert first != other
    assert first[0].estimate == other[0].estimate == 9.5


def test_stratified_resampling_keeps_every_stratum_size() -> None:
    strata = np.array([2, 0, 0, 1, 2, 2, 0, 1, 2, 2, 5])
    labels = np.unique(strata)
    one_hot = (strata[:, None] == labels[None, :]).astype(float)
    sizes = one_hot.sum(axis=0)  # [3, 2, 5, 1]

    def counts(totals: FloatArray) -> FloatArray:
        return totals

    stratified = bootstrap_totals(one_hot, counts, rng=derive_rng(2, "s"), n_resamples=3000,
                                  strata=strata)
    for est, size in zip(stratified, sizes, strict=True):
        assert (est.estimate, est.low, est.high, est.standard_error) == (size, size, size, 0.0)
    # Without strata the per-stratum counts do vary: the check above is not vacuous.
    plain = bootstrap_totals(one_hot, counts, rng=derive_rng(2, "s"), n_resamples=3000)
    assert all(est.low < est.estimate < est.high for est in plain[:3])  # type: ignore[operator]


def test_stratified_interval_is_narrower_when_strata_explain_the_variance() -> None:
    rnd = np.random.default_rng(6)
    strata = np.repeat([0, 1], 30)
    values = np.where(strata == 0, 10.0, 100.0) + rnd.normal(0, 1, 60)
    sums = np.column_stack([values, np.ones(60)])
    (plain,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "p"), n_resamples=2000)
    (strat,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "p"), n_resamples=2000,
                                strata=strata)
    assert strat.standard_error is not None and plain.standard_error is not None
    assert strat.standard_error < plain.standard_error / 5


# -- undefined statistics and degenerate samples ----------------------------------------------


def test_undefined_resamples_are_counted_and_excluded() -> None:
    # Only unit 0 has a non-zero denominator; a resample that misses it divides by 0.
    sums = np.array([[4.0, 2.0], [3.0, 0.0], [0.0, 0.0]])
    n_resamples = 2700
    (est,) = bootstrap_totals(sums, ratio, rng=derive_rng(6, "u"), n_resamples=n_resamples)
    draws = _reference_draws(6, "u", n_resamples, 3)
    expected_undefined = int(np.sum(~np.any(draws == 0, axis=1)))
    assert est.undefined_resamples == expected_undefined
    # P(unit 0 never drawn) = (2/3)**3 = 8/27; 800 expected, binomial sd about 24.
    assert abs(expected_undefined - n_resamples * 8 / 27) < 5 * math.sqrt(
        n_resamples * (8 / 27) * (19 / 27)
    )
    assert est.estimate == 3.5
    assert est.low is not None and est.high is not None
    assert 2.0 <= est.low <= est.high <= 3.5 * 3  # a finite, sensible interval


def test_statistic_never_defined_gives_no_interval() -> None:
    sums = np.array([[1.0, 0.0], [2.0, 0.0]])
    (est,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "n"), n_resamples=50)
    assert math.isinf(est.estimate)
    assert (est.low, est.high, est.standard_error) == (None, None, None)
    assert est.undefined_resamples == 50


def test_undefined_point_estimate_gives_no_interval() -> None:
    sums = np.array([[0.0, 0.0], [1.0, 1.0]])
    (est,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "p"), n_resamples=100)
    assert est.estimate == 1.0
    # Point defined; resamples drawing only unit 0 are undefined.
    assert 0 < est.undefined_resamples < 100

    def always_nan(totals: FloatArray) -> FloatArray:
        return np.full((totals.shape[0], 1), np.nan)

    (nan_est,) = bootstrap_totals(sums, always_nan, rng=derive_rng(0, "p"), n_resamples=10)
    assert math.isnan(nan_est.estimate)
    assert (nan_est.low, nan_est.high) == (None, None)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_single_unit_gives_a_zero_width_interval(method: str) -> None:
    # n = 1 has one distinct resample, so the interval says nothing; the protocol
    # analyzers enforce their own minimum sample sizes before reporting an interval.
    (est,) = bootstrap_totals(np.array([[6.0, 4.0]]), ratio, rng=derive_rng(0, "one"),
                              n_resamples=200, method=method)  # type: ignore[arg-type]
    assert (est.estimate, est.low, est.high, est.standard_error) == (1.5, 1.5, 1.5, 0.0)
    assert est.n_units == 1
    assert est.undefined_resamples == 0


def test_result_fields() -> None:
    (est,) = bootstrap_totals(np.column_stack([np.arange(5.0), np.ones(5)]), ratio,
                              rng=derive_rng(0, "r"), n_resamples=300, level=0.9, method="bca")
    assert (est.level, est.method, est.n_units, est.n_resamples) == (0.9, "bca", 5, 300)
    assert est.estimate == 2.0
    assert est.low is not None and est.high is not None
    assert est.low < 2.0 < est.high
    with pytest.raises(AttributeError):
        est.low = 0.0  # type: ignore[misc]


def test_wider_level_gives_a_wider_interval() -> None:
    sums = np.column_stack([np.random.default_rng(1).normal(size=40), np.ones(40)])
    (narrow,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "l"), n_resamples=2000,
                                 level=0.5)
    (wide,) = bootstrap_totals(sums, ratio, rng=derive_rng(0, "l"), n_resamples=2000,
                               level=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high  # type: ignore[operator]


# -- distinct resamples ----------------------------------------------------------------------


@pytest.mark.parametrize(("n", "count"), [(-1, 0), (0, 0), (1, 1), (2, 3), (3, 10), (4, 35),
                                          (5, 126), (10, 92378)])
def test_distinct_resamples(n: int, count: int) -> None:
    assert distinct_resamples(n) == count


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_distinct_resamples_counts_multisets(n: int) -> None:
    assert distinct_resamples(n) == sum(
        1 for _ in itertools.combinations_with_replacement(range(n), n)
    )


# -- input validation ------------------------------------------------------------------------

_OK = np.ones((3, 2))


@pytest.mark.parametrize(
    ("sums", "kwargs", "message"),
    [
        (np.ones(3), {}, r"^sums: expected a 2-D array \(units x columns\), got 1 dims$"),
        (np.ones((2, 2, 2)), {}, r"^sums: expected a 2-D array \(units x columns\), got 3 dims$"),
        (np.ones((0, 2)), {}, r"^sums: expected at least one resampling unit, got none$"),
        (np.array([[1.0, np.nan]]), {}, r"^sums: expected finite values, got NaN or infinity$"),
        (np.array([[1.0, np.inf]]), {}, r"^sums: expected finite values, got NaN or infinity$"),
        (_OK, {"n_resamples": 0}, r"^n_resamples: expected an integer >= 1, got 0$"),
        (_OK, {"n_resamples": -5}, r"^n_resamples: expected an integer >= 1, got -5$"),
        (_OK, {"n_resamples": True}, r"^n_resamples: expected an integer >= 1, got True$"),
        (_OK, {"n_resamples": 10.0}, r"^n_resamples: expected an integer >= 1, got 10\.0$"),
        (_OK, {"level": 0.0}, r"^level: expected a number in \(0, 1\), got 0\.0$"),
        (_OK, {"level": 1.0}, r"^level: expected a number in \(0, 1\), got 1\.0$"),
        (_OK, {"level": 95}, r"^level: expected a number in \(0, 1\), got 95$"),
        (_OK, {"level": math.nan}, r"^level: expected a number in \(0, 1\), got nan$"),
        (_OK, {"method": "basic"}, r"^method: expected 'percentile' or 'bca', got 'basic'$"),
        (_OK, {"method": "BCa"}, r"^method: expected 'percentile' or 'bca', got 'BCa'$"),
        (_OK, {"batch_elements": 0}, r"^batch_elements: expected an integer >= 1, got 0$"),
        (_OK, {"strata": np.array([0, 1])},
         r"^strata: expected one label per resampling unit$"),
        (_OK, {"strata": np.zeros((3, 1))},
         r"^strata: expected one label per resampling unit$"),
    ],
)
def test_input_validation(sums: FloatArray, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_totals(sums, ratio, rng=derive_rng(0, "v"), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "statistic",
    [
        lambda t: t[:, 0],  # 1-D
        lambda t: np.ones((2, 1)),  # wrong number of rows
    ],
)
def test_statistic_shape_is_checked(statistic: Callable[[FloatArray], FloatArray]) -> None:
    with pytest.raises(ValueError, match=r"^statistic: expected an array of shape \(k, s\)"):
        bootstrap_totals(_OK, statistic, rng=derive_rng(0, "v"))


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=30)
@given(
    values=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=12),
    seed=st.integers(min_value=0, max_value=2**32),
    batch=st.integers(min_value=1, max_value=200),
)
def test_interval_contains_estimate_range_and_is_batch_invariant(
    values: list[int], seed: int, batch: int
) -> None:
    sums = np.column_stack([np.asarray(values, dtype=float), np.ones(len(values))])
    (est,) = bootstrap_totals(sums, ratio, rng=derive_rng(seed, "p"), n_resamples=200,
                              batch_elements=batch)
    (ref,) = bootstrap_totals(sums, ratio, rng=derive_rng(seed, "p"), n_resamples=200)
    assert est == ref
    assert est.low is not None and est.high is not None
    assert min(values) <= est.low <= est.high <= max(values)
    assert est.estimate == pytest.approx(sum(values) / len(values), rel=1e-12)


def test_resampling_draws_need_no_clamp_below_the_unit_count() -> None:
    # The resampling loops take floor(u * n) without clamping it to n - 1: every n up to
    # 2**17, every power of two and its neighbours up to 2**52, and 10,000 large n.
    def draws_stay_below(n: int) -> bool:
        # The largest draw: floor(fl((1 - 2**-53) * n)).
        return math.floor(np.nextafter(1.0, 0.0) * float(n)) <= n - 1

    candidates = set(range(1, 1 << 17))
    for m in range(53):
        candidates.update({(1 << m) - 1, 1 << m, (1 << m) + 1})
    candidates.update(int(x) for x in np.random.default_rng(20261202).integers(
        1 << 17, 1 << 52, size=10_000))
    assert all(draws_stay_below(n) for n in candidates if 1 <= n < 1 << 53)
    # The largest double numpy's random() returns is 1 - 2**-53.
    assert np.nextafter(1.0, 0.0) == 1.0 - 2.0**-53
