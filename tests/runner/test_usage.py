"""Usage normalisation (compat-notes §3) against recorded response bodies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import TokenUsage
from ctxbench.runner.usage import (
    UsageError,
    normalize_anthropic,
    normalize_openai,
    normalize_openai_responses,
)

FIXTURES = Path(__file__).parent / "fixtures"


def body(name: str) -> dict[str, object]:
    value = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def test_openai_cached_and_reasoning_tokens_are_split_out() -> None:
    usage = normalize_openai(body("openai-chat-completion-cached-reasoning.json")["usage"])
    # prompt_tokens 2006 includes 1920 cached; completion_tokens 300 includes 256 reasoning.
    assert usage == TokenUsage(uncached_input=86, cached_input=1920, cache_write=0,
                               output=44, reasoning=256)
    assert usage.context_tokens == 2006 and usage.total == 2306


def test_anthropic_cache_write_and_read_are_added_to_the_context() -> None:
    write = normalize_anthropic(body("anthropic-message-cache-read-write.json")["usage"])
    assert write == TokenUsage(uncached_input=21, cached_input=0, cache_write=188086,
                               output=393, reasoning=0)
    assert write.context_tokens == 188107
    read = normalize_anthropic(body("anthropic-message-cache-read.json")["usage"])
    assert read == TokenUsage(uncached_input=22, cached_input=188086, cache_write=0, output=12)
    assert read.context_tokens == 188108


def test_llamacpp_server_reports_usage_the_openai_way() -> None:
    usage = normalize_openai(body("llamacpp-server-chat-completion.json")["usage"])
    assert usage == TokenUsage(uncached_input=42, output=10)


def test_anthropic_null_cache_fields_count_as_zero() -> None:
    usage = normalize_anthropic({"input_tokens": 5, "output_tokens": 2,
                                 "cache_read_input_tokens": None,
                                 "cache_creation_input_tokens": None})
    assert usage == TokenUsage(uncached_input=5, output=2)


@pytest.mark.parametrize(("usage", "message"), [
    (None, "usage: expected an object, got null"),
    ({"completion_tokens": 1},
     "usage.prompt_tokens: expected an integer in [0, 100000000], got nothing"),
    ({"prompt_tokens": "9", "completion_tokens": 1},
     'usage.prompt_tokens: expected an integer in [0, 100000000], got the string "9"'),
    ({"prompt_tokens": 10**30, "completion_tokens": 1},
     "usage.prompt_tokens: expected an integer in [0, 100000000], got an integer of about 31 "
     "digits"),
    ({"prompt_tokens": 2**53, "completion_tokens": 1},
     "usage.prompt_tokens: expected an integer in [0, 100000000], got the integer "
     "9007199254740992"),
    ({"prompt_tokens": 5, "completion_tokens": -1},
     "usage.completion_tokens: expected an integer in [0, 100000000], got the integer -1"),
    ({"prompt_tokens": 1e30, "completion_tokens": 1},
     "usage.prompt_tokens: expected an integer in [0, 100000000], got the number 1e+30"),
    ({"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 6}},
     "usage.prompt_tokens_details.cached_tokens: expected at most prompt_tokens (5), got 6"),
    ({"prompt_tokens": 5, "completion_tokens": 1,
      "completion_tokens_details": {"reasoning_tokens": 2}},
     "usage.completion_tokens_details.reasoning_tokens: expected at most completion_tokens "
     "(1), got 2"),
    ({"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": 3},
     "usage.prompt_tokens_details: expected an object, got the integer 3"),
])
def test_malformed_openai_usage_is_an_error(usage: object, message: str) -> None:
    with pytest.raises(UsageError) as info:
        normalize_openai(usage)
    assert str(info.value) == message


def test_malformed_anthropic_usage_is_an_error() -> None:
    with pytest.raises(UsageError, match=r"usage.output_tokens: expected an integer in "
                       r"\[0, 100000000\], got the boolean true"):
        normalize_anthropic({"input_tokens": 1, "output_tokens": True})


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7),
       st.integers(0, 10**7))
def test_openai_split_preserves_totals(prompt: int, completion: int, cached_seed: int,
                                       reasoning_seed: int) -> None:
    cached = cached_seed % (prompt + 1)
    reasoning = reasoning_seed % (completion + 1)
    usage = normalize_openai({
        "prompt_tokens": prompt, "completion_tokens": completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning}})
    assert usage.context_tokens == prompt
    assert usage.total_output == completion
    assert usage.cached_input == cached and usage.reasoning == reasoning


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7),
       st.integers(0, 10**7))
def test_anthropic_context_is_the_sum_of_its_parts(inp: int, read: int, write: int,
                                                   out: int) -> None:
    usage = normalize_anthropic({"input_tokens": inp, "cache_read_input_tokens": read,
                                 "cache_creation_input_tokens": write, "output_tokens": out})
    assert usage.context_tokens == inp + read + write and usage.output == out


def test_responses_api_usage_splits_cached_and_reasoning_tokens_out() -> None:
    usage = normalize_openai_responses(
        body("openai-response-function-calls.json")["usage"])
    # input_tokens 2006 includes 1920 cached; output_tokens 300 includes 256 reasoning.
    assert usage == TokenUsage(uncached_input=86, cached_input=1920, cache_write=0,
                               output=44, reasoning=256)


@pytest.mark.parametrize(("usage", "message"), [
    ({"output_tokens": 1}, "usage.input_tokens: expected an integer in [0, 100000000], got "
     "nothing"),
    ({"input_tokens": 5, "output_tokens": 1, "input_tokens_details": {"cached_tokens": 6}},
     "usage.input_tokens_details.cached_tokens: expected at most input_tokens (5), got 6"),
    ({"input_tokens": 5, "output_tokens": 1,
      "output_tokens_details": {"reasoning_tokens": True}},
     "usage.output_tokens_details.reasoning_tokens: expected an integer in [0, 100000000], "
     "got the boolean true"),
    # Chat Completions names are not the Responses API's.
    ({"prompt_tokens": 5, "completion_tokens": 1},
     "usage.input_tokens: expected an integer in [0, 100000000], got nothing"),
])
def test_malformed_responses_api_usage_is_an_error(usage: object, message: str) -> None:
    with pytest.raises(UsageError) as info:
        normalize_openai_responses(usage)
    assert str(info.value) == message
