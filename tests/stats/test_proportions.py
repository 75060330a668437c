"""Wilson, Tango, Newcombe and exact McNemar against published and independent values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats as sps

from ctxbench.stats import (
    mcnemar_exact,
    newcombe_paired_interval,
    tango_paired_interval,
    wilson_interval,
)


def _wilson_reference(x: int, n: int, level: float) -> tuple[float, float]:
    """Wilson bounds as the roots of (p_hat - p)^2 = z^2 p (1 - p) / n (statsmodels' form)."""
    z = sps.norm.ppf(1 - (1 - level) / 2)
    p = x / n
    a = 1 + z * z / n
    b = -(2 * p + z * z / n)
    c = p * p
    disc = math.sqrt(max(0.0, b * b - 4 * a * c))
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


@pytest.mark.parametrize(("x", "n"), [(0, 10), (1, 10), (5, 10), (10, 10), (81, 263), (3, 1000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_matches_quadratic_roots(x: int, n: int, level: float) -> None:
    got = wilson_interval(x, n, level=level)
    low, high = _wilson_reference(x, n, level)
    assert got.low == pytest.approx(low, abs=1e-12)
    assert got.high == pytest.approx(high, abs=1e-12)
    assert got.estimate == x / n


def test_wilson_hand_worked_value() -> None:
    # 81 of 263, 95%: Wilson (1927) / Newcombe (1998a) example: 0.2553 to 0.3662.
    got = wilson_interval(81, 263)
    assert (round(got.low, 4), round(got.high, 4)) == (0.2553, 0.3662)


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="n: expected at least one trial"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="successes: expected at most n=3"):
        wilson_interval(4, 3)
    with pytest.raises(ValueError, match="level: expected a number in"):
        wilson_interval(1, 3, level=1.0)
    with pytest.raises(ValueError, match="successes: expected an integer >= 0"):
        wilson_interval(True, 3)  # type: ignore[arg-type]


def test_tango_matches_r_contingencytables_cavo_2012() -> None:
    # R: contingencytables::Tango_asymptotic_score_CI_paired_2x2(rbind(c(59, 6), c(16, 80)))
    # "score CI: estimate = -0.0621 (95% CI -0.1240 to -0.0054)" (package test suite).
    got = tango_paired_interval(6, 16, 161)
    assert round(got.estimate, 4) == -0.0621
    assert (round(got.low, 4), round(got.high, 4)) == (-0.1240, -0.0054)
    assert got.method == "tango_score"


def test_newcombe_matches_r_contingencytables_cavo_2012() -> None:
    # R: contingencytables::Newcombe_square_and_add_CI_paired_2x2(rbind(c(59, 6), c(16, 80)))
    # "estimate = -0.0621 (95% CI -0.1186 to -0.0046)" (package test suite).
    got = newcombe_paired_interval(6, 16, 161, both=59)
    assert (round(got.low, 4), round(got.high, 4)) == (-0.1186, -0.0046)


def test_newcombe_paper_example() -> None:
    # Newcombe (1998b), Table II, example with e=12, f=5, g=2, h=21 pairs: method 10
    # gives 0.0750 (-0.0594 to 0.2046).
    got = newcombe_paired_interval(5, 2, 40, both=12)
    assert (round(got.low, 4), round(got.high, 4)) == (-0.0594, 0.2046)
    mirrored = newcombe_paired_interval(2, 5, 40, both=12)
    assert (round(mirrored.low, 4), round(mirrored.high, 4)) == (-0.2046, 0.0594)


def _tango_score_reference(delta: float, b: int, c: int, n: int) -> float:
    """Tango's statistic with the restricted MLE found numerically (no closed form)."""
    # Maximise the multinomial log-likelihood of the discordant cells under
    # p12 - p21 = delta over p21 in its feasible range.
    lo, hi = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12

    def neg_loglik(q21: float) -> float:
        q12 = q21 + delta
        rest = 1 - q12 - q21
        return -(b * math.log(max(q12, 1e-300)) + c * math.log(max(q21, 1e-300))
                 + (n - b - c) * math.log(max(rest, 1e-300)))

    q = optimize.minimize_scalar(neg_loglik, bounds=(lo, hi), method="bounded",
                                 options={"xatol": 1e-13}).x
    return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize(("b", "c", "n"), [(6, 16, 161), (40, 20, 160), (3, 0, 25), (1, 7, 21)])
def test_tango_bounds_solve_the_score_equation(b: int, c: int, n: int) -> None:
    got = tango_paired_interval(b, c, n)
    z = sps.norm.ppf(0.975)
    assert _tango_score_reference(got.low, b, c, n) == pytest.approx(z, abs=1e-4)
    assert _tango_score_reference(got.high, b, c, n) == pytest.approx(-z, abs=1e-4)


def test_tango_no_discordant_pairs_and_extremes() -> None:
    none = tango_paired_interval(0, 0, 30)
    assert none.estimate == 0.0 and none.low < 0 < none.high
    assert tango_paired_interval(0, 10, 10).low == -1.0
    assert tango_paired_interval(10, 0, 10).high == 1.0


@given(st.integers(1, 400).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n)).flatmap(
        lambda t: st.tuples(st.just(t[0]), st.integers(0, t[1]), st.just(t[1])))))
