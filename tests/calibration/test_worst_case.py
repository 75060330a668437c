"""The exact worst-case search: checked against brute force, and (slow) its verdicts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ctxbench.calibration.worst_case import (
    _SHARES,
    _grid,
    _three_point,
    _two_point,
    markdown_worst,
    type_i_exact,
    type_i_fast,
    worst_case,
    worst_json,
)
from ctxbench.stats.score import score_test


@pytest.mark.parametrize(("support", "probs"), [((-1.0, 0.95), (0.5, 0.5)),
                                                ((-0.5, 0.0, 0.3), (0.2, 0.5, 0.3))])
def test_exact_type_i_equals_brute_force_over_every_sample(
        support: tuple[float, ...], probs: tuple[float, ...]) -> None:
    """n = 10: every one of the k^10 ordered samples judged by score_test itself."""
    n = 10
    total = 0.0
    for counts in itertools.product(range(n + 1), repeat=len(support)):
        if sum(counts) != n:
            continue
        ways = math.factorial(n) / math.prod(math.factorial(c) for c in counts)
        p = ways * math.prod(q**c for q, c in zip(probs, counts, strict=True))
        x = np.repeat(np.array(support), counts)
        if score_test(x, np.ones(n), -0.01, bounds=(-1.0, 1.0)).shows_greater:
            total += p
    exact, skipped = type_i_exact(support, probs, n)
    assert exact == pytest.approx(total, abs=1e-12)
    assert skipped < 1e-9


def _sample_family() -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
    """Every 5th two-point and every 9th three-point distribution of the searched grids."""
    return [*_two_point(_grid(0), -0.01)[::5],
            *_three_point(_grid(0)[::4], -0.01, (0.5, 0.9, 0.97))[::9],
            *_three_point(_grid(1), -0.01, _SHARES)[::3],
            *_three_point(_grid(3), -0.01, (0.5, 0.9, 0.97))[::4]]


@pytest.mark.parametrize("n", [10, 20, 30])
def test_vectorized_type_i_equals_the_count_by_count_one(n: int) -> None:
    """type_i_fast judges every count vector as type_i_exact does (same value to 1e-12)."""
    family = _sample_family()
    assert len(family) > 60
    for support, probs in family:
        exact = type_i_exact(support, probs, n)
        fast = type_i_fast(support, probs, n)
        assert fast[0] == pytest.approx(exact[0], abs=1e-12), (support, probs)
        assert fast[1] == pytest.approx(exact[1], abs=1e-12), (support, probs)


@pytest.mark.slow
def test_vectorized_type_i_at_n_1000_matches_and_stays_within_goal() -> None:
    """Binary pairs, all discordant-ish, at n = 1000: both computations agree."""
    support, probs = (-1.0, 0.0, 1.0), (0.3, 0.41, 0.29)
    fast = type_i_fast(support, probs, 1000)
    assert fast[0] == pytest.approx(type_i_exact(support, probs, 1000)[0], abs=1e-12)
    assert fast[0] <= 0.025
    assert fast[1] < 1e-8


def test_a_point_without_mass_is_left_out() -> None:
    assert type_i_exact((-1.0, 0.0, 1.0), (0.505, 0.0, 0.495), 20) == pytest.approx(
        type_i_exact((-1.0, 1.0), (0.505, 0.495), 20))


def test_rows_render_and_serialize() -> None:
    rows = worst_case([10], points=2, replicates=3)
    assert rows[0].distributions == 12  # 3 points below -0.01 x 4 above on the k/3 lattice
    assert "| cef.H1-H3 | 10 | 3 binary | 2 | 12 |" in markdown_worst(rows)
    assert worst_json(rows)[0]["within_goal"] is (rows[0].type_i <= 0.025)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_two_or_three_point_distribution_breaks_the_bounded_gates_at_small_n() -> None:
    """A fast subset of ``ctxbench calibrate --worst-case`` (docs/statistics.md)."""
    rows = [*worst_case([10, 20, 50], points=2, replicates=0),
            *worst_case([10, 30], points=3, replicates=1, middles=_SHARES),
            *worst_case([10, 20], points=3, replicates=3)]
    assert max(r.type_i for r in rows) <= 0.025, markdown_worst(rows)
