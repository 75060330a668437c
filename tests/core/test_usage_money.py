"""Token usage breakdown and integer micro-USD money."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import TokenUsage, micro_to_usd, usd_to_micro
from ctxbench.core.money import MICRO_PER_USD


def test_token_usage_defaults_and_totals() -> None:
    assert TokenUsage() == TokenUsage(0, 0, 0, 0, 0)
    usage = TokenUsage(uncached_input=100, cached_input=30, cache_write=5, output=20,
                       reasoning=7)
    assert usage.context_tokens == 135
    assert usage.total_output == 27
    assert usage.total == 162
    assert usage.as_dict() == {
        "uncached_input_tokens": 100,
        "cached_input_tokens": 30,
        "cache_write_tokens": 5,
        "output_tokens": 20,
        "reasoning_tokens": 7,
    }


def test_token_usage_sum() -> None:
    a = TokenUsage(1, 2, 3, 4, 5)
    b = TokenUsage(10, 20, 30, 40, 50)
    assert a + b == TokenUsage(11, 22, 33, 44, 55)
    assert sum([a, b], TokenUsage()) == TokenUsage(11, 22, 33, 44, 55)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"uncached_input": -1}, "TokenUsage.uncached_input: expected an integer >= 0, got -1"),
        ({"cached_input": True}, "TokenUsage.cached_input: expected an integer >= 0, got True"),
        ({"cache_write": 1.0}, "TokenUsage.cache_write: expected an integer >= 0, got 1.0"),
        ({"output": "3"}, "TokenUsage.output: expected an integer >= 0, got '3'"),
        ({"reasoning": None}, "TokenUsage.reasoning: expected an integer >= 0, got None"),
    ],
)
def test_token_usage_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        TokenUsage(**kwargs)
    assert str(info.value) == message


def test_token_usage_is_frozen() -> None:
    usage = TokenUsage(1)
    with pytest.raises(AttributeError):
        usage.output = 3  # type: ignore[misc]


_counts = st.integers(min_value=0, max_value=10**12)
_usages = st.builds(TokenUsage, _counts, _counts, _counts, _counts, _counts)


@given(_usages, _usages)
def test_token_usage_sum_is_fieldwise(a: TokenUsage, b: TokenUsage) -> None:
    total = a + b
    assert total.context_tokens == a.context_tokens + b.context_tokens
    assert total.total_output == a.total_output + b.total_output
    assert total.total == a.total + b.total
    assert total == b + a


@pytest.mark.parametrize(
    ("usd", "micro"),
    [
        (0.1, 100_000),  # binary 0.1 is not exact; going through str makes it so
        (0.3, 300_000),
        (1, 1_000_000),
        (0, 0),
        (-0.25, -250_000),
        (123456.789012, 123_456_789_012),
        (1e-07, 0),  # 0.1 micro-USD rounds down
        ("0.0000005", 0),  # half to even: 0.5 -> 0
        ("0.0000015", 2),  # 1.5 -> 2
        ("0.0000025", 2),  # 2.5 -> 2
        (3.5e-06, 4),  # 3.5 -> 4
        ("-0.0000015", -2),
        ("-0.0000005", 0),
        (Decimal("1.2345675"), 1_234_568),
        (Decimal("1.2345665"), 1_234_566),
        ("12.34", 12_340_000),
        (1e25, 10**31),  # beyond the default 28-digit decimal context
        ("0.12345678901234567890123456789", 123_457),
    ],
)
def test_usd_to_micro(usd: Any, micro: int) -> None:
    assert usd_to_micro(usd) == micro
    assert isinstance(usd_to_micro(usd), int)


@pytest.mark.parametrize(
    ("usd", "message"),
    [
        (True, "usd_to_micro: expected a number, got a boolean"),
        (False, "usd_to_micro: expected a number, got a boolean"),
        (float("nan"), "usd_to_micro: expected a finite number, got nan"),
        (float("inf"), "usd_to_micro: expected a finite number, got inf"),
        (float("-inf"), "usd_to_micro: expected a finite number, got -inf"),
        ("NaN", "usd_to_micro: expected a finite number, got 'NaN'"),
        (Decimal("Infinity"), "usd_to_micro: expected a finite number, got Decimal('Infinity')"),
        ("abc", "usd_to_micro: expected a number, got 'abc'"),
        ("", "usd_to_micro: expected a number, got ''"),
        (None, "usd_to_micro: expected a number, got None"),
        (1e300, "usd_to_micro: expected an amount of at most 64 digits in micro-USD, got 1e+300"),
    ],
)
def test_usd_to_micro_rejects(usd: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        usd_to_micro(usd)
    assert str(info.value) == message


def test_micro_to_usd() -> None:
    assert MICRO_PER_USD == 1_000_000
    assert micro_to_usd(100_000) == 0.1
    assert micro_to_usd(0) == 0.0
    assert micro_to_usd(-2_500_000) == -2.5


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_micro_round_trips_through_float_usd(micro: int) -> None:
    assert usd_to_micro(micro_to_usd(micro)) == micro


@given(st.integers(min_value=-(10**9), max_value=10**9), st.integers(min_value=0, max_value=9))
def test_usd_to_micro_is_exact_on_decimal_strings(whole_micro: int, extra: int) -> None:
    # A 7th decimal digit decides the rounding; exact halves go to the even neighbour.
    sign = "-" if whole_micro < 0 else ""
    magnitude = abs(whole_micro)
    text = f"{sign}{magnitude // 10**6}.{magnitude % 10**6:06d}{extra}"
    rounds_down = extra < 5 or (extra == 5 and magnitude % 2 == 0)
    expected = magnitude if rounds_down else magnitude + 1
    assert usd_to_micro(text) == (-expected if sign else expected)
