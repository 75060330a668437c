"""RFC 8785 (JCS) canonical JSON: golden vectors from the RFC and invariance properties.

Sources of the golden vectors (RFC 8785, "JSON Canonicalization Scheme", June 2020):
- §3.2.2 "Serialization of Primitive Data Types": the sample input object and its
  canonical output (numbers, string escaping, literals);
- §3.2.3 "Sorting of Object Properties": the seven-key object whose keys sort by UTF-16
  code units, so the non-BMP key U+1F600 (surrogates D83D DE00) sorts before U+FB33;
- Appendix B "Number Serialization Samples": IEEE-754 bit patterns and their
  ECMAScript serialization.
"""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError, canonical_json

# RFC 8785 Appendix B: (IEEE-754 double as hex, canonical text)
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),  # minus zero
    ("0000000000000001", "5e-324"),  # min positive subnormal
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),  # max double
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),  # 2**53 as a float is fine
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),  # 2**68
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), APPENDIX_B)
def test_rfc8785_appendix_b_numbers(bits: str, text: str) -> None:
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert canonical_json(value) == text.encode("ascii")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (-0.0, "0"),
        (4.50, "4.5"),
        (2e-3, "0.002"),
        (1e30, "1e+30"),
        (1.0, "1"),
        (0.1, "0.1"),
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
    ],
)
def test_ecmascript_number_formatting(value: float, text: str) -> None:
    assert canonical_json(value) == text.encode("ascii")


# RFC 8785 §3.2.2: the sample input, as JSON text, and its canonical form.
RFC_3_2_2_INPUT = r"""{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
RFC_3_2_2_OUTPUT = (
    '{"literals":[null,true,false],'
    '"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
)


def test_rfc8785_section_3_2_2_sample() -> None:
    assert canonical_json(json.loads(RFC_3_2_2_INPUT)) == RFC_3_2_2_OUTPUT.encode("utf-8")


# RFC 8785 §3.2.3: property sorting by UTF-16 code units.
RFC_3_2_3_INPUT = r"""{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"""
RFC_3_2_3_ORDER = [
    "Carriage Return",
    "One",
    "Control",
    "Latin Small Letter O With Diaeresis",
    "Euro Sign",
    "Emoji: Grinning Face",
    "Hebrew Letter Dalet With Dagesh",
]


def test_rfc8785_section_3_2_3_key_order_by_utf16_code_units() -> None:
    out = canonical_json(json.loads(RFC_3_2_3_INPUT))
    values = list(json.loads(out).values())
    assert values == RFC_3_2_3_ORDER
    # Code-point order would put U+1F600 last; UTF-16 order puts it before U+FB33.
    assert out.index("\U0001f600".encode()) < out.index("\ufb33".encode())
    assert out.startswith(b'{"\\r":"Carriage Return","1":"One","\xc2\x80":"Control"')


def test_no_whitespace_and_utf8_output() -> None:
    assert canonical_json({"b": [1, 2], "a": {"y": "é", "x": None}}) == (
        '{"a":{"x":null,"y":"é"},"b":[1,2]}'.encode()
    )
    assert canonical_json("\u2028") == '"\u2028"'.encode()
    assert canonical_json("\x1f") == b'"\\u001f"'


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**64, {"a": [2**53]}])
def test_integers_beyond_2_53_minus_1_are_refused(value: Any) -> None:
    with pytest.raises(InputError, match=r"^canonical JSON: integer outside \+/-\(2\*\*53 - 1\)"):
        canonical_json(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {"a": [1.0, math.nan]}])
def test_non_finite_floats_are_refused(value: Any) -> None:
    with pytest.raises(InputError, match=r"^canonical JSON: non-finite number"):
        canonical_json(value)


@pytest.mark.parametrize("value", [{1: "a"}, b"bytes", {"a": object()}])
def test_other_unserializable_values_are_input_errors(value: Any) -> None:
    with pytest.raises(InputError, match=r"^canonical JSON: "):
        canonical_json(value)


_keys = st.text(max_size=6)  # includes non-BMP characters and surrogate-free text
_safe_ints = st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
_leaf = (
    st.none() | st.booleans() | _safe_ints
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
)
_json = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=15,
)


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = [(k, _shuffled(v, rnd)) for k, v in value.items()]
        rnd.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@given(value=_json, seed=st.integers(min_value=0, max_value=2**32))
def test_canonical_form_ignores_key_order(value: Any, seed: int) -> None:
    assert canonical_json(_shuffled(value, random.Random(seed))) == canonical_json(value)


@given(value=_json)
def test_canonical_form_reparses_to_the_same_value_and_is_a_fixed_point(value: Any) -> None:
    out = canonical_json(value)
    parsed = json.loads(out)
    assert _same(parsed, value)
    assert b"\n" not in out
    # An integral float >= 2**53 is written as plain digits, which Python re-reads as an
    # int that the integer rule then refuses; the fixed point holds for everything else.
    if all(not isinstance(leaf, int) or abs(leaf) < 2**53 for leaf in _leaves(parsed)):
        assert canonical_json(parsed) == out


def _same(parsed: Any, value: Any) -> bool:
    """Equal as JSON values: a float written as integer digits re-reads as an int."""
    if isinstance(value, float):
        return isinstance(parsed, int | float) and float(parsed) == value
    if isinstance(value, dict):
        return (isinstance(parsed, dict) and parsed.keys() == value.keys()
                and all(_same(parsed[k], value[k]) for k in value))
    if isinstance(value, list):
        return (isinstance(parsed, list) and len(parsed) == len(value)
                and all(_same(a, b) for a, b in zip(parsed, value, strict=True)))
    return type(parsed) is type(value) and parsed == value


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_integral_float_beyond_2_53_does_not_survive_a_python_reparse() -> None:
    # Documents the limit above: 2.0**53 is accepted as a float, but its canonical text
    # parses back as the int 2**53, which is outside the RFC's safe integer range.
    out = canonical_json(2.0**53)
    assert out == b"9007199254740992"
    with pytest.raises(InputError, match="integer outside"):
        canonical_json(json.loads(out))
