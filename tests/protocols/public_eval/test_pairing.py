"""Cells (instance_id, run): unique per file, identical across files."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.core.errors import InputError
from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.public_eval.pairing import _sorted_codes, pair_rows
from ctxbench.protocols.public_eval.rows import RowTable, rows_from_lines


def _table(path: str, rows: list[dict[str, Any]]) -> RowTable:
    return rows_from_lines([JsonLine(path, i + 1, r) for i, r in enumerate(rows)], path=path)


def _row(iid: str, run: int | None = None, resolved: bool = True,
         tokens: int = 10) -> dict[str, Any]:
    row: dict[str, Any] = {"instance_id": iid, "resolved": resolved, "tokens": tokens}
    if run is not None:
        row["run"] = run
    return row


def test_pairs_by_cell_regardless_of_line_order() -> None:
    base = _table("b.jsonl", [_row("b", tokens=2), _row("a", tokens=1), _row("a", 1, tokens=3)])
    treat = _table("t.jsonl", [_row("a", 1, False, 30), _row("b", tokens=20), _row("a", tokens=10)])
    cells = pair_rows(base, treat)
    assert cells.instance_ids.tolist() == ["a", "b"]
    assert cells.instance.tolist() == [0, 0, 1]
    assert cells.run.tolist() == [0, 1, 0]
    assert cells.baseline.tokens.tolist() == [1.0, 3.0, 2.0]
    assert cells.treatment.tokens.tolist() == [10.0, 30.0, 20.0]
    assert cells.treatment.resolved.tolist() == [True, False, True]
    assert (cells.tasks, cells.cells) == (2, 3)


def test_run_absent_means_run_zero() -> None:
    cells = pair_rows(_table("b", [_row("a", 0)]), _table("t", [_row("a")]))
    assert cells.cells == 1


def test_duplicate_cell_is_rejected_at_its_second_line() -> None:
    base = _table("b.jsonl", [_row("a"), _row("b"), _row("a", 0)])
    with pytest.raises(InputError) as info:
        pair_rows(base, _table("t.jsonl", [_row("a"), _row("b")]))
    assert str(info.value) == ('b.jsonl:3: instance_id: expected each (instance_id, run) cell '
                               'at most once, got "a" run 0 again (first on line 1)')


def test_duplicate_in_treatment_is_rejected() -> None:
    treat = _table("t.jsonl", [_row("a", 2), _row("a", 2)])
    with pytest.raises(InputError, match=r'^t.jsonl:2: instance_id: .* "a" run 2 again'):
        pair_rows(_table("b.jsonl", [_row("a", 2)]), treat)


def test_mismatched_cells_list_both_sides() -> None:
    base = _table("b.jsonl", [_row("a"), _row("b"), _row("c", 1)])
    treat = _table("t.jsonl", [_row("a"), _row("c", 2), _row("d")])
    with pytest.raises(InputError) as info:
        pair_rows(base, treat)
    assert str(info.value) == (
        'b.jsonl, t.jsonl: expected the same (instance_id, run) cells in both files, got '
        '2 only in b.jsonl: "b" run 0, "c" run 1; 2 only in t.jsonl: "c" run 2, "d" run 0')


def test_mismatch_shows_first_20_and_a_count() -> None:
    base = _table("b.jsonl", [_row(f"x{i:02d}") for i in range(25)] + [_row("z")])
    treat = _table("t.jsonl", [_row("z")])
    with pytest.raises(InputError) as info:
        pair_rows(base, treat)
    message = str(info.value)
    assert "got 25 only in b.jsonl: " in message
    assert '"x19" run 0 and 5 more' in message
    assert '"x20"' not in message
    assert "only in t.jsonl" not in message


def test_empty_file_is_rejected() -> None:
    with pytest.raises(InputError, match=r"^t\.jsonl: expected at least one row, got an empty"):
        pair_rows(_table("b.jsonl", [_row("a")]), _table("t.jsonl", []))


def test_ids_differing_only_by_trailing_nul_stay_distinct() -> None:
    # numpy's fixed-width strings drop trailing NULs; ids must never be merged that way.
    base = _table("b.jsonl", [_row("a", tokens=1), _row("a\x00", tokens=2)])
    treat = _table("t.jsonl", [_row("a\x00", tokens=20), _row("a", tokens=10)])
    cells = pair_rows(base, treat)
    assert cells.instance_ids.tolist() == ["a", "a\x00"]
    assert cells.baseline.tokens.tolist() == [1.0, 2.0]
    assert cells.treatment.tokens.tolist() == [10.0, 20.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=40),
       st.lists(st.text(min_size=1, max_size=6), min_size=0, max_size=40))
def test_distinct_id_codes_are_numpys_unique(first: list[str], second: list[str]) -> None:
    a = np.array(first, dtype=object)
    b = np.array(second, dtype=object)
    names, codes = _sorted_codes(a, b)
    want_names, want_codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    assert names.tolist() == want_names.tolist()
    assert codes.tolist() == want_codes.reshape(-1).tolist()
    assert codes.dtype == np.int64 and names.dtype == object
