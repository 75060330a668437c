"""Providers over an injected httpx transport: bodies, request ids, errors, retry classes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError, TokenUsage
from ctxbench.runner.prompt import build_messages, split_prompt
from ctxbench.runner.providers.anthropic import AnthropicProvider
from ctxbench.runner.providers.base import ProviderRequest, RequestFailed, get_provider
from ctxbench.runner.providers.builtin import BuiltinProvider
from ctxbench.runner.providers.fixture import FixtureProvider, fixture_answer
from ctxbench.runner.providers.openai import OpenAIProvider

FIXTURES = Path(__file__).parent / "fixtures"
REQUEST = ProviderRequest(messages=build_messages("The gateway listens on port 8443.",
                                                  "Which port?"),
                          max_output_tokens=16, temperature=0.0, stop=("\n\n",), seed=5,
                          extra={"reasoning_effort": "low"})


def transport(status: int, payload: object, headers: dict[str, str] | None = None,
              seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, json=payload, headers=headers or {})

    return httpx.MockTransport(handler)


def fixture_body(name: str) -> object:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_openai_request_and_response() -> None:
    seen: list[httpx.Request] = []
    provider = OpenAIProvider(model="o4-mini", base_url="https://api.example/v1",
                              api_key="sk-test", transport=transport(
                                  200, fixture_body("openai-chat-completion-cached-reasoning.json"),
                                  {"x-request-id": "req_123"}, seen))
    response = asyncio.run(provider.complete(REQUEST))
    sent = json.loads(seen[0].content)
    assert str(seen[0].url) == "https://api.example/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer sk-test"
    assert sent["max_tokens"] == 16 and sent["stop"] == ["\n\n"] and sent["seed"] == 5
    assert sent["reasoning_effort"] == "low" and sent["messages"][0]["role"] == "system"
    assert response.request_id == "req_123"
    assert response.usage == TokenUsage(86, 1920, 0, 44, 256)
    assert response.raw_usage is not None and response.raw_usage["prompt_tokens"] == 2006
    assert response.text.startswith("The signing key is rotated")


def test_openai_request_id_falls_back_to_the_response_id() -> None:
    provider = OpenAIProvider(model="m", transport=transport(
        200, fixture_body("llamacpp-server-chat-completion.json")))
    response = asyncio.run(provider.complete(REQUEST))
    assert response.request_id == "chatcmpl-c415f726-b399-4ab0-afe1-6b863d72144e"
    assert response.usage == TokenUsage(uncached_input=42, output=10)


def test_anthropic_request_and_response() -> None:
    seen: list[httpx.Request] = []
    provider = AnthropicProvider(model="claude-sonnet-4-20250514", api_key="k", transport=(
        transport(200, fixture_body("anthropic-message-cache-read-write.json"),
                  {"request-id": "req_018EeWyXxfu5pfWkrYcMdjWG"}, seen)))
    response = asyncio.run(provider.complete(REQUEST))
    sent = json.loads(seen[0].content)
    assert seen[0].headers["x-api-key"] == "k"
    assert seen[0].headers["anthropic-version"] == "2023-06-01"
    assert sent["system"].startswith("Answer the question") and sent["stop_sequences"] == ["\n\n"]
    assert [m["role"] for m in sent["messages"]] == ["user"] and "seed" not in sent
    assert response.request_id == "req_018EeWyXxfu5pfWkrYcMdjWG"
    assert response.usage.context_tokens == 188107 and response.text == (
        "The gateway listens on port 8443.")


@pytest.mark.parametrize(("status", "error_class", "retryable"), [
    (429, "http_429", True), (500, "http_500", True), (503, "http_503", True),
    (529, "http_529", True), (400, "http_400", False), (401, "http_401", False),
])
def test_http_errors_have_classes(status: int, error_class: str, retryable: bool) -> None:
    provider = OpenAIProvider(model="m", transport=transport(
        status, {"error": {}}, {"x-request-id": "r1"}))
    with pytest.raises(RequestFailed) as info:
        asyncio.run(provider.complete(REQUEST))
    assert info.value.error_class == error_class and info.value.retryable is retryable
    assert info.value.http_status == status and info.value.request_id == "r1"
    assert info.value.usage == TokenUsage()


def test_timeouts_and_connection_errors_are_retryable() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    provider = OpenAIProvider(model="m", transport=httpx.MockTransport(timeout))
    with pytest.raises(RequestFailed) as info:
        asyncio.run(provider.complete(REQUEST))
    assert info.value.error_class == "timeout" and info.value.retryable


def test_missing_usage_is_an_error_not_an_estimate() -> None:
    payload = {"id": "x", "choices": [{"message": {"content": "hi"}}]}
    provider = OpenAIProvider(model="m", transport=transport(200, payload))
    with pytest.raises(RequestFailed) as info:
        asyncio.run(provider.complete(REQUEST))
    assert info.value.error_class == "missing_usage" and not info.value.retryable


def test_unknown_provider_and_missing_extra() -> None:
    with pytest.raises(InputError, match="provider: expected one of openai, anthropic"):
        get_provider("cohere")
    ghost = BuiltinProvider("ghost", "ctxbench_no_such_module_xyz", "X", "pip install ghost")
    with pytest.raises(InputError, match="provider 'ghost' needs a package that is not "
                       r"installed \(ctxbench_no_such_module_xyz\); install it with: "
                       "pip install ghost"):
        ghost.create(model="m")


def test_fixture_reader_is_deterministic_and_labeled() -> None:
    provider = FixtureProvider()
    first = asyncio.run(provider.complete(REQUEST))
    second = asyncio.run(provider.complete(REQUEST))
    assert provider.usage_source == "deterministic_fixture"
    assert first.text == "The gateway listens on port 8443." == second.text
    assert first.request_id == second.request_id and first.usage.context_tokens > 0
    assert fixture_answer("Cats sleep.", "Which port?", 10).startswith("I cannot answer")


def test_prompt_round_trips() -> None:
    assert split_prompt(build_messages("ctx\n\nmore", "q?")) == ("ctx\n\nmore", "q?")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) |
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["choices", "message", "content", "usage", "prompt_tokens",
                         "completion_tokens", "input_tokens", "output_tokens", "type", "text",
                         "prompt_tokens_details", "cached_tokens", "refusal", "id"]),
        inner, max_size=4),
    max_leaves=12)


@given(_JSON)
def test_any_json_body_parses_or_fails_as_a_request(payload: object) -> None:
    from ctxbench.runner.providers.anthropic import parse_message
    from ctxbench.runner.providers.openai import parse_chat_completion
    from ctxbench.runner.usage import UsageError, normalize_anthropic, normalize_openai

    body = payload if isinstance(payload, dict) else {"choices": payload, "content": payload,
                                                      "usage": payload}
    for parse, normalize in ((parse_chat_completion, normalize_openai),
                             (parse_message, normalize_anthropic)):
        try:
            text, usage = parse(body)
        except RequestFailed as exc:
            assert exc.error_class in ("malformed_response", "missing_usage")
            continue
        assert isinstance(text, str) and isinstance(usage, dict)
        try:
            counted = normalize(usage)
        except UsageError as exc:
            assert exc.kind.startswith("usage_")
            continue
        assert 0 <= counted.total <= 5 * 100_000_000


@given(st.sampled_from([200, 200, 200, 400, 429, 500, 503]),
       st.one_of(st.binary(max_size=200), _JSON.map(lambda v: json.dumps(v).encode())),
       st.sampled_from([None, "gzip", "deflate", "br", "identity"]),
       st.sampled_from(["application/json", "text/plain", "", "application/problem+json"]),
       st.one_of(st.none(), st.text(max_size=30)))
def test_any_http_response_is_a_response_or_a_classified_failure(
        status: int, body: bytes, encoding: str | None, content_type: str,
        retry_after: str | None) -> None:
    headers = {"content-type": content_type}
    if encoding:
        headers["content-encoding"] = encoding
    if retry_after is not None and retry_after.isprintable() and retry_after.isascii():
        headers["retry-after"] = retry_after

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    provider = OpenAIProvider(model="m", api_key="sk-fuzz-12345678",
                              transport=httpx.MockTransport(handler))
    try:
        response = asyncio.run(provider.complete(REQUEST))
    except RequestFailed as exc:
        assert exc.error_class and (exc.http_status in (None, status))
        assert exc.retry_after_s is None or 0 <= exc.retry_after_s <= 3600
        return
    assert status == 200 and isinstance(response.text, str)
    assert response.usage.total <= 5 * 100_000_000
