"""Typed field access: what each accessor accepts, rejects, and the exact message."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import MISSING, FieldError, Fields, InputError, PointerError


def line_fields(value: dict[str, Any]) -> Fields:
    return Fields(value, path="t.jsonl", line=7)


def doc_fields(value: dict[str, Any], pointer: str = "/tasks/0") -> Fields:
    return Fields(value, path="b.json", pointer=pointer)


def message(call: Any) -> str:
    with pytest.raises(InputError) as info:
        call()
    return str(info.value)


MISSING_TEXT = "nothing (the field is missing)"

# -- strings -----------------------------------------------------------------------------


def test_string_accepts_strings() -> None:
    f = line_fields({"s": "hello", "blank": "  ", "n": None})
    assert f.string("s") == "hello"
    assert f.req_string("s") == "hello"
    assert f.string("blank", nonblank=False) == "  "
    assert f.req_string("blank", nonblank=False) == "  "
    assert f.string("n", nullable=True) is None
    assert f.string("absent", optional=True) is None


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (1, "the integer 1"),
        (True, "the boolean true"),
        (None, "null"),
        (["a"], "an array"),
        ({"a": 1}, "an object"),
        ("", 'the string ""'),
        (" \t\n", 'the string " \t\\n"'),
    ],
)
def test_string_rejects(value: Any, got: str) -> None:
    f = line_fields({"s": value})
    assert message(lambda: f.string("s")) == f"t.jsonl:7: s: expected a non-blank string, got {got}"


def test_string_variants_in_expected_text() -> None:
    f = line_fields({"s": 3})
    assert message(lambda: f.string("s", nonblank=False)) == (
        "t.jsonl:7: s: expected a string, got the integer 3"
    )
    assert message(lambda: f.string("s", nullable=True)) == (
        "t.jsonl:7: s: expected a non-blank string or null, got the integer 3"
    )
    assert message(lambda: f.string("s", nonblank=False, nullable=True)) == (
        "t.jsonl:7: s: expected a string or null, got the integer 3"
    )


def test_missing_required_field() -> None:
    f = line_fields({})
    expected = "t.jsonl:7: x: expected a required field, got " + MISSING_TEXT
    for call in (
        lambda: f.string("x"),
        lambda: f.req_string("x"),
        lambda: f.integer("x"),
        lambda: f.req_int("x"),
        lambda: f.number("x"),
        lambda: f.req_number("x"),
        lambda: f.boolean("x"),
        lambda: f.req_bool("x"),
        lambda: f.enum("x", ["a"]),
        lambda: f.req_enum("x", ["a"]),
        lambda: f.matching("x", re.compile("a"), "an a"),
        lambda: f.obj("x"),
        lambda: f.array("x"),
        # nullable does not make a field optional: null must be written out.
        lambda: f.string("x", nullable=True),
        lambda: f.integer("x", nullable=True),
    ):
        assert message(call) == expected


# -- integers ----------------------------------------------------------------------------


def test_integer_accepts_integers_in_range() -> None:
    f = line_fields({"i": 5, "z": 0, "neg": -3, "big": 2**70, "n": None})
    assert f.integer("i") == 5
    assert f.req_int("i", minimum=5, maximum=5) == 5
    assert f.req_int("z", minimum=0) == 0
    assert f.integer("neg") == -3
    assert f.integer("big") == 2**70
    assert f.integer("n", nullable=True) is None
    assert f.integer("absent", optional=True) is None


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (True, "the boolean true"),
        (False, "the boolean false"),
        (1.0, "the number 1.0"),
        (2.5, "the number 2.5"),
        ("3", 'the string "3"'),
        (None, "null"),
        ([1], "an array"),
    ],
)
def test_integer_rejects_non_integers(value: Any, got: str) -> None:
    f = line_fields({"i": value})
    assert message(lambda: f.integer("i")) == f"t.jsonl:7: i: expected an integer, got {got}"


@pytest.mark.parametrize(
    ("kwargs", "value", "expected"),
    [
        ({"minimum": 0}, -1, "an integer >= 0"),
        ({"maximum": 10}, 11, "an integer <= 10"),
        ({"minimum": 1, "maximum": 3}, 0, "an integer in [1, 3]"),
        ({"minimum": 1, "maximum": 3}, 4, "an integer in [1, 3]"),
    ],
)
def test_integer_range(kwargs: dict[str, int], value: int, expected: str) -> None:
    f = line_fields({"i": value})
    assert message(lambda: f.integer("i", **kwargs)) == (
        f"t.jsonl:7: i: expected {expected}, got the integer {value}"
    )


def test_integer_nullable_text() -> None:
    f = line_fields({"i": "x"})
    assert message(lambda: f.integer("i", minimum=0, nullable=True)) == (
        't.jsonl:7: i: expected an integer >= 0 or null, got the string "x"'
    )


# -- numbers -----------------------------------------------------------------------------


def test_number_accepts_ints_and_floats_and_returns_float() -> None:
    f = line_fields({"a": 3, "b": 2.5, "c": 0, "n": None})
    assert f.number("a") == 3.0
    assert isinstance(f.number("a"), float)
    assert f.req_number("b", minimum=0, maximum=2.5) == 2.5
    assert f.req_number("c", minimum=0.0) == 0.0
    assert f.number("n", nullable=True) is None
    assert f.number("absent", optional=True) is None


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (True, "the boolean true"),
        ("1.5", 'the string "1.5"'),
        (None, "null"),
        ({}, "an object"),
        (float("nan"), "the non-finite number nan"),
        (float("inf"), "the non-finite number inf"),
        (float("-inf"), "the non-finite number -inf"),
        # Too large for a float: before the fix this escaped as OverflowError.
        (10**400, "an integer of 401 digits"),
    ],
)
def test_number_rejects(value: Any, got: str) -> None:
    f = line_fields({"x": value})
    assert message(lambda: f.number("x")) == f"t.jsonl:7: x: expected a number, got {got}"


@pytest.mark.parametrize(
    ("kwargs", "value", "expected", "got"),
    [
        ({"minimum": 0}, -0.5, "a number >= 0", "the number -0.5"),
        ({"maximum": 1}, 1.5, "a number <= 1", "the number 1.5"),
        ({"minimum": 0, "maximum": 1}, 2, "a number in [0, 1]", "the integer 2"),
        ({"minimum": 0.5}, 0.25, "a number >= 0.5", "the number 0.25"),
    ],
)
def test_number_range(kwargs: dict[str, float], value: float, expected: str, got: str) -> None:
    f = line_fields({"x": value})
    assert message(lambda: f.number("x", **kwargs)) == (
        f"t.jsonl:7: x: expected {expected}, got {got}"
    )
    assert message(lambda: f.number("x", nullable=True, **kwargs)) == (
        f"t.jsonl:7: x: expected {expected} or null, got {got}"
    )


# -- booleans, enums, patterns, objects, arrays ------------------------------------------


def test_boolean() -> None:
    f = line_fields({"t": True, "f": False, "n": None, "s": "false", "i": 0, "one": 1})
    assert f.boolean("t") is True
    assert f.req_bool("f") is False
    assert f.boolean("n", nullable=True) is None
    assert f.boolean("absent", optional=True) is None
    assert message(lambda: f.boolean("s")) == (
        't.jsonl:7: s: expected a JSON boolean, got the string "false"'
    )
    assert message(lambda: f.boolean("i")) == (
        "t.jsonl:7: i: expected a JSON boolean, got the integer 0"
    )
    assert message(lambda: f.boolean("one", nullable=True)) == (
        "t.jsonl:7: one: expected a JSON boolean or null, got the integer 1"
    )
    assert message(lambda: f.boolean("n")) == "t.jsonl:7: n: expected a JSON boolean, got null"


def test_enum() -> None:
    f = line_fields({"o": "success", "bad": "Success", "n": None, "i": 1})
    assert f.enum("o", ["success", "error"]) == "success"
    assert f.req_enum("o", ("success", "error")) == "success"
    assert f.enum("n", ["a"], nullable=True) is None
    assert f.enum("absent", ["a"], optional=True) is None
    assert message(lambda: f.enum("bad", ["success", "error"])) == (
        't.jsonl:7: bad: expected one of success, error, got the string "Success"'
    )
    assert message(lambda: f.enum("i", ["success", "error"], nullable=True)) == (
        "t.jsonl:7: i: expected one of success, error or null, got the integer 1"
    )


def test_enum_with_a_set_lists_choices_sorted() -> None:
    # Sets iterate in hash order, which changes between runs; the message must not.
    f = line_fields({"o": "x"})
    assert message(lambda: f.enum("o", {"zeta", "alpha", "mid"})) == (
        't.jsonl:7: o: expected one of alpha, mid, zeta, got the string "x"'
    )
    assert message(lambda: f.enum("o", frozenset({"b", "a"}))) == (
        't.jsonl:7: o: expected one of a, b, got the string "x"'
    )


def test_matching() -> None:
    pattern = re.compile(r"ctx_[0-9a-f]{16,}")
    f = line_fields({"ok": "ctx_" + "a" * 16, "short": "ctx_abc", "n": None, "i": 5,
                     "prefix": "ctx_" + "a" * 16 + "Z"})
    assert f.matching("ok", pattern, "ctx_ and hex") == "ctx_" + "a" * 16
    assert f.matching("n", pattern, "ctx_ and hex", nullable=True) is None
    assert f.matching("absent", pattern, "ctx_ and hex", optional=True) is None
    assert message(lambda: f.matching("short", pattern, "ctx_ and hex")) == (
        't.jsonl:7: short: expected ctx_ and hex, got the string "ctx_abc"'
    )
    # fullmatch, not search: trailing junk is rejected.
    assert "prefix: expected ctx_ and hex, got" in message(
        lambda: f.matching("prefix", pattern, "ctx_ and hex")
    )
    assert message(lambda: f.matching("i", pattern, "ctx_ and hex", nullable=True)) == (
        "t.jsonl:7: i: expected ctx_ and hex or null, got the integer 5"
    )


def test_obj_and_array() -> None:
    f = line_fields({"o": {"a": 1}, "a": [1], "n": None, "s": "x"})
    assert f.obj("o") == {"a": 1}
    assert f.obj("n", nullable=True) is None
    assert f.obj("absent", optional=True) is None
    assert f.array("a") == [1]
    assert f.array("absent", optional=True) is None
    assert message(lambda: f.obj("a")) == "t.jsonl:7: a: expected a JSON object, got an array"
    assert message(lambda: f.obj("n")) == "t.jsonl:7: n: expected a JSON object, got null"
    assert message(lambda: f.array("o")) == "t.jsonl:7: o: expected a JSON array, got an object"
    assert message(lambda: f.array("n")) == "t.jsonl:7: n: expected a JSON array, got null"
    assert message(lambda: f.array("s")) == (
        't.jsonl:7: s: expected a JSON array, got the string "x"'
    )


# -- shape -------------------------------------------------------------------------------


def test_only_names_the_first_unknown_field_in_sorted_order() -> None:
    f = line_fields({"a": 1, "zz": 2, "b": 3, "c": 4})
    f_ok = line_fields({"a": 1})
    f_ok.only({"a", "b"})
    assert message(lambda: f.only({"a", "c"})) == (
        "t.jsonl:7: b: expected no such field (it is not part of the format), "
        "got the unknown field 'b'"
    )


def test_require_reports_the_first_missing_in_given_order() -> None:
    f = line_fields({"a": 1})
    f.require(["a"])
    assert message(lambda: f.require(["a", "z", "b"])) == (
        f"t.jsonl:7: z: expected a required field, got {MISSING_TEXT}"
    )


def test_has_raw_and_missing_sentinel() -> None:
    f = line_fields({"a": None})
    assert f.has("a")
    assert not f.has("b")
    assert f.raw("a") is None
    assert f.raw("b") is MISSING
    assert repr(MISSING) == "MISSING"


def test_error_builds_without_raising_and_fail_raises() -> None:
    f = line_fields({})
    err = f.error("x", "an integer", "1")
    assert isinstance(err, FieldError)
    assert str(err) == 't.jsonl:7: x: expected an integer, got the string "1"'
    assert str(f.error("x", "an integer")) == (
        f"t.jsonl:7: x: expected an integer, got {MISSING_TEXT}"
    )
    assert str(f.error(None, "a JSON object", got_text="junk")) == (
        "t.jsonl:7: expected a JSON object, got junk"
    )
    with pytest.raises(FieldError, match=r"^t\.jsonl:7: y: expected z, got null$"):
        f.fail("y", "z", None)


def test_without_a_line_the_error_has_only_the_file() -> None:
    f = Fields({"x": "1"}, path="cfg.toml")
    assert message(lambda: f.integer("x")) == 'cfg.toml: x: expected an integer, got the string "1"'


# -- nested (outer.inner) ------------------------------------------------------------------


def test_child_names_nested_fields_outer_dot_inner() -> None:
    f = line_fields({"usage": {"input": "12", "extra": 1}})
    usage = f.child("usage", f.obj("usage") or {})
    assert message(lambda: usage.integer("input")) == (
        't.jsonl:7: usage.input: expected an integer, got the string "12"'
    )
    assert message(lambda: usage.integer("output")) == (
        f"t.jsonl:7: usage.output: expected a required field, got {MISSING_TEXT}"
    )
    assert message(lambda: usage.require(["input", "output"])) == (
        f"t.jsonl:7: usage.output: expected a required field, got {MISSING_TEXT}"
    )
    assert message(lambda: usage.only({"input"})) == (
        "t.jsonl:7: usage.extra: expected no such field (it is not part of the format), "
        "got the unknown field 'extra'"
    )
    assert str(usage.error("input", "x", 1)) == (
        "t.jsonl:7: usage.input: expected x, got the integer 1"
    )


def test_grandchild_names_chain() -> None:
    f = line_fields({"a": {"b": {"c": True}}})
    a = f.child("a", {"b": {"c": True}})
    b = a.child(a.name("b"), {"c": True})
    assert message(lambda: b.integer("c")) == (
        "t.jsonl:7: a.b.c: expected an integer, got the boolean true"
    )


# -- pointer mode --------------------------------------------------------------------------


def test_pointer_mode_renders_file_pointer() -> None:
    f = doc_fields({"query": None, "budget": 1.5, "a/b": 1, "t~x": "s"})
    assert message(lambda: f.string("query")) == (
        "b.json: /tasks/0/query: expected a non-blank string, got null"
    )
    assert message(lambda: f.integer("budget", minimum=1)) == (
        "b.json: /tasks/0/budget: expected an integer >= 1, got the number 1.5"
    )
    assert message(lambda: f.string("missing")) == (
        f"b.json: /tasks/0/missing: expected a required field, got {MISSING_TEXT}"
    )
    assert message(lambda: f.boolean("a/b")) == (
        "b.json: /tasks/0/a~1b: expected a JSON boolean, got the integer 1"
    )
    assert message(lambda: f.integer("t~x")) == (
        'b.json: /tasks/0/t~0x: expected an integer, got the string "s"'
    )
    assert isinstance(f.error("query", "x"), PointerError)


def test_pointer_mode_root_and_no_field() -> None:
    f = doc_fields({"z": 1}, pointer="/")
    assert message(lambda: f.string("z")) == (
        "b.json: /z: expected a non-blank string, got the integer 1"
    )
    assert message(lambda: f.only(set())) == (
        "b.json: /z: expected no such field (it is not part of the format), "
        "got the unknown field 'z'"
    )
    assert str(f.error(None, "an object", [1])) == "b.json: /: expected an object, got an array"


def test_pointer_mode_child() -> None:
    f = doc_fields({"policy": {"allowed": "public"}}, pointer="/")
    policy = f.child("policy", {"allowed": "public"})
    assert message(lambda: policy.array("allowed")) == (
        'b.json: /policy/allowed: expected a JSON array, got the string "public"'
    )
    items = policy.child("allowed", {"k": 0})
    assert message(lambda: items.boolean("k")) == (
        "b.json: /policy/allowed/k: expected a JSON boolean, got the integer 0"
    )


# -- properties ----------------------------------------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)


@given(value=_json_scalars | st.lists(st.integers(), max_size=2)
       | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
def test_accessors_never_coerce(value: Any) -> None:
    f = line_fields({"v": value})
    outcomes: dict[str, Any] = {}
    for name, call in {
        "integer": lambda: f.integer("v"),
        "number": lambda: f.number("v"),
        "boolean": lambda: f.boolean("v"),
        "string": lambda: f.string("v", nonblank=False),
        "obj": lambda: f.obj("v"),
        "array": lambda: f.array("v"),
    }.items():
        try:
            outcomes[name] = call()
        except FieldError as exc:
            assert exc.line == 7
            assert exc.field == "v"
            outcomes[name] = None
    is_bool = isinstance(value, bool)
    assert (outcomes["integer"] is not None) == (isinstance(value, int) and not is_bool)
    assert (outcomes["number"] is not None) == (isinstance(value, int | float) and not is_bool)
    assert (outcomes["boolean"] is not None) == is_bool
    assert (outcomes["string"] is not None) == isinstance(value, str)
    assert (outcomes["obj"] is not None) == isinstance(value, dict)
    assert (outcomes["array"] is not None) == isinstance(value, list)
    if outcomes["string"] is not None:
        assert outcomes["string"] == value
    if outcomes["integer"] is not None:
        assert outcomes["integer"] == value


@given(st.integers(min_value=-1000, max_value=1000), st.integers(min_value=-10, max_value=10),
       st.integers(min_value=0, max_value=20))
def test_integer_range_property(value: int, low: int, width: int) -> None:
    f = line_fields({"i": value})
    high = low + width
    if low <= value <= high:
        assert f.integer("i", minimum=low, maximum=high) == value
    else:
        with pytest.raises(FieldError) as info:
            f.integer("i", minimum=low, maximum=high)
        assert str(info.value) == (
            f"t.jsonl:7: i: expected an integer in [{low}, {high}], got the integer {value}"
        )