def test_paired_intervals_contain_estimate(case: tuple[int, int, int]) -> None:
    n, b, discordant = case
    c = discordant - b
    for result in (tango_paired_interval(b, c, n), newcombe_paired_interval(b, c, n)):
        assert -1.0 <= result.low <= result.estimate + 1e-12
        assert result.estimate - 1e-12 <= result.high <= 1.0


def test_paired_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match=r"only_first \+ only_second: expected at most n=5"):
        tango_paired_interval(4, 2, 5)
    with pytest.raises(ValueError, match="n: expected at least one pair"):
        newcombe_paired_interval(0, 0, 0)
    with pytest.raises(ValueError, match="only_second: expected an integer >= 0"):
        tango_paired_interval(1, -1, 5)


@pytest.mark.parametrize(("b", "c"), [(0, 1), (5, 2), (6, 16), (0, 25), (30, 31), (100, 60),
                                      (1500, 1400), (3000, 2900)])
def test_mcnemar_matches_scipy_binomtest(b: int, c: int) -> None:
    expected = sps.binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact(b, c).p_value == pytest.approx(expected, rel=1e-9)


def test_mcnemar_published_value_and_edge_cases() -> None:
    # contingencytables::McNemar_exact_cond_test_paired_2x2 on Cavo 2012: P = 0.052479.
    assert round(mcnemar_exact(6, 16).p_value, 6) == 0.052479
    assert mcnemar_exact(0, 0).p_value == 1.0
    assert mcnemar_exact(7, 7).p_value == 1.0
    assert mcnemar_exact(0, 5).p_value == pytest.approx(2 / 32)


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_symmetric_and_bounded(b: int, c: int) -> None:
    p = mcnemar_exact(b, c).p_value
    assert p == mcnemar_exact(c, b).p_value
    assert 0.0 < p <= 1.0


def test_results_are_frozen() -> None:
    result = wilson_interval(1, 2)
    with pytest.raises(AttributeError):
        result.low = 0.0  # type: ignore[misc]
    assert np.isclose(result.estimate, 0.5)


@pytest.mark.slow
def test_simulated_coverage_of_paired_and_wilson_intervals() -> None:
    """Coverage over 3000 simulated tables stays near the nominal 95%."""
    rng = np.random.default_rng(2024)
    n, probs = 80, np.array([0.45, 0.12, 0.05, 0.38])  # both, first only, second only, none
    truth = probs[1] - probs[2]
    hits = {"tango": 0, "newcombe": 0, "wilson": 0}
    sims = 3000
    for table in rng.multinomial(n, probs, size=sims):
        both, b, c, _ = (int(v) for v in table)
        tango = tango_paired_interval(b, c, n)
        newcombe = newcombe_paired_interval(b, c, n, both=both)
        wilson = wilson_interval(both + b, n)
        hits["tango"] += tango.low <= truth <= tango.high
        hits["newcombe"] += newcombe.low <= truth <= newcombe.high
        hits["wilson"] += wilson.low <= probs[0] + probs[1] <= wilson.high
    for name, count in hits.items():
        assert 0.93 <= count / sims <= 0.975, (name, count / sims)
