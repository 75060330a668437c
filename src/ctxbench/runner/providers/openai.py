"""``openai``: any OpenAI-compatible Chat Completions endpoint over httpx, or OpenAI's
Responses API (``api="responses"``, :mod:`ctxbench.runner.providers.openai_responses`).

Works with OpenAI, vLLM, the llama.cpp server, Ollama, LM Studio and LiteLLM proxies.
The request id is the ``x-request-id`` header, else the response ``id``. Only the
Responses API offers context management ctxbench can turn on (truncation and server-side
compaction: :meth:`OpenAIProvider.native_context_management`).

A request with tool schemas sends them as ``tools`` (``type: function``; names with dots
sent with underscores); the answer of a response with ``tool_calls`` is their canonical
text form (``[name(arg=value)]``), whatever text came with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import httpx

from ctxbench.core import InputError
from ctxbench.runner.providers.base import (
    Message,
    ProviderRequest,
    ProviderResponse,
    RequestFailed,
)
from ctxbench.runner.providers.http import complete_json
from ctxbench.runner.providers.openai_responses import (
    complete_responses,
    native_parameters,
    responses_body,
)
from ctxbench.runner.redact import Redactor
from ctxbench.runner.usage import normalize_openai
from ctxbench.workloads.calls import CallParseError, calls_from_native, render_calls
from ctxbench.workloads.tools import json_schema_parameters, native_name, native_names

__all__ = ["APIS", "OpenAIProvider", "parse_chat_completion"]

#: The APIs the provider speaks (``[model] api``); the first is the default.
APIS = ("chat_completions", "responses")


def _tool_calls(message: dict[str, Any], names: Mapping[str, str]) -> str | None:
    """The canonical text of the message's ``tool_calls``; None when it has none."""
    raw = message.get("tool_calls")
    if not raw:
        return None
    items: list[tuple[str, Any]] = []
    for call in raw if isinstance(raw, list) else [raw]:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RequestFailed("a tool call has no function name",
                                error_class="malformed_response")
        items.append((function["name"], function.get("arguments", "")))
    try:
        return render_calls(calls_from_native(items, names))
    except CallParseError as exc:
        raise RequestFailed(str(exc)[:300], error_class="malformed_response") from None


def parse_chat_completion(payload: dict[str, Any], names: Mapping[str, str] | None = None
                          ) -> tuple[str, dict[str, Any]]:
    """Return (answer text, raw usage) from a Chat Completions body, or raise RequestFailed.

    ``names`` maps tool names as sent back to the schemas' names.
    """
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RequestFailed("the response has no choices", error_class="malformed_response")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    calls = _tool_calls(message, names or {}) if isinstance(message, dict) else None
    if calls is not None:
        content = calls
    if content is None and isinstance(message, dict) and isinstance(message.get("refusal"),
                                                                    str):
        content = message["refusal"]
    if not isinstance(content, str):
        raise RequestFailed("the response has no message content",
                            error_class="malformed_response")
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        raise RequestFailed("the response reports no usage", error_class="missing_usage")
    return content, usage


def _message(m: Message) -> dict[str, Any]:
    """One message as Chat Completions takes it (an agent's tool calls and results native)."""
    if m.tool_calls:
        return {"role": m.role, "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": native_name(name), "arguments": arguments}}
            for call_id, name, arguments in m.tool_calls]}
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    return {"role": m.role, "content": m.content}


class OpenAIProvider:
    """Chat Completions (or Responses API) client; ``transport`` is injectable so tests
    never need a network."""

    usage_source = "provider_response"
    native_tool_history = True

    def __init__(self, *, model: str, base_url: str = "https://api.openai.com/v1",
                 api_key: str | None = None, timeout_s: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None, name: str = "openai",
                 send_seed: bool = True, api: str = APIS[0]) -> None:
        if api not in APIS:
            raise InputError(f"api: expected one of {', '.join(APIS)}, got {api!r:.60}")
        self.name = name
        self.model = model
        self.send_seed = send_seed
        self.api = api
        self._url = base_url.rstrip("/") + ("/responses" if api == "responses"
                                            else "/chat/completions")
        self._headers = {"content-type": "application/json"}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        # httpx's timeout bounds each read; ``timeout_s`` is also the whole attempt's
        # wall-clock deadline (see providers.http).
        self._deadline_s = timeout_s
        self._redactor = Redactor([api_key])
        self._client = httpx.AsyncClient(timeout=timeout_s, transport=transport)

    def native_context_management(self, budget: int | None) -> dict[str, Any] | None:
        """What an agent's ``native_context`` condition adds to each request: on the
        Responses API, ``truncation: auto`` and server-side compaction at ``budget`` tokens
        (:func:`~ctxbench.runner.providers.openai_responses.native_parameters`); None on
        Chat Completions, which has no such parameter."""
        return native_parameters(budget) if self.api == "responses" else None

    def body(self, request: ProviderRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (extra parameters override nothing else)."""
        if self.api == "responses":
            return responses_body(self.model, request)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in request.messages],
            "max_tokens": request.max_output_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.seed is not None and self.send_seed:
            body["seed"] = request.seed
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": native_name(t.name), "description": t.description,
                "parameters": json_schema_parameters(t)}} for t in request.tools]
        for key, value in request.extra.items():
            body.setdefault(key, value)
        return body

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        if self.api == "responses":
            return await complete_responses(self._client, self._url, request,
                                            self.body(request), self._headers,
                                            deadline_s=self._deadline_s,
                                            redactor=self._redactor)
        return await complete_json(self._client, self._url, self.body(request), self._headers,
                                   "x-request-id",
                                   partial(parse_chat_completion,
                                           names=native_names(request.tools)),
                                   normalize_openai,
                                   deadline_s=self._deadline_s, redactor=self._redactor)

    async def aclose(self) -> None:
        await self._client.aclose()
