"""Conditions in natural order: budgets sort as numbers, the baseline first."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.render.order import by_condition, natural_key


def test_budgets_sort_as_numbers_and_the_baseline_comes_first() -> None:
    names = ["compiled@1024", "raw", "compiled@128", "compiled@64", "bm25@2048", "bm25@256"]
    assert by_condition(names, str, "raw") == [
        "raw", "bm25@256", "bm25@2048", "compiled@64", "compiled@128", "compiled@1024"]
    assert by_condition(names, str) == sorted(names, key=natural_key)


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=8, unique=True))
def test_a_ladder_of_budgets_comes_out_in_numeric_order(budgets: list[int]) -> None:
    names = [f"compiled@{b}" for b in budgets]
    assert by_condition(names, str) == [f"compiled@{b}" for b in sorted(budgets)]
