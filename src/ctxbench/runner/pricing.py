"""Pricing snapshots: declared, immutable per-million-token rates, charged in micro-USD.

    {"schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai",
     "model": "gpt-4o-mini", "effective_date": "2026-01-15",
     "source_reference": "https://... (page and retrieval date)",
     "rates_usd_per_million": {"uncached_input": 0.15, "cached_input": 0.075,
                               "cache_write": 0.0, "output": 0.6},
     "tiers": [{"above_prompt_tokens": 200000, "rates_usd_per_million": {...}}]}

Reasoning tokens are billed at the ``output`` rate unless ``reasoning`` is given. A tier
applies when the prompt (context) tokens exceed its threshold; the highest such tier wins.
The file's BLAKE3 digest is every trial's ``cost_source_reference``. Arithmetic is in
integer micro-USD: each component is rate x tokens in micro-USD per million tokens,
summed exactly per part (input; output), then divided by one million once per part,
rounding half to even.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import (
    Fields,
    PointerError,
    TokenUsage,
    blake3_file,
    describe_value,
    load_json_document,
    usd_to_micro,
)
from ctxbench.core.limits import MAX_COUNT

__all__ = ["SELF_HOSTED_REFERENCE", "PricingSnapshot", "Rates", "cost_micro",
           "load_pricing_snapshot"]

SCHEMA_VERSION = "ctxbench.pricing-snapshot.v1"
SELF_HOSTED_REFERENCE = ("self_hosted: no API fee; hardware, energy, operations and "
                         "depreciation not measured")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_RATE_NAMES = ("uncached_input", "cached_input", "cache_write", "output")


@dataclass(frozen=True, slots=True)
class Rates:
    """Micro-USD per million tokens for each kind of token."""

    uncached_input: int
    cached_input: int
    cache_write: int
    output: int
    reasoning: int


@dataclass(frozen=True, slots=True)
class PricingSnapshot:
    """A loaded snapshot; ``digest`` is the BLAKE3 of the file's bytes."""

    provider: str
    model: str
    effective_date: str
    source_reference: str
    rates: Rates
    tiers: tuple[tuple[int, Rates], ...]
    digest: str
    path: str

    @property
    def reference(self) -> str:
        """The trial's ``cost_source_reference``."""
        return f"blake3:{self.digest}"

    def rates_for(self, prompt_tokens: int) -> Rates:
        chosen = self.rates
        for threshold, rates in self.tiers:
            if prompt_tokens > threshold:
                chosen = rates
        return chosen

    def cost_micro(self, usage: TokenUsage) -> tuple[int, int]:
        """Integer micro-USD (input part, output part) for ``usage`` under this snapshot."""
        return cost_micro(self.rates_for(usage.context_tokens), usage)


def _div_half_even(total: int) -> int:
    quotient, remainder = divmod(total, 1_000_000)
    if remainder * 2 > 1_000_000 or (remainder * 2 == 1_000_000 and quotient % 2 == 1):
        quotient += 1
    return quotient


def cost_micro(rates: Rates, usage: TokenUsage) -> tuple[int, int]:
    """Exact integer (input, output) cost: sum(rate x tokens) / 1e6, rounded half to even."""
    input_total = (rates.uncached_input * usage.uncached_input + rates.cached_input *
                   usage.cached_input + rates.cache_write * usage.cache_write)
    output_total = rates.output * usage.output + rates.reasoning * usage.reasoning
    return _div_half_even(input_total), _div_half_even(output_total)


def _rates(f: Fields, field: str) -> Rates:
    obj = f.obj(field)
    assert obj is not None
    r = f.child(field, obj)
    r.only({*_RATE_NAMES, "reasoning"})
    values = {name: usd_to_micro(r.req_number(name, minimum=0, maximum=MAX_COUNT))
              for name in _RATE_NAMES}
    reasoning = r.number("reasoning", minimum=0, maximum=MAX_COUNT, optional=True)
    return Rates(**values, reasoning=values["output"] if reasoning is None
                 else usd_to_micro(reasoning))


def load_pricing_snapshot(path: str | Path) -> PricingSnapshot:
    """Load and validate a pricing snapshot; errors name the JSON pointer."""
    shown = str(path)
    doc = load_json_document(path)
    if not isinstance(doc, dict):
        raise PointerError(shown, "/", f"expected a JSON object, got {describe_value(doc)}")
    f = Fields(doc, path=shown, pointer="")
    f.only({"schema_version", "provider", "model", "effective_date", "source_reference",
            "currency", "rates_usd_per_million", "tiers", "notes"})
    f.req_enum("schema_version", [SCHEMA_VERSION])
    f.enum("currency", ["USD"], optional=True)
    f.string("notes", optional=True, nonblank=False)
    date = f.matching("effective_date", _DATE, "a date YYYY-MM-DD")
    tiers: list[tuple[int, Rates]] = []
    for index, item in enumerate(f.array("tiers", optional=True) or []):
        if not isinstance(item, dict):
            f.child("tiers", {}).fail(str(index), "a JSON object", item)
        t = Fields(item, path=shown, pointer=f"/tiers/{index}")
        t.only({"above_prompt_tokens", "rates_usd_per_million"})
        threshold = t.req_int("above_prompt_tokens", minimum=0, maximum=MAX_COUNT)
        if tiers and threshold <= tiers[-1][0]:
            t.fail("above_prompt_tokens", f"a threshold above the previous tier's "
                   f"({tiers[-1][0]})", threshold)
        tiers.append((threshold, _rates(t, "rates_usd_per_million")))
    return PricingSnapshot(
        provider=f.req_string("provider"), model=f.req_string("model"),
        effective_date=date or "", source_reference=f.req_string("source_reference"),
        rates=_rates(f, "rates_usd_per_million"), tiers=tuple(tiers),
        digest=blake3_file(path), path=shown)
