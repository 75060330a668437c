"""distinct_codes / distinct_pairs give np.unique's answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.stats.distinct import distinct_codes, distinct_pairs

_codes = st.lists(st.integers(-5, 40), max_size=60)


@given(values=_codes)
def test_distinct_codes_is_np_unique(values: list[int]) -> None:
    array = np.array(values, dtype=np.int64)
    assert distinct_codes(array).tolist() == np.unique(array).tolist()


@given(pairs=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4)), min_size=1,
                      max_size=60))
def test_distinct_pairs_is_np_unique_by_rows(pairs: list[tuple[int, int]]) -> None:
    first = np.array([a for a, _ in pairs], dtype=np.int64)
    second = np.array([b for _, b in pairs], dtype=np.int64)
    expected = np.unique(np.column_stack([first, second]), axis=0)
    assert distinct_pairs(first, second).tolist() == expected.tolist()


def test_distinct_pairs_orders_by_the_first_then_the_second() -> None:
    got = distinct_pairs(np.array([2, 1, 2, 1, 2]), np.array([0, 3, 0, 1, 1]))
    assert got.tolist() == [[1, 1], [1, 3], [2, 0], [2, 1]]
