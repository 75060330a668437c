"""Normalise each provider's usage object into one :class:`TokenUsage` (compat-notes §3).

- OpenAI-style (OpenAI, vLLM, llama.cpp server, ...): ``prompt_tokens`` INCLUDES
  ``prompt_tokens_details.cached_tokens``; ``completion_tokens`` INCLUDES
  ``completion_tokens_details.reasoning_tokens``. These APIs report no cache writes.
- OpenAI Responses API: the same split under other names: ``input_tokens`` INCLUDES
  ``input_tokens_details.cached_tokens``; ``output_tokens`` INCLUDES
  ``output_tokens_details.reasoning_tokens``.
- Anthropic Messages: ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens``; ``output_tokens`` is everything generated (the API
  does not split out thinking tokens, so reasoning is 0 and it is billed as output).

A malformed usage object raises :class:`UsageError` whose ``kind`` is what the failed
attempt records (``usage_not_integer``, ``usage_negative``, ``usage_absurd``,
``usage_inconsistent``, ``usage_missing``); counts are never guessed, clipped or coerced.
Every count must be at most :data:`MAX_USAGE_TOKENS` (100 million tokens, ten times the
largest context window any provider offers), which also keeps every count far below
2**53 - 1, so it survives any JSON reader exactly.
"""

from __future__ import annotations

from typing import Any

from ctxbench.core import TokenUsage, describe_value

__all__ = ["MAX_USAGE_TOKENS", "UsageError", "normalize_anthropic", "normalize_openai",
           "normalize_openai_responses"]

MAX_USAGE_TOKENS = 100_000_000


class UsageError(ValueError):
    """A usage object that breaks its provider's documented shape; ``kind`` classifies it."""

    def __init__(self, message: str, *, kind: str = "usage_inconsistent") -> None:
        super().__init__(message)
        self.kind = kind


def _count(obj: dict[str, Any], key: str, *, where: str, optional: bool = False) -> int:
    value = obj.get(key)
    if value is None and optional:
        return 0
    expected = f"{where}.{key}: expected an integer in [0, {MAX_USAGE_TOKENS}]"
    if value is None:
        raise UsageError(f"{expected}, got nothing", kind="usage_missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{expected}, got {describe_value(value)}", kind="usage_not_integer")
    if value < 0:
        raise UsageError(f"{expected}, got {_shown(value)}", kind="usage_negative")
    if value > MAX_USAGE_TOKENS:
        raise UsageError(f"{expected}, got {_shown(value)}", kind="usage_absurd")
    return value


def _shown(value: int) -> str:
    # str() of a huge integer is slow (and refused past 4,300 digits): describe its size.
    if abs(value) < 10**30:
        return f"the integer {value}"
    return f"an integer of about {int(abs(value).bit_length() * 0.30103) + 1} digits"


def _details(obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}.{key}: expected an object, got {describe_value(value)}",
                         kind="usage_inconsistent")
    return value


def _split_openai(usage: Any, inp: str, out: str) -> TokenUsage:
    """OpenAI's split: ``inp`` includes its details' cached tokens, ``out`` its details'
    reasoning tokens (``inp``/``out``: the API's field names)."""
    if not isinstance(usage, dict):
        raise UsageError(f"usage: expected an object, got {describe_value(usage)}",
                         kind="usage_missing")
    prompt = _count(usage, inp, where="usage")
    completion = _count(usage, out, where="usage")
    in_details = _details(usage, f"{inp}_details", "usage")
    out_details = _details(usage, f"{out}_details", "usage")
    cached = _count(in_details, "cached_tokens", where=f"usage.{inp}_details", optional=True)
    reasoning = _count(out_details, "reasoning_tokens", where=f"usage.{out}_details",
                       optional=True)
    if cached > prompt:
        raise UsageError(f"usage.{inp}_details.cached_tokens: expected at most "
                         f"{inp} ({prompt}), got {cached}")
    if reasoning > completion:
        raise UsageError(f"usage.{out}_details.reasoning_tokens: expected at most "
                         f"{out} ({completion}), got {reasoning}")
    return TokenUsage(uncached_input=prompt - cached, cached_input=cached, cache_write=0,
                      output=completion - reasoning, reasoning=reasoning)


def normalize_openai(usage: Any) -> TokenUsage:
    """Split a Chat Completions ``usage`` into uncached/cached input and output/reasoning."""
    return _split_openai(usage, "prompt_tokens", "completion_tokens")


def normalize_openai_responses(usage: Any) -> TokenUsage:
    """Split a Responses API ``usage`` (``input_tokens``/``output_tokens``) the same way."""
    return _split_openai(usage, "input_tokens", "output_tokens")


def normalize_anthropic(usage: Any) -> TokenUsage:
    """Add Anthropic's separately reported cache reads and writes to the context."""
    if not isinstance(usage, dict):
        raise UsageError(f"usage: expected an object, got {describe_value(usage)}",
                         kind="usage_missing")
    return TokenUsage(
        uncached_input=_count(usage, "input_tokens", where="usage"),
        cached_input=_count(usage, "cache_read_input_tokens", where="usage", optional=True),
        cache_write=_count(usage, "cache_creation_input_tokens", where="usage", optional=True),
        output=_count(usage, "output_tokens", where="usage"),
        reasoning=0,
    )
