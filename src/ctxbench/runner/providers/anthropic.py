"""``anthropic``: the Anthropic Messages API over httpx.

Cache reads and writes are reported outside ``input_tokens`` and are added back into
the context (see :mod:`ctxbench.runner.usage`). The request id is the ``request-id``
header, else the message ``id``.

A request with tool schemas sends them as ``tools`` (``input_schema``; names with dots
sent with underscores); the answer of a response with ``tool_use`` blocks is their
canonical text form (``[name(arg=value)]``), whatever text blocks came with them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

import httpx

from ctxbench.runner.providers.base import (
    Message,
    ProviderRequest,
    ProviderResponse,
    RequestFailed,
)
from ctxbench.runner.providers.http import complete_json
from ctxbench.runner.redact import Redactor
from ctxbench.runner.usage import normalize_anthropic
from ctxbench.workloads.calls import CallParseError, calls_from_native, render_calls
from ctxbench.workloads.tools import json_schema_parameters, native_name, native_names

__all__ = ["ANTHROPIC_VERSION", "CONTEXT_MANAGEMENT_BETA", "AnthropicProvider", "parse_message"]

ANTHROPIC_VERSION = "2023-06-01"
#: The beta that Anthropic's ``context_management`` request parameter (context editing:
#: clearing old tool results) is documented under.
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"


def _tool_uses(content: list[Any], names: Mapping[str, str]) -> str | None:
    """The canonical text of the ``tool_use`` blocks; None when there are none."""
    items: list[tuple[str, Any]] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            if not isinstance(block.get("name"), str):
                raise RequestFailed("a tool_use block has no name",
                                    error_class="malformed_response")
            items.append((block["name"], block.get("input", {})))
    if not items:
        return None
    try:
        return render_calls(calls_from_native(items, names))
    except CallParseError as exc:
        raise RequestFailed(str(exc)[:300], error_class="malformed_response") from None


def parse_message(payload: dict[str, Any], names: Mapping[str, str] | None = None
                  ) -> tuple[str, dict[str, Any]]:
    """Return (concatenated text blocks, or the tool calls; raw usage) from a Messages body.

    ``names`` maps tool names as sent back to the schemas' names.
    """
    content = payload.get("content")
    if not isinstance(content, list):
        raise RequestFailed("the response has no content", error_class="malformed_response")
    blocks = [block.get("text") for block in content
              if isinstance(block, dict) and block.get("type") == "text"]
    if not all(isinstance(b, str) for b in blocks):
        raise RequestFailed("a text block has no string text", error_class="malformed_response")
    calls = _tool_uses(content, names or {})
    text = calls if calls is not None else "".join(b for b in blocks if isinstance(b, str))
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        raise RequestFailed("the response reports no usage", error_class="missing_usage")
    return text, usage


def _message(m: Message) -> dict[str, Any]:
    """One message as the Messages API takes it: an agent's calls as ``tool_use`` blocks,
    a tool's result as a user ``tool_result`` block."""
    if m.tool_calls:
        return {"role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": native_name(name),
             "input": json.loads(arguments)} for call_id, name, arguments in m.tool_calls]}
    if m.role == "tool":
        return {"role": "user", "content": [{"type": "tool_result",
                                             "tool_use_id": m.tool_call_id,
                                             "content": m.content}]}
    return {"role": m.role, "content": m.content}


class AnthropicProvider:
    """Messages API client; the system message goes in the top-level ``system`` field.

    A request whose ``extra`` holds ``context_management`` (Anthropic's context editing,
    turned on by an agent's ``native_context`` condition) is sent with the beta header
    :data:`CONTEXT_MANAGEMENT_BETA` that the parameter needs.
    """

    usage_source = "provider_response"
    native_tool_history = True
    #: What an agent's ``native_context`` condition adds to each request: context
    #: editing that clears old tool results (the documented default trigger and keep).
    native_context_management: Mapping[str, Any] = {
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}

    def __init__(self, *, model: str, base_url: str = "https://api.anthropic.com/v1",
                 api_key: str | None = None, timeout_s: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None,
                 name: str = "anthropic", send_seed: bool = False) -> None:
        del send_seed  # the Messages API has no seed parameter
        self.name = name
        self.model = model
        self._url = base_url.rstrip("/") + "/messages"
        self._headers = {"content-type": "application/json",
                         "anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            self._headers["x-api-key"] = api_key
        # httpx's timeout bounds each read; ``timeout_s`` is also the whole attempt's
        # wall-clock deadline (see providers.http).
        self._deadline_s = timeout_s
        self._redactor = Redactor([api_key])
        self._client = httpx.AsyncClient(timeout=timeout_s, transport=transport)

    def body(self, request: ProviderRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "temperature": request.temperature,
            "messages": [_message(m) for m in request.messages if m.role != "system"],
        }
        if request.tools:
            body["tools"] = [{"name": native_name(t.name), "description": t.description,
                              "input_schema": json_schema_parameters(t)}
                             for t in request.tools]
        if system:
            body["system"] = system
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        for key, value in request.extra.items():
            body.setdefault(key, value)
        return body

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        headers = self._headers
        if "context_management" in request.extra:
            headers = {**headers, "anthropic-beta": CONTEXT_MANAGEMENT_BETA}
        return await complete_json(self._client, self._url, self.body(request), headers,
                                   "request-id",
                                   partial(parse_message, names=native_names(request.tools)),
                                   normalize_anthropic,
                                   deadline_s=self._deadline_s, redactor=self._redactor)

    async def aclose(self) -> None:
        await self._client.aclose()
