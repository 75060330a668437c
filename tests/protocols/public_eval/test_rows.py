"""Row rules of public-eval files: every rejection with its located message."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core.errors import InputError
from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.public_eval.rows import (
    ALLOWED_FIELDS,
    check_row,
    read_rows,
    rows_from_lines,
)

GOOD: dict[str, Any] = {"instance_id": "django__django-11790", "resolved": True,
                        "tokens": 48210, "usd": 0.84, "latency_ms": 182000, "tool_calls": 27}


def _write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _error(tmp_path: Path, row: dict[str, Any]) -> str:
    path = _write(tmp_path, [GOOD, row])
    with pytest.raises(InputError) as info:
        read_rows(path, display="rows.jsonl")
    return str(info.value)


def test_protocol_example_row_loads(tmp_path: Path) -> None:
    table = read_rows(_write(tmp_path, [GOOD, {**GOOD, "instance_id": "x", "resolved": False}]))
    assert table.rows == 2
    assert table.instance_id.tolist() == ["django__django-11790", "x"]
    assert table.resolved.tolist() == [True, False]
    assert table.tokens.tolist() == [48210.0, 48210.0]
    assert table.metrics["usd"].tolist() == [0.84, 0.84]
    assert table.run.tolist() == [0, 0]
    assert table.line.tolist() == [1, 2]
    assert np.isnan(table.metrics["governance_usd"]).all()


@pytest.mark.parametrize(("row", "message"), [
    ({"resolved": True, "tokens": 1},
     "rows.jsonl:2: instance_id: expected a required field, got nothing (the field is missing)"),
    ({**GOOD, "instance_id": "  "},
     'rows.jsonl:2: instance_id: expected a non-blank string, got the string "  "'),
    ({**GOOD, "instance_id": 7},
     "rows.jsonl:2: instance_id: expected a non-blank string, got the integer 7"),
    ({**GOOD, "resolved": "false"},
     'rows.jsonl:2: resolved: expected a JSON boolean, got the string "false"'),
    ({**GOOD, "resolved": 1},
     "rows.jsonl:2: resolved: expected a JSON boolean, got the integer 1"),
    ({"instance_id": "a", "resolved": True},
     "rows.jsonl:2: tokens: expected a required field, got nothing (the field is missing)"),
    ({**GOOD, "tokens": -1},
     "rows.jsonl:2: tokens: expected an integer in [0, 9007199254740991], got the integer -1"),
    ({**GOOD, "tokens": 12.0},
     "rows.jsonl:2: tokens: expected an integer in [0, 9007199254740991], got the number 12.0"),
    ({**GOOD, "tokens": True},
     "rows.jsonl:2: tokens: expected an integer in [0, 9007199254740991], got the boolean true"),
    ({**GOOD, "tokens": "48210"},
     'rows.jsonl:2: tokens: expected an integer in [0, 9007199254740991], got the string '
     '"48210"'),
    ({**GOOD, "tokns": 5},
     "rows.jsonl:2: tokns: expected no such field (it is not part of the format), got the "
     "unknown field 'tokns'"),
    ({**GOOD, "usd": -0.5},
     "rows.jsonl:2: usd: expected a number in [0, 9000000000], got the number -0.5"),
    ({**GOOD, "usd": "0.84"},
     'rows.jsonl:2: usd: expected a number in [0, 9000000000], got the string "0.84"'),
    ({**GOOD, "usd": None},
     "rows.jsonl:2: usd: expected a number in [0, 9000000000], got null"),
    ({**GOOD, "usd": False},
     "rows.jsonl:2: usd: expected a number in [0, 9000000000], got the boolean false"),
    ({**GOOD, "usd": 10**20},
     "rows.jsonl:2: usd: expected a number in [0, 9000000000], "
     "got the integer 100000000000000000000"),
    ({**GOOD, "latency_ms": -3},
     "rows.jsonl:2: latency_ms: expected a number in [0, 9007199254740991], got the "
     "integer -3"),
    ({**GOOD, "tool_calls": 2.5},
     "rows.jsonl:2: tool_calls: expected an integer in [0, 9007199254740991], got the "
     "number 2.5"),
    ({**GOOD, "run": -1},
     "rows.jsonl:2: run: expected an integer in [0, 9007199254740991], got the integer -1"),
    ({**GOOD, "usd_measured": "yes"},
     'rows.jsonl:2: usd_measured: expected a JSON boolean, got the string "yes"'),
    ({"instance_id": "a", "resolved": True, "tokens": 1, "usd_measured": True},
     "rows.jsonl:2: usd: expected a number >= 0 (the row says usd_measured is true), got "
     "nothing (the field is missing)"),
    ({**GOOD, "false_stops": 1},
     "rows.jsonl:2: reviewed_stops: expected a required field when false_stops is given, got "
     "nothing (the field is missing)"),
    ({**GOOD, "false_stops": 3, "reviewed_stops": 2},
     "rows.jsonl:2: false_stops: expected an integer <= reviewed_stops (2), got the integer 3"),
    ({**GOOD, "governance_usd": math.nan},
     "rows.jsonl:2: /governance_usd: expected finite JSON numbers, got the non-finite number NaN"),
    ({**GOOD, "tokens": 10, "total_tokens": 10, "input_tokens": 10},
     "rows.jsonl:2: cached_input_tokens: expected a required field when total_tokens is "
     "given, got nothing (the field is missing)"),
    ({**GOOD, "tokens": 10, "total_tokens": 11, "input_tokens": 4, "cached_input_tokens": 3,
      "output_tokens": 2, "reasoning_tokens": 1},
     "rows.jsonl:2: total_tokens: expected the sum of input_tokens, cached_input_tokens, "
     "output_tokens and reasoning_tokens (10), got the integer 11"),
    ({**GOOD, "tokens": 9, "total_tokens": 10, "input_tokens": 4, "cached_input_tokens": 3,
      "output_tokens": 2, "reasoning_tokens": 1},
     "rows.jsonl:2: tokens: expected total_tokens (10), got the integer 9"),
    ({**GOOD, "tokens": 9, "input_tokens": 4, "cached_input_tokens": 3, "output_tokens": 2,
      "reasoning_tokens": 1},
     "rows.jsonl:2: tokens: expected the sum of the token breakdown (10), got the integer 9"),
    ({**GOOD, "tokens": 5, "input_tokens": 4, "output_tokens": 2},
     "rows.jsonl:2: tokens: expected at least the sum of the given token breakdown fields (6), "
     "got the integer 5"),
    ({**GOOD, "reasoning_tokens": -2},
     "rows.jsonl:2: reasoning_tokens: expected an integer in [0, 9007199254740991], got the "
     "integer -2"),
])
def test_each_rejection_has_its_message(tmp_path: Path, row: dict[str, Any],
                                        message: str) -> None:
    assert _error(tmp_path, row) == message


def test_rejects_non_object_and_broken_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(GOOD) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"rows.jsonl:2: expected a JSON object, got an array"):
        read_rows(path, display="rows.jsonl")
    path.write_text('{"instance_id": "a", "instance_id": "b", "resolved": true, "tokens": 1}\n')
    with pytest.raises(InputError, match="instance_id: expected each key at most once"):
        read_rows(path)


def test_breakdown_that_adds_up_loads(tmp_path: Path) -> None:
    row = {**GOOD, "tokens": 10, "total_tokens": 10, "input_tokens": 4,
           "cached_input_tokens": 3, "output_tokens": 2, "reasoning_tokens": 1}
    table = read_rows(_write(tmp_path, [row]))
    assert table.metrics["total_tokens"].tolist() == [10.0]
    assert table.metrics["cached_input_tokens"].tolist() == [3.0]


def test_usd_measured_false_means_unknown_not_zero(tmp_path: Path) -> None:
    rows = [{**GOOD, "usd_measured": False}, {**GOOD, "instance_id": "b"},
            {"instance_id": "c", "resolved": False, "tokens": 1}]
    table = read_rows(_write(tmp_path, rows))
    usd = table.metrics["usd"]
    assert math.isnan(usd[0]) and usd[1] == 0.84 and math.isnan(usd[2])
    assert table.usd_unmeasured == 1


def test_every_allowed_field_is_a_real_field() -> None:
    assert "tokens" in ALLOWED_FIELDS and "run" in ALLOWED_FIELDS
    assert "tokns" not in ALLOWED_FIELDS
    assert {
        "instance_id", "resolved", "tokens", "run", "usd", "usd_measured", "latency_ms",
        "tool_calls", "repeated_calls", "governance_tokens", "governance_usd",
        "governance_latency_ms", "reviewed_stops", "false_stops", "input_tokens",
        "cached_input_tokens", "output_tokens", "reasoning_tokens",
        "total_tokens", "applied_denies"} == ALLOWED_FIELDS


def test_marginal_applied_denies_is_read_type_checked_and_listed(tmp_path: Path) -> None:
    rows = [{**GOOD, "applied_denies": 2}, {**GOOD, "instance_id": "b"}]
    table = read_rows(_write(tmp_path, rows))
    assert table.ignored_fields == ("applied_denies",)
    assert read_rows(_write(tmp_path, [GOOD])).ignored_fields == ()
    path = _write(tmp_path, [{**GOOD, "applied_denies": -1}])
    with pytest.raises(InputError) as info:
        read_rows(path)
    assert str(info.value) == (f"{path}:1: applied_denies: expected an integer in "
                               "[0, 9007199254740991], got the integer -1")


def test_count_above_two_to_the_53_is_rejected_with_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, [GOOD, {**GOOD, "instance_id": "b", "tokens": 2**53}])
    with pytest.raises(InputError) as info:
        read_rows(path)
    assert str(info.value).startswith(f"{path}:2: tokens: expected an integer")


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 2**60), st.floats(allow_nan=False,
                                                              allow_infinity=False),
    st.text(max_size=5), st.lists(st.integers(), max_size=2),
)
_KEYS = st.sampled_from(sorted(ALLOWED_FIELDS | {"tokns", "extra"}))


@given(st.dictionaries(_KEYS, _VALUES, max_size=8))
def test_fast_path_agrees_with_the_reference_rules(value: dict[str, Any]) -> None:
    """A row is accepted by the column builder exactly when check_row accepts it."""
    try:
        check_row(value, path="p", line=1)
        reference = None
    except InputError as exc:
        reference = str(exc)
    try:
        table = rows_from_lines([JsonLine("p", 1, value)], path="p")
        got = None
    except InputError as exc:
        got = str(exc)
        table = None
    assert got == reference
    if table is not None:
        assert table.tokens[0] == value["tokens"]
        assert table.resolved[0] is np.bool_(value["resolved"])


@given(st.fixed_dictionaries(
    {"instance_id": st.text(min_size=1).filter(str.strip), "resolved": st.booleans(),
     "tokens": st.integers(0, 2**53 - 1)},
    optional={"usd": st.floats(0, 1e9), "latency_ms": st.integers(0, 10**9),
              "tool_calls": st.integers(0, 10**6), "run": st.integers(0, 100)}))
def test_valid_rows_round_trip(value: dict[str, Any]) -> None:
    table = rows_from_lines([JsonLine("p", 3, value)], path="p")
    assert table.instance_id[0] == value["instance_id"]
    assert table.run[0] == value.get("run", 0)
    for name in ("usd", "latency_ms", "tool_calls"):
        if name in value:
            assert table.metrics[name][0] == float(value[name])
        else:
            assert math.isnan(table.metrics[name][0])


def test_row_schema_agrees_on_types_and_names() -> None:
    from ctxbench.schemas import available_schemas, validator

    assert "ctxbench.public-eval-row.v1" in available_schemas()
    assert "ctxbench.public-eval-report.v1" in available_schemas()
    schema = validator("ctxbench.public-eval-row.v1")
    assert list(schema.iter_errors(GOOD)) == []
    assert list(schema.iter_errors({**GOOD, "run": 2, "usd_measured": False})) == []
    for bad in ({**GOOD, "tokns": 1}, {**GOOD, "resolved": "false"},
                {**GOOD, "tokens": True}, {**GOOD, "tokens": 1.5}, {"resolved": True}):
        assert list(schema.iter_errors(bad)) != []


def _tables_equal(first: Any, second: Any) -> None:
    assert first.path == second.path and first.rows == second.rows
    assert first.usd_unmeasured == second.usd_unmeasured
    assert first.ignored_fields == second.ignored_fields
    for name in ("instance_id", "run", "line", "resolved", "tokens"):
        a, b = getattr(first, name), getattr(second, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b)
    assert list(first.metrics) == list(second.metrics)
    for name in first.metrics:
        np.testing.assert_array_equal(first.metrics[name], second.metrics[name])


_SIMPLE_VALUES = st.one_of(st.booleans(), st.integers(-2, 2**53 + 1), st.floats(0, 1e10),
                           st.just(-0.5), st.text(max_size=3), st.none())
_SIMPLE_ROW = st.fixed_dictionaries(
    {"instance_id": st.one_of(st.sampled_from(["a", "b", " ", ""]), _SIMPLE_VALUES),
     "resolved": st.one_of(st.booleans(), _SIMPLE_VALUES),
     "tokens": st.one_of(st.integers(0, 2**53 - 1), _SIMPLE_VALUES)},
    optional={"usd": _SIMPLE_VALUES, "latency_ms": _SIMPLE_VALUES,
              "tool_calls": _SIMPLE_VALUES, "run": _SIMPLE_VALUES,
              "governance_tokens": st.integers(0, 9), "usd_measured": st.booleans()})


@given(st.lists(st.one_of(st.just(GOOD), _SIMPLE_ROW), min_size=1, max_size=6))
def test_whole_file_columns_agree_with_the_row_path(rows: list[dict[str, Any]]) -> None:
    """The column-at-a-time builder of a whole file gives the row path's table, or
    declines (None) wherever the row path would refuse a row or needs its rare fields."""
    from ctxbench.core.jsonl import lines_of
    from ctxbench.protocols.public_eval.rows import _simple_columns

    try:
        reference = rows_from_lines(lines_of(rows, "p"), path="p")
    except InputError:
        reference = None
    fast = _simple_columns(rows, path="p")
    if reference is None:
        assert fast is None
    elif fast is not None:
        _tables_equal(fast, reference)
    if all(set(row) <= set(GOOD) | {"run"} for row in rows) and reference is not None:
        assert fast is not None, "a valid file of the simple shape took the row path"


def test_whole_file_columns_cover_the_mixed_shapes(tmp_path: Path) -> None:
    rows = [GOOD, {"instance_id": "b", "resolved": False, "tokens": 0, "run": 2},
            {**GOOD, "instance_id": "c", "usd": 3, "tool_calls": 0},
            {"instance_id": "d", "resolved": True, "tokens": 2**53 - 1, "latency_ms": 1.5}]
    path = _write(tmp_path, rows)
    table = read_rows(path, display="rows.jsonl")
    reference = rows_from_lines([JsonLine("rows.jsonl", i, row) for i, row in
                                 enumerate(rows, 1)], path="rows.jsonl")
    _tables_equal(table, reference)
    assert table.run.tolist() == [0, 2, 0, 0]
    assert np.isnan(table.metrics["usd"][1]) and table.metrics["usd"][2] == 3.0
