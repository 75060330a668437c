"""Pricing snapshots: integer micro-USD arithmetic, tiers, reasoning rate, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.core import InputError, TokenUsage, blake3_file
from ctxbench.runner.pricing import Rates, cost_micro, load_pricing_snapshot

SNAPSHOT = {
    "schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai", "model": "m",
    "effective_date": "2026-01-15", "source_reference": "https://example.invalid/pricing",
    "rates_usd_per_million": {"uncached_input": 1.25, "cached_input": 0.125,
                              "cache_write": 0, "output": 10},
    "tiers": [{"above_prompt_tokens": 200000,
               "rates_usd_per_million": {"uncached_input": 2.5, "cached_input": 0.25,
                                         "cache_write": 0, "output": 15}}],
}


def write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_cost_is_exact_integer_micro_usd(tmp_path: Path) -> None:
    snap = load_pricing_snapshot(write(tmp_path, SNAPSHOT))
    usage = TokenUsage(uncached_input=86, cached_input=1920, output=44, reasoning=256)
    # input: 86*1.25 + 1920*0.125 = 107.5 + 240 = 347.5 -> 348 (half to even: 347.5 -> 348)
    # output: (44 + 256) * 10 = 3000 micro-USD
    assert snap.cost_micro(usage) == (348, 3000)
    assert snap.reference == "blake3:" + blake3_file(tmp_path / "p.json")
    assert snap.rates.reasoning == snap.rates.output == 10_000_000


def test_tier_applies_above_its_threshold(tmp_path: Path) -> None:
    snap = load_pricing_snapshot(write(tmp_path, SNAPSHOT))
    assert snap.cost_micro(TokenUsage(uncached_input=200000)) == (250000, 0)
    assert snap.cost_micro(TokenUsage(uncached_input=200001)) == (500002, 0)  # 500002.5 -> even


def test_half_to_even_rounding() -> None:
    rates = Rates(uncached_input=500_000, cached_input=0, cache_write=0, output=0, reasoning=0)
    assert cost_micro(rates, TokenUsage(uncached_input=1)) == (0, 0)   # 0.5 -> 0
    assert cost_micro(rates, TokenUsage(uncached_input=3)) == (2, 0)   # 1.5 -> 2


def test_reasoning_rate_may_differ(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(SNAPSHOT))
    doc["rates_usd_per_million"]["reasoning"] = 20
    snap = load_pricing_snapshot(write(tmp_path, doc))
    assert snap.cost_micro(TokenUsage(output=1000, reasoning=1000)) == (0, 30000)


@pytest.mark.parametrize(("change", "message"), [
    ({"effective_date": "Jan 2026"},
     'p.json: /effective_date: expected a date YYYY-MM-DD, got the string "Jan 2026"'),
    ({"schema_version": "v0"}, "p.json: /schema_version: expected one of "
     'ctxbench.pricing-snapshot.v1, got the string "v0"'),
    ({"rates_usd_per_million": {"uncached_input": -1, "cached_input": 0, "cache_write": 0,
                                "output": 1}},
     "p.json: /rates_usd_per_million/uncached_input: expected a number in "
     "[0, 9007199254740991], got the "
     "integer -1"),
    ({"source_reference": ""}, 'p.json: /source_reference: expected a non-blank string, got '
     'the string ""'),
    ({"tiers": [{"above_prompt_tokens": 5, "rates_usd_per_million": SNAPSHOT[
        "rates_usd_per_million"]}, {"above_prompt_tokens": 5, "rates_usd_per_million":
                                    SNAPSHOT["rates_usd_per_million"]}]},
     "p.json: /tiers/1/above_prompt_tokens: expected a threshold above the previous tier's "
     "(5), got the integer 5"),
    ({"price": 1}, "p.json: /price: expected no such field (it is not part of the format), "
     "got the unknown field 'price'"),
])
def test_snapshot_errors(tmp_path: Path, change: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as info:
        load_pricing_snapshot(write(tmp_path, {**SNAPSHOT, **change}))
    assert str(info.value) == message.replace("p.json", str(tmp_path / "p.json"))


def test_snapshot_schema_accepts_the_example(tmp_path: Path) -> None:
    from ctxbench.schemas import validator

    assert not list(validator("ctxbench.pricing-snapshot.v1").iter_errors(SNAPSHOT))


def test_cost_matches_exact_decimal_arithmetic() -> None:
    from decimal import ROUND_HALF_EVEN, Decimal

    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.integers(0, 10**9), st.integers(0, 10**6), st.integers(0, 10**6),
           st.integers(0, 10**6), st.integers(0, 10**6))
    def check(rate: int, uncached: int, cached: int, write: int, out: int) -> None:
        rates = Rates(rate, rate // 10, rate * 2, rate * 4, rate * 4)
        usage = TokenUsage(uncached, cached, write, out, 0)
        exact = (Decimal(rate) * uncached + Decimal(rate // 10) * cached +
                 Decimal(rate * 2) * write) / Decimal(10**6)
        assert cost_micro(rates, usage)[0] == int(exact.quantize(Decimal(1), ROUND_HALF_EVEN))

    check()


def test_snapshot_parser_accepts_or_locates(tmp_path: Path) -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.sampled_from(["provider", "model", "effective_date", "source_reference",
                            "rates_usd_per_million", "tiers", "currency"]),
           st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=4), st.booleans()))
    def check(field: str, value: object) -> None:
        doc = {**SNAPSHOT, field: value}
        try:
            load_pricing_snapshot(write(tmp_path, doc))
        except InputError as exc:
            assert str(exc).startswith(f"{tmp_path / 'p.json'}: /")

    check()
