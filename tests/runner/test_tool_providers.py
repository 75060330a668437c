"""Tool schemas and tool-call answers on every provider, over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import TokenUsage
from ctxbench.runner.prompt import TOOL_FORMAT_PROMPT, build_tool_messages, prompting_messages
from ctxbench.runner.providers.anthropic import AnthropicProvider
from ctxbench.runner.providers.base import ProviderRequest, RequestFailed
from ctxbench.runner.providers.fixture import FixtureProvider, fixture_call
from ctxbench.runner.providers.openai import OpenAIProvider
from ctxbench.workloads import CallParseError, ToolSchema, parse_calls

FIXTURES = Path(__file__).parent / "fixtures"

DRINK = ToolSchema("ChaDri.change_drink", "Modifies the existing drink order.", {
    "type": "dict", "required": ["new_preferences"],
    "properties": {"drink_id": {"type": "string", "description": "The drink."},
                   "new_preferences": {"type": "dict", "description": "Changes.",
                                       "properties": {"size": {"type": "string"}}}}})
RIDE = ToolSchema("uber.ride", "Find a suitable Uber ride for customers.", {
    "type": "dict", "required": ["loc", "type", "time"],
    "properties": {"loc": {"type": "string", "description": "Start address."},
                   "type": {"type": "string", "enum": ["plus", "comfort", "black"]},
                   "time": {"type": "integer", "description": "Minutes to wait."},
                   "cost": {"type": "float", "description": "Budget."}}})
REQUEST = ProviderRequest(
    messages=build_tool_messages((("user", "A large coconut latte, and an uber plus ride "
                                   "from '2150 Shattuck Ave' within 10 minutes"),)),
    max_output_tokens=64, temperature=0.0, tools=(DRINK, RIDE))


class _Replay:
    """A loopback HTTP server that answers every POST with one recorded body."""

    def __init__(self, body: bytes) -> None:
        self.seen: list[dict[str, Any]] = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                replay.seen.append({"path": self.path,
                                    "body": json.loads(self.rfile.read(length))})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def replay(request: pytest.FixtureRequest) -> Iterator[_Replay]:
    server = _Replay((FIXTURES / request.param).read_bytes())
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


@pytest.mark.parametrize("replay", ["openai-chat-completion-tool-calls.json"], indirect=True)
def test_openai_sends_tools_and_reads_tool_calls(replay: _Replay) -> None:
    async def go() -> Any:
        provider = OpenAIProvider(model="gpt-4o-mini", base_url=replay.base_url)
        try:
            return await provider.complete(REQUEST)
        finally:
            await provider.aclose()

    response = asyncio.run(go())
    sent = replay.seen[0]["body"]
    assert replay.seen[0]["path"] == "/v1/chat/completions"
    assert [t["function"]["name"] for t in sent["tools"]] == ["ChaDri_change_drink",
                                                              "uber_ride"]
    ride = sent["tools"][1]["function"]["parameters"]
    assert ride["type"] == "object" and ride["properties"]["cost"]["type"] == "number"
    assert sent["tools"][0]["function"]["parameters"]["properties"]["new_preferences"][
        "type"] == "object"
    # Native tools: the schemas are not repeated in the prompt.
    assert TOOL_FORMAT_PROMPT not in json.dumps(sent["messages"])
    assert response.text == ("[ChaDri.change_drink(drink_id='latte', new_preferences="
                             "{'size': 'large', 'milk_type': 'coconut'}), uber.ride("
                             "loc='2150 Shattuck Ave, Berkeley, CA', type='plus', time=10)]")
    assert [c.name for c in parse_calls(response.text)] == ["ChaDri.change_drink",
                                                            "uber.ride"]
    assert response.usage == TokenUsage(uncached_input=412, output=58)


@pytest.mark.parametrize("replay", ["anthropic-message-tool-use.json"], indirect=True)
def test_anthropic_sends_tools_and_reads_tool_use(replay: _Replay) -> None:
    async def go() -> Any:
        provider = AnthropicProvider(model="claude-3-5-haiku", base_url=replay.base_url)
        try:
            return await provider.complete(REQUEST)
        finally:
            await provider.aclose()

    response = asyncio.run(go())
    sent = replay.seen[0]["body"]
    assert replay.seen[0]["path"] == "/v1/messages"
    assert [t["name"] for t in sent["tools"]] == ["ChaDri_change_drink", "uber_ride"]
    assert sent["tools"][1]["input_schema"]["properties"]["type"]["enum"] == [
        "plus", "comfort", "black"]
    assert sent["system"].startswith("You are given a request and a set of functions.")
    calls = parse_calls(response.text)
    assert [c.name for c in calls] == ["ChaDri.change_drink", "uber.ride"]
    assert dict(calls[1].arguments) == {"loc": "2150 Shattuck Ave, Berkeley, CA",
                                        "type": "plus", "time": 10}
    assert response.usage == TokenUsage(uncached_input=530, output=96)


def test_malformed_tool_arguments_are_a_failed_request() -> None:
    from ctxbench.runner.providers.openai import parse_chat_completion

    body = json.loads((FIXTURES / "openai-chat-completion-tool-calls.json").read_text())
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(RequestFailed, match="arguments are not JSON") as info:
        parse_chat_completion(body)
    assert info.value.error_class == "malformed_response"


def test_text_answer_without_tool_calls_is_kept() -> None:
    from ctxbench.runner.providers.anthropic import parse_message

    text, _ = parse_message({"content": [{"type": "text", "text": "No function fits."}],
                             "usage": {"input_tokens": 3, "output_tokens": 4}})
    assert text == "No function fits."


def test_fixture_calls_the_best_matching_function() -> None:
    response = asyncio.run(FixtureProvider().complete(REQUEST))
    calls = parse_calls(response.text)
    assert len(calls) == 1 and calls[0].name == "uber.ride"
    assert dict(calls[0].arguments) == {"loc": "2150 Shattuck Ave", "type": "plus",
                                        "time": 10}
    # The schemas are in the prompt it counts (prompting format).
    prompt = prompting_messages(REQUEST.messages, REQUEST.tools)
    words = sum(len(re.findall(r"\w+|[^\w\s]", m.content)) for m in prompt)
    assert response.usage.uncached_input == words


def test_fixture_abstains_when_nothing_overlaps() -> None:
    text = fixture_call((DRINK,), "What is the capital of Peru?")
    assert text == "I cannot answer from the provided context."
    with pytest.raises(CallParseError, match=r"not Python call syntax|not a list of calls"):
        parse_calls(text)


def test_prompting_messages_append_schemas_to_the_system_turn() -> None:
    messages = prompting_messages(REQUEST.messages, REQUEST.tools)
    assert [m.role for m in messages] == ["system", "user"]
    lines = messages[0].content.split(TOOL_FORMAT_PROMPT)[1].splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["ChaDri.change_drink",
                                                            "uber.ride"]
