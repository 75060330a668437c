"""Exact binary power, the normal-approximation size and the search over n."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ctxbench.stats.planning import binomial_pmf, exact_binary_power, normal_tasks, smallest_n


@settings(derandomize=True, max_examples=40)
@given(st.integers(0, 300), st.floats(0.0, 1.0, allow_subnormal=False))
def test_binomial_pmf_matches_scipy(n: int, p: float) -> None:
    assert np.allclose(binomial_pmf(n, p), sps.binom.pmf(np.arange(n + 1), n, p),
                       rtol=1e-9, atol=1e-300)


def _brute_force(n: int, p_gain: float, p_loss: float, passes: object) -> float:
    """Every (gains, losses) cell of the multinomial, summed (no search, no pruning)."""
    assert callable(passes)
    p_tie = 1.0 - p_gain - p_loss
    total = 0.0
    for g in range(n + 1):
        for loss in range(n + 1 - g):
            if passes(g, loss, n):
                total += sps.multinomial.pmf([g, loss, n - g - loss], n,
                                             [p_gain, p_loss, p_tie])
    return total


@pytest.mark.parametrize(("n", "p_gain", "p_loss"), [(12, 0.2, 0.1), (25, 0.05, 0.15),
                                                     (30, 0.3, 0.3)])
def test_exact_power_is_the_multinomial_sum(n: int, p_gain: float, p_loss: float) -> None:
    # A gate monotone in the gains: the net gain is shown above -n/10 with a slack that
    # grows with the discordant pairs (so the threshold moves with k, as a real gate's).
    def passes(g: int, loss: int, size: int) -> bool:
        return g - loss > -size / 10 + 1.5 * math.sqrt(g + loss)

    assert exact_binary_power(n, p_gain, p_loss, passes) == pytest.approx(
        _brute_force(n, p_gain, p_loss, passes), abs=1e-10)


def test_normal_tasks_is_the_textbook_formula() -> None:
    # ((1.959964 + 0.841621) * 0.3 / 0.05)^2 = 282.5 -> 283 (Julious 2004, eq. 9).
    assert normal_tasks(-0.05, 0.0, 0.3, level=0.95, power=0.8) == 283
    assert normal_tasks(-0.05, -0.05, 0.3, level=0.95, power=0.8) is None


def test_smallest_n_finds_the_first_size_reaching_the_target() -> None:
    def power(n: int) -> float:
        return 1.0 - math.exp(-n / 100.0)

    # 1 - exp(-n/100) >= 0.8  <=>  n >= 160.94
    assert smallest_n(power, 0.8, start=20, n_min=10, n_max=5000) == (161, power(161))
    assert smallest_n(power, 0.8, start=400, n_min=10, n_max=5000)[0] == 161  # type: ignore[index]
    assert smallest_n(power, 0.99999, start=20, n_min=10, n_max=500) is None


def test_normal_tasks_beyond_any_study_is_none_not_an_overflow() -> None:
    # An H4 gate of a seed run gave a spread of 4e303 (a near-zero critical value): the
    # square overflowed inside the analysis and no report was written.
    from ctxbench.stats.planning import normal_tasks

    assert normal_tasks(0.0, 0.9557, 4.1135e303, level=0.95, power=0.8) is None
    assert normal_tasks(0.0, 0.5, 1e6, level=0.95, power=0.8) is None
    assert normal_tasks(0.0, 0.5, 1.0, level=0.95, power=0.8) == 32
