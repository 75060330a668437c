"""BFCL's checker rules, one case each (bfcl_eval/eval_checker/ast_eval/ast_checker.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxbench.workloads import ToolCall, check_calls, check_relevance
from ctxbench.workloads.bfcl_checker import standardize_string

SCHEMA = {"name": "book", "parameters": {"type": "dict", "required": ["city", "nights"],
          "properties": {"city": {"type": "string"}, "nights": {"type": "integer"},
                         "price": {"type": "float"}, "late": {"type": "boolean"},
                         "tags": {"type": "array", "items": {"type": "string"}},
                         "pair": {"type": "tuple", "items": {"type": "integer"}},
                         "prefs": {"type": "dict"},
                         "rooms": {"type": "array", "items": {"type": "dict"}}}}}
TRUTH: dict[str, Any] = {"book": {
    "city": ["New York, NY", "NYC"], "nights": [2], "price": [100.0, ""],
    "late": [False, ""], "tags": [["Quiet", "high floor"], ""], "pair": [[1, 2], ""],
    "prefs": [{"bed": ["king"], "view": ["sea", ""]}, ""],
    "rooms": [[{"kind": ["double"]}], ""]}}


def check(**arguments: Any) -> tuple[bool, str]:
    result = check_calls("simple", [SCHEMA], [ToolCall("book", arguments)], [TRUTH])
    return result.valid, result.error_type


def test_strings_normalize_as_bfcl_does() -> None:
    assert standardize_string("New York, NY") == "newyorkny"
    assert check(city="new-york ny", nights=2) == (True, "")
    assert check(city="'NYC'", nights=2) == (False, "value_error")


def test_int_is_accepted_for_float_but_not_float_for_int() -> None:
    assert check(city="NYC", nights=2, price=100) == (True, "")
    assert check(city="NYC", nights=2.0) == (False, "type_error")
    assert check(city="NYC", nights=True) == (False, "type_error")


def test_required_optional_and_unknown_parameters() -> None:
    assert check(city="NYC") == (False, "missing_required")
    assert check(city="NYC", nights=2, late=False) == (True, "")
    assert check(city="NYC", nights=2, spa=True) == (False, "unexpected_param")


def test_lists_tuples_and_dicts() -> None:
    assert check(city="NYC", nights=2, tags=["quiet", "High-Floor"]) == (True, "")
    assert check(city="NYC", nights=2, tags=["high floor", "quiet"]) == (False, "value_error")
    assert check(city="NYC", nights=2, pair=(1, 2)) == (True, "")
    assert check(city="NYC", nights=2, prefs={"bed": "King"}) == (True, "")
    assert check(city="NYC", nights=2, prefs={"view": "sea"}) == (False, "value_error")
    assert check(city="NYC", nights=2, prefs={"bed": "king", "x": 1})[0] is False
    assert check(city="NYC", nights=2, rooms=[{"kind": "Double"}]) == (True, "")
    assert check(city="NYC", nights=2, rooms=[{"kind": "double"}] * 2)[0] is False


def test_a_variable_name_of_the_answer_type_is_accepted() -> None:
    schema = {"name": "f", "parameters": {"type": "dict", "required": ["n"],
              "properties": {"n": {"type": "integer"}}}}
    truth = [{"f": {"n": ["count"]}}]
    assert check_calls("simple", [schema], [ToolCall("f", {"n": "count"})], truth).valid
    assert not check_calls("simple", [schema], [ToolCall("f", {"n": "other"})], truth).valid


def test_parallel_is_order_free_and_multiple_needs_one_call() -> None:
    schema = {"name": "f", "parameters": {"type": "dict", "required": ["n"],
              "properties": {"n": {"type": "integer"}}}}
    truth = [{"f": {"n": [1]}}, {"f": {"n": [2]}}]
    calls = [ToolCall("f", {"n": 2}), ToolCall("f", {"n": 1})]
    assert check_calls("parallel", [schema], calls, truth).valid
    assert check_calls("parallel", [schema], calls[:1], truth).error_type == "wrong_count"
    assert not check_calls("multiple", [schema], calls, truth[:1]).valid


@pytest.mark.parametrize(("category", "calls", "valid"), [
    ("irrelevance", None, True), ("irrelevance", (), True),
    ("irrelevance", (ToolCall("f", {}),), False), ("live_relevance", None, False),
    ("live_relevance", (ToolCall("f", {}),), True)])
def test_relevance(category: str, calls: tuple[ToolCall, ...] | None, valid: bool) -> None:
    assert check_relevance(category, calls).valid is valid


ARRAYS = {"name": "fit", "parameters": {"type": "dict", "required": ["xs"], "properties": {
    "xs": {"type": "array", "items": {"type": "float"}},
    "ns": {"type": "array", "items": {"type": "integer"}},
    "grid": {"type": "array", "items": {"type": "array"}},
    "pair": {"type": "tuple", "items": {"type": "float"}},
    "tags": {"type": "array", "items": {"type": "string"}}}}}
ARRAYS_TRUTH: dict[str, Any] = {"fit": {
    "xs": [[1.0, 2.5]], "ns": [[1, 0], ""], "grid": [[[1, 2], [3]], ""],
    "pair": [[1.0, 2.0], ""], "tags": ["", []]}}


def fit(**arguments: Any) -> tuple[bool, str]:
    result = check_calls("simple", [ARRAYS], [ToolCall("fit", arguments)], [ARRAYS_TRUTH])
    return result.valid, result.error_type


def test_array_items_are_typed_one_level_deep_without_promotion() -> None:
    assert fit(xs=[1.0, 2.5]) == (True, "")
    # Equal values (1 == 1.0, True == 1), wrong item types: BFCL rejects them.
    assert fit(xs=[1, 2.5]) == (False, "type_error")
    required_ns = {"fit": {**ARRAYS_TRUTH["fit"], "ns": [[1, 0]]}}
    for ns, verdict in (([True, False], (False, "type_error")), ([1, 0], (True, ""))):
        result = check_calls("simple", [ARRAYS], [ToolCall("fit", {"xs": [1.0, 2.5],
                             "ns": ns})], [required_ns])
        assert (result.valid, result.error_type) == verdict
    # A scalar float parameter still takes an int (Python's promotion, as BFCL allows).
    assert check(city="NYC", nights=2, price=100) == (True, "")
    # Items of an array of arrays are only checked to be lists; deeper, values decide.
    assert fit(xs=[1.0, 2.5], grid=[[1, 2], [3]]) == (True, "")
    assert fit(xs=[1.0, 2.5], grid=[(1, 2), [3]]) == (False, "value_error")
    # A tuple is read as a list for a tuple parameter only.
    assert fit(xs=[1.0, 2.5], pair=(1.0, 2.0)) == (True, "")
    assert fit(xs=(1.0, 2.5)) == (False, "type_error")


def test_an_optional_array_lets_any_items_through_the_type_check() -> None:
    # An allowed "" passes BFCL's nested type check; the values decide (True == 1).
    assert fit(xs=[1.0, 2.5], ns=[True, False]) == (True, "")
    assert fit(xs=[1.0, 2.5], pair=(1, 2)) == (True, "")
    assert fit(xs=[1.0, 2.5], tags=[]) == (True, "")
    assert fit(xs=[1.0, 2.5], tags=[1]) == (False, "value_error")


def test_a_variable_of_the_answer_type_is_compared_exactly() -> None:
    schema = {"name": "f", "parameters": {"type": "dict", "required": ["x"],
              "properties": {"x": {"type": "array", "items": {"type": "float"}}}}}
    truth = [{"f": {"x": ["data['sales']"]}}]
    assert check_calls("simple", [schema], [ToolCall("f", {"x": "data['sales']"})],
                       truth).valid
    assert not check_calls("simple", [schema], [ToolCall("f", {"x": "Data['sales']"})],
                           truth).valid
    assert not check_calls("simple", [schema], [ToolCall("f", {"x": [1.0]})], truth).valid


def test_a_shape_bfcl_cannot_check_has_no_verdict() -> None:
    schema = {"name": "f", "parameters": {"type": "dict", "required": [],
              "properties": {"x": {"type": "array", "items": {"type": "dict"}}}}}
    truth = [{"f": {"x": [[{"k": ["v"]}], ""]}}]
    # BFCL's list_dict_checker calls .items() on the item 1 and raises.
    result = check_calls("simple", [schema], [ToolCall("f", {"x": [1]})], truth)
    assert (result.valid, result.error_type) == (False, "no_verdict")
    assert check_calls("simple", [schema], [ToolCall("f", {"x": [{"k": "V"}]})], truth).valid


def test_simple_uses_the_first_schema_and_multiple_counts_every_expected_call() -> None:
    other = {"name": "g", "parameters": {"type": "dict", "required": [], "properties": {}}}
    # BFCL's simple checker reads the first function offered, whatever the truth names.
    assert check_calls("simple", [other, SCHEMA], [ToolCall("book", {"city": "NYC",
                       "nights": 2})], [TRUTH]).error_type == "wrong_func_name"
    assert check_calls("multiple", [other, SCHEMA], [ToolCall("book", {"city": "NYC",
                       "nights": 2})], [TRUTH]).valid


@pytest.mark.parametrize(("category", "calls", "truth", "verdict"), [
    # No expected call: BFCL's parallel checker passes no calls; the others read truth[0].
    ("parallel", [], [], (True, "")),
    ("multiple", [], [], (False, "no_verdict")),
    ("simple", [ToolCall("book", {})], [], (False, "no_verdict")),
    # Ground truth BFCL does not ship: a parameter's allowed values not a list.
    ("simple", [ToolCall("book", {"city": "NYC", "nights": 2})],
     [{"book": {"city": "NYC", "nights": [2]}}], (False, "no_verdict")),
])
def test_ground_truth_bfcl_cannot_read(category: str, calls: list[ToolCall],
                                       truth: list[dict[str, Any]],
                                       verdict: tuple[bool, str]) -> None:
    result = check_calls(category, [SCHEMA], calls, truth)
    assert (result.valid, result.error_type) == verdict
