"""The prompting-format parser and the canonical call text."""

from __future__ import annotations

import keyword

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.workloads import CallParseError, ToolCall, calls_from_native, parse_calls
from ctxbench.workloads.calls import EXPANSION, MAX_DEPTH, MAX_TEXT_CHARS, render_calls


def test_parse_the_prompting_format() -> None:
    calls = parse_calls("```\n[get_weather(city='Paris', days=3), uber.ride(loc=\"x\", "
                        "time=-2.5, ok=True, tags=['a', 'b'], opts={'k': None})]\n```")
    assert calls == (ToolCall("get_weather", {"city": "Paris", "days": 3}),
                     ToolCall("uber.ride", {"loc": "x", "time": -2.5, "ok": True,
                                            "tags": ["a", "b"], "opts": {"k": None}}))


def test_a_single_call_without_brackets_and_bfcl_value_forms() -> None:
    (call,) = parse_calls("math.gcd(a=x, b=f(), c=(1, 2), d=...)")
    assert call == ToolCall("math.gcd", {"a": "x", "b": "f()", "c": (1, 2), "d": "..."})


@pytest.mark.parametrize(("text", "calls"), [
    # BFCL's decoder reads keyword arguments only: a positional one leaves a call.
    ("[f('x')]", (ToolCall("f", {}),)),
    ("[f(1, a=2)]", (ToolCall("f", {"a": 2}),)),
    # An arithmetic expression is evaluated (BFCL: eval).
    ("[f(n=1+1, x=2*1.5, s='a' + 'b', l=[1] * 2, d=7 // 2, p=2 ** 3)]",
     (ToolCall("f", {"n": 2, "x": 3.0, "s": "ab", "l": [1, 1], "d": 3, "p": 8}),)),
    # BFCL negates a unary operator's number whatever the operator.
    ("[f(a=+5, b=-2.5, c=not 1, d=~3, e=-True)]",
     (ToolCall("f", {"a": -5, "b": -2.5, "c": -1, "d": -3, "e": -1}),)),
    ("[f(a=1, a=2)]", (ToolCall("f", {"a": 2}),)),
    ("[f(**kw)]", (ToolCall("f", {EXPANSION: "kw"}),)),
    ("[f(x=g(**kw))]", (ToolCall("f", {"x": {"g": {None: "kw"}}}),)),
    ("[f()(a=1), x[0].g(b=2)]", (ToolCall("", {"a": 1}), ToolCall("g", {"b": 2}))),
    ("[f(a=b'x', c=1j, s=data['k'][0])]",
     (ToolCall("f", {"a": b"x", "c": 1j, "s": "data['k'][0]"}),)),
    ("[f(n=(1 + 2) * -1, s='%s-%03d' % ('a', 7))]", (ToolCall("f", {"n": -3, "s": "a-007"}),)),
    ("[f(a=(1 < 2) + 1, b=(0 or 'x') + '', c=(1 if 0 else 2.5) * 2, d=f'{7:>3}' + '!')]",
     (ToolCall("f", {"a": 2, "b": "x", "c": 5.0, "d": "  7!"}),)),
])
def test_decoding_follows_bfcl(text: str, calls: tuple[ToolCall, ...]) -> None:
    assert parse_calls(text) == calls


@pytest.mark.parametrize(("text", "reason"), [
    ("The answer is 42.", "not Python call syntax"),
    ("[1, f(a=1)]", "not a call"),
    ("[f(a=math.pi)]", "unsupported value syntax"),
    ("[f(a={1, 2})]", "unsupported value syntax"),
    ("[f(a=lambda x: x)]", "lambda"),
    ("[f(a=-'x')]", "unary operator"),
    ("[f(a=-(1 + 1))]", "unary operator"),
    ("[f(a=1 / 0)]", "arithmetic fails"),
    ("[f(a='x' + 1)]", "arithmetic fails"),
    ("[f(a='%(x)s' % {})]", "arithmetic fails"),
    # Departures (BFCL's eval would run these): names, calls and formatting in arithmetic.
    ("[f(a=x + 1)]", "not a constant"),
    ("[f(a=len('ab') + 1)]", "not a constant"),
    ("[f(a=(None is None) + 0)]", "not a constant"),
    ("[f(a='%99999d' % 1)]", "beyond the bounds"),
    ("[f(a=10 ** 10 ** 10)]", "beyond the bounds"),
])
def test_what_fails_to_decode(text: str, reason: str) -> None:
    with pytest.raises(CallParseError, match=reason):
        parse_calls(text)


def test_arithmetic_of_one_answer_is_bounded_in_all() -> None:
    """Each result is bounded, and so is everything the answer's arithmetic produces."""
    with pytest.raises(CallParseError, match="beyond the bounds"):
        parse_calls("[f(a=[[0] * 60000] * 60000)]")
    with pytest.raises(CallParseError, match="beyond the bounds"):
        parse_calls("[f(a=[" + ", ".join(["[0] * 65000 + []"] * 600) + "])]")
    with pytest.raises(CallParseError, match="beyond the bounds"):
        parse_calls("[f(a=('%s' * 30) % (" + ", ".join(["'a' * 60000"] * 30) + "))]")
    (call,) = parse_calls("[f(a='a' * 30000 + '', b=[0] * 30000 + [])]")
    assert len(call.arguments["a"]) == len(call.arguments["b"]) == 30000


def test_code_in_a_value_is_text_never_run() -> None:
    (call,) = parse_calls("[f(a=__import__('os').system('x'))]")
    assert call.arguments == {"a": "__import__('os').system('x')"}


def test_bounds() -> None:
    with pytest.raises(CallParseError, match="longer than"):
        parse_calls("[f(a='" + "x" * MAX_TEXT_CHARS + "')]")
    deep = "[f(a=" + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + ")]"
    with pytest.raises(CallParseError, match="nest deeper"):
        parse_calls(deep)
    with pytest.raises(CallParseError):
        parse_calls("[f(a=" + "[" * 5000 + "]" * 5000 + ")]")


def test_native_calls_map_names_back() -> None:
    calls = calls_from_native([("uber_ride", '{"loc": "x"}'), ("f", {"a": 1}), ("g", "")],
                              {"uber_ride": "uber.ride"})
    assert render_calls(calls) == "[uber.ride(loc='x'), f(a=1), g()]"
    with pytest.raises(CallParseError, match="not a JSON object"):
        calls_from_native([("f", "[1]")])


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**9, 10**9) |
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) |
    st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
# Python keywords cannot name a call or an argument in the prompting format (nor in BFCL's).
_ident = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name))


@settings(derandomize=True)
@given(st.lists(st.tuples(st.lists(_ident, min_size=1, max_size=3),
                          st.dictionaries(_ident, _json, max_size=4)), max_size=4))
def test_render_then_parse_round_trips(raw: list[tuple[list[str], dict[str, object]]]) -> None:
    calls = tuple(ToolCall(".".join(parts), args) for parts, args in raw)
    assert parse_calls(render_calls(calls)) == calls


@settings(derandomize=True)
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_the_parse_error(text: str) -> None:
    try:
        calls = parse_calls(text)
    except CallParseError:
        return
    assert all(isinstance(c, ToolCall) for c in calls)
