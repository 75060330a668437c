"""The openai provider on the Responses API: the request body, the answer from ``output``
items, usage, request ids, and every malformed body a located failure; single-request
trials through ``ctxbench run`` against a loopback Responses server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.run import run as run_command
from ctxbench.core import InputError, TokenUsage, iter_jsonl
from ctxbench.runner.prompt import build_messages
from ctxbench.runner.providers.base import Message, ProviderRequest, RequestFailed
from ctxbench.runner.providers.openai import OpenAIProvider
from ctxbench.runner.providers.openai_responses import parse_response
from ctxbench.workloads import ToolSchema

from .responses_server import ResponsesServer

FIXTURES = Path(__file__).parent / "fixtures"
DRINK = ToolSchema("ChaDri.change_drink", "Modifies the existing drink order.", {
    "type": "dict", "properties": {"drink_id": {"type": "string", "description": "d"}}})
RIDE = ToolSchema("uber.ride", "Find a ride.", {
    "type": "dict", "properties": {"loc": {"type": "string", "description": "l"}}})
USAGE = {"input_tokens": 5, "output_tokens": 1}


def _complete(server: ResponsesServer, request: ProviderRequest, **options: Any) -> Any:
    async def go() -> Any:
        provider = OpenAIProvider(model="responses-loopback", base_url=server.base_url,
                                  api_key="sk-responses-test-key", api="responses", **options)
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_a_single_request_is_instructions_and_input_items_and_its_answer_the_text() -> None:
    request = ProviderRequest(build_messages("The gateway listens on port 8443.",
                                             "Which port?"), max_output_tokens=16,
                              temperature=0.0, seed=5, extra={"reasoning": {"effort": "low"}})
    with ResponsesServer() as server:
        response = _complete(server, request)
    (body,) = server.bodies
    assert body["instructions"].startswith("Answer the question")
    assert [i["role"] for i in body["input"]] == ["user"]
    assert body["input"][0]["content"].startswith("Context:\n")
    assert (body["max_output_tokens"], body["temperature"], body["store"]) == (16, 0.0, False)
    assert body["reasoning"] == {"effort": "low"}
    assert not {"messages", "seed", "max_tokens", "tools", "truncation"} & set(body)
    assert server.problems == []
    assert response.text.startswith("The gateway listens on port 8443.")
    usage = server.replies[0]["usage"]
    assert response.usage == TokenUsage(uncached_input=usage["input_tokens"] - usage[
        "input_tokens_details"]["cached_tokens"], cached_input=usage["input_tokens_details"][
        "cached_tokens"], output=7, reasoning=2)
    assert response.request_id == "req-1" and response.compaction is None


def test_the_request_id_falls_back_to_the_response_id() -> None:
    request = ProviderRequest((Message("user", "Context:\nA B C"),), max_output_tokens=4,
                              temperature=0.0)
    with ResponsesServer(request_ids=False) as server:
        assert _complete(server, request).request_id == "resp_1"


def test_an_agents_history_goes_as_function_call_items_and_tools_flat() -> None:
    provider = OpenAIProvider(model="m", api="responses")
    body = provider.body(ProviderRequest((
        Message("system", "sys"), Message("user", "task"),
        Message("assistant", "[ChaDri.change_drink(drink_id='x')]",
                (("c1", "ChaDri.change_drink", '{"drink_id": "x"}'),)),
        Message("tool", "done", tool_call_id="c1")), max_output_tokens=8, temperature=0.0,
        tools=(DRINK,), compaction={"type": "compaction", "encrypted_content": "e"}))
    assert body["instructions"] == "sys"
    assert body["input"] == [
        {"type": "compaction", "encrypted_content": "e"},
        {"role": "user", "content": "task"},
        {"type": "function_call", "call_id": "c1", "name": "ChaDri_change_drink",
         "arguments": '{"drink_id": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "done"}]
    assert body["tools"] == [{"type": "function", "name": "ChaDri_change_drink",
                              "description": "Modifies the existing drink order.",
                              "parameters": {"type": "object", "properties": {
                                  "drink_id": {"type": "string", "description": "d"}}}}]
    with pytest.raises(InputError, match="stop: expected no stop sequences"):
        provider.body(ProviderRequest((Message("user", "u"),), 8, 0.0, stop=("\n",)))
    with pytest.raises(InputError, match="api: expected one of chat_completions, responses"):
        OpenAIProvider(model="m", api="completions")
    asyncio.run(provider.aclose())


def test_function_calls_are_the_canonical_call_text_under_the_schemas_names() -> None:
    payload = json.loads((FIXTURES / "openai-response-function-calls.json").read_text())
    parsed = parse_response(payload, {"ChaDri_change_drink": "ChaDri.change_drink",
                                      "uber_ride": "uber.ride"})
    assert parsed.text == ("[ChaDri.change_drink(drink_id='latte', new_preferences={'size': "
                           "'large'}), uber.ride(loc='456 Oak Ave', type='plus', time=10)]")
    from ctxbench.runner.usage import normalize_openai_responses

    assert normalize_openai_responses(parsed.raw_usage) == TokenUsage(86, 1920, 0, 44, 256)
    assert parsed.compaction is None


def _body(*output: object, **top: object) -> dict[str, Any]:
    return {"id": "resp_1", "status": "completed", "output": list(output), "usage": USAGE,
            **top}


TEXT = {"type": "message", "content": [{"type": "output_text", "text": "fine"}]}


def test_a_compaction_item_and_a_refusal_are_read() -> None:
    item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA", "extra": 1}
    parsed = parse_response(_body(item, TEXT))
    assert parsed.text == "fine"
    assert parsed.compaction == {"type": "compaction", "id": "cmp_1",
                                 "encrypted_content": "gAAA"}
    refused = parse_response(_body({"type": "message", "content": [
        {"type": "refusal", "refusal": "I cannot help with that."}]}))
    assert refused.text == "I cannot help with that."


@pytest.mark.parametrize(("payload", "kind", "message"), [
    (_body(TEXT, status="in_progress"), "malformed_response",
     "the response's /status: expected completed, incomplete or failed, got the string "
     '"in_progress"'),
    ({"status": "completed", "usage": USAGE}, "malformed_response",
     "the response's /output: expected an array of output items, got nothing"),
    (_body("text"), "malformed_response",
     "the response's /output/0: expected an output item object, got the string \"text\""),
    (_body({"type": "web_search_call"}), "malformed_response",
     "the response's /output/0/type: expected one of message, function_call, reasoning, "
     'compaction, got the string "web_search_call"'),
    (_body({"type": "reasoning", "summary": []}), "malformed_response",
     "the response's /output: expected a message or function_call item, got 1 item(s) of "
     "neither"),
    (_body({"type": "message", "content": "fine"}), "malformed_response",
     "the response's /output/0/content: expected an array of content parts, got the "
     'string "fine"'),
    (_body({"type": "message", "content": [{"type": "output_text", "text": 3}]}),
     "malformed_response", "the response's /output/0/content/0/text: expected a string, "
     "got the integer 3"),
    (_body({"type": "message", "content": []}), "malformed_response",
     "the response's /output/0/content: expected an output_text or refusal part, got 0 "
     "part(s) of neither"),
    (_body(TEXT, {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}),
     "malformed_response", "the response's /output/1/arguments: expected a string, got an "
     "object"),
    (_body({"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}),
     "malformed_response", "call 'f': arguments are not a JSON object"),
    (_body({"type": "compaction", "encrypted_content": ""}, TEXT), "malformed_response",
     "the response's /output/0/encrypted_content: expected a non-empty string, got the "
     'string ""'),
    ({"status": "completed", "output": [TEXT]}, "missing_usage",
     "the response reports no usage"),
    (_body(TEXT, status="incomplete", incomplete_details={"reason": "content_filter"}),
     "incomplete_response", "the response is incomplete (content_filter)"),
    (_body(status="failed", error={"code": "server_error", "message": "boom"}),
     "response_failed", "the response failed (server_error): boom"),
])
def test_malformed_bodies_are_located_failures(payload: dict[str, Any], kind: str,
                                               message: str) -> None:
    with pytest.raises(RequestFailed) as raised:
        parse_response(payload)
    assert raised.value.error_class == kind and str(raised.value) == message


def test_an_incomplete_response_is_billed_for_its_usage() -> None:
    with pytest.raises(RequestFailed) as raised:
        parse_response(_body(TEXT, status="incomplete",
                             incomplete_details={"reason": "max_output_tokens"}))
    assert raised.value.usage == TokenUsage(uncached_input=5, output=1)
    assert raised.value.raw_usage == USAGE and not raised.value.retryable


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["type", "content", "text", "name",
                                                        "call_id", "arguments",
                                                        "encrypted_content", "refusal"]),
                                       inner, max_size=4), max_leaves=12)
_ITEM = st.fixed_dictionaries({"type": st.sampled_from(
    ["message", "function_call", "compaction", "reasoning", "output_text"])},
    optional={"content": _JSON, "name": _JSON, "call_id": _JSON, "arguments": _JSON,
              "encrypted_content": _JSON})


@given(st.lists(_ITEM | _JSON, max_size=4), st.sampled_from(["completed", "incomplete",
                                                             "failed", None]), _JSON)
def test_any_body_is_an_answer_or_a_request_failure(output: list[Any], status: str | None,
                                                    usage: Any) -> None:
    try:
        parsed = parse_response({"status": status, "output": output, "usage": usage})
    except RequestFailed as exc:
        assert len(str(exc)) < 600
        return
    assert isinstance(parsed.text, str) and isinstance(parsed.raw_usage, dict)


def test_single_request_trials_run_on_the_responses_api(
        make_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    with ResponsesServer() as server:
        path = make_spec(provider="openai", extra_model=(
            f'model = "responses-loopback"\napi = "responses"\nbase_url = "{server.base_url}"'),
            replicates=1)
        code = run_guarded(run_command, [str(path), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    trials = [i.value for i in iter_jsonl(path.parent / "out" / "trials.jsonl")]
    assert len(trials) == 6 and {t["outcome"] for t in trials} == {"success"}
    reported = sorted(r["usage"]["input_tokens"] for r in server.replies)
    assert sorted(t["context_tokens"] for t in trials) == reported
    assert all(t["reasoning_tokens"] == 2 and t["output_tokens"] == 7 for t in trials)
    assert all(str(t["provider_request_id"]).startswith("req-") for t in trials)
    assert all(b["max_output_tokens"] == 16 and b["store"] is False for b in server.bodies)
    assert server.problems == []


def test_stop_sequences_on_the_responses_api_are_a_located_spec_error(
        make_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = make_spec(provider="openai", extra_model=(
        'model = "m"\napi = "responses"\nstop = ["\\n"]'))
    assert run_guarded(run_command, [str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert 'exp.toml:15: [model].stop: expected no stop sequences (api = "responses" takes ' \
           'none), got an array' in err and err.count("\n") == 1, err
