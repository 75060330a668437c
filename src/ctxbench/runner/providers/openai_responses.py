"""The OpenAI Responses API (``POST {base_url}/responses``): the ``openai`` provider with
``[model] api = "responses"``.

The request: the system messages joined into ``instructions``; every other message one
``input`` item (a user or assistant message as ``role``/``content``; an agent's tool calls
as ``function_call`` items with ``call_id``, ``name`` and JSON ``arguments``; a tool's
result as a ``function_call_output`` item answering its ``call_id``), after the
``compaction`` item an earlier response returned, when the agent loop carries one; tools
flat (``{"type": "function", "name", "description", "parameters"}``; dots sent as
underscores); ``max_output_tokens``, ``temperature`` and ``store: false``: ctxbench sends
the whole history every turn (stateless input-array chaining), so nothing is kept on the
server. The API has no seed and no stop sequences; neither is sent.

The answer is read from ``output``: the ``function_call`` items' canonical call text when
there are any (``[name(arg=value)]``), else the ``output_text`` parts of the ``message``
items (a ``refusal`` part when there is no text); ``reasoning`` items are counted in the
usage only, and a ``compaction`` item (server-side compaction: ``context_management``) is
returned as :attr:`ProviderResponse.compaction`. A ``status`` of ``incomplete`` is a failed
request (``incomplete_response``, billed for its usage: the answer was cut off), ``failed``
is ``response_failed``; a body that breaks the documented shape is ``malformed_response``
naming the JSON pointer of what is wrong. Usage: ``input_tokens`` includes
``input_tokens_details.cached_tokens``, ``output_tokens`` includes
``output_tokens_details.reasoning_tokens`` (:func:`ctxbench.runner.usage.
normalize_openai_responses`). The request id is the ``x-request-id`` header, else the
response ``id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from ctxbench.core import InputError, describe_value
from ctxbench.runner.providers.base import (
    Message,
    ProviderRequest,
    ProviderResponse,
    RequestFailed,
)
from ctxbench.runner.providers.http import complete_json
from ctxbench.runner.redact import Redactor
from ctxbench.runner.usage import UsageError, normalize_openai_responses
from ctxbench.workloads.calls import CallParseError, calls_from_native, render_calls
from ctxbench.workloads.tools import json_schema_parameters, native_name, native_names

__all__ = ["DEFAULT_COMPACT_THRESHOLD", "ParsedResponse", "complete_responses",
           "native_parameters", "parse_response", "responses_body"]

#: ``compact_threshold`` of a ``native_context`` condition that has no budget (the value
#: OpenAI-compatible gateways' documentation of server-side compaction shows).
DEFAULT_COMPACT_THRESHOLD = 200_000
_OUTPUT_TYPES = ("message", "function_call", "reasoning", "compaction")
_MAX_SHOWN_ERROR = 200


def native_parameters(budget: int | None) -> dict[str, Any]:
    """What a ``native_context`` condition adds to each request: ``truncation: auto`` and
    server-side compaction at the condition's budget (else :data:`DEFAULT_COMPACT_THRESHOLD`)."""
    threshold = DEFAULT_COMPACT_THRESHOLD if budget is None else budget
    return {"truncation": "auto",
            "context_management": [{"type": "compaction", "compact_threshold": threshold}]}


def _items(m: Message) -> list[dict[str, Any]]:
    if m.tool_calls:
        return [{"type": "function_call", "call_id": call_id, "name": native_name(name),
                 "arguments": arguments} for call_id, name, arguments in m.tool_calls]
    if m.role == "tool":
        return [{"type": "function_call_output", "call_id": m.tool_call_id,
                 "output": m.content}]
    return [{"role": m.role, "content": m.content}]


def responses_body(model: str, request: ProviderRequest) -> dict[str, Any]:
    """The JSON body of ``request`` (``extra`` parameters override nothing else)."""
    if request.stop:
        raise InputError("stop: expected no stop sequences (the Responses API takes none), "
                         f"got {len(request.stop)}")
    items: list[dict[str, Any]] = []
    if request.compaction is not None:
        items.append(dict(request.compaction))
    for m in request.messages:
        if m.role != "system":
            items.extend(_items(m))
    body: dict[str, Any] = {"model": model, "input": items,
                            "max_output_tokens": request.max_output_tokens,
                            "temperature": request.temperature, "store": False}
    instructions = "\n\n".join(m.content for m in request.messages if m.role == "system")
    if instructions:
        body["instructions"] = instructions
    if request.tools:
        body["tools"] = [{"type": "function", "name": native_name(t.name),
                          "description": t.description,
                          "parameters": json_schema_parameters(t)} for t in request.tools]
    for key, value in request.extra.items():
        body.setdefault(key, value)
    return body


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """What a Responses body says: the answer, its raw usage, and a compaction item."""

    text: str
    raw_usage: dict[str, Any]
    compaction: dict[str, Any] | None


_ABSENT = object()


def _malformed(pointer: str, expected: str, got: Any = _ABSENT, *,
               got_text: str | None = None) -> RequestFailed:
    shown = got_text or ("nothing" if got is _ABSENT else describe_value(got))
    return RequestFailed(f"the response's {pointer}: expected {expected}, got {shown}",
                         error_class="malformed_response")


def _string(item: dict[str, Any], key: str, pointer: str, *, nonempty: bool = False) -> str:
    value = item.get(key, _ABSENT)
    if not isinstance(value, str) or (nonempty and not value):
        raise _malformed(f"{pointer}/{key}", "a non-empty string" if nonempty else "a string",
                         value)
    return value


def _message_text(item: dict[str, Any], pointer: str) -> tuple[list[str], list[str]]:
    content = item.get("content", _ABSENT)
    if not isinstance(content, list):
        raise _malformed(f"{pointer}/content", "an array of content parts", content)
    texts, refusals = [], []
    for n, part in enumerate(content):
        where = f"{pointer}/content/{n}"
        if not isinstance(part, dict):
            raise _malformed(where, "a content part object", part)
        if part.get("type") == "output_text":
            texts.append(_string(part, "text", where))
        elif part.get("type") == "refusal":
            refusals.append(_string(part, "refusal", where))
    if not texts and not refusals:
        raise _malformed(f"{pointer}/content", "an output_text or refusal part",
                         got_text=f"{len(content)} part(s) of neither")
    return texts, refusals


def _compaction(item: dict[str, Any], pointer: str) -> dict[str, Any]:
    """The item as it is sent back: ``type``, ``encrypted_content`` and its ``id``."""
    kept = {"type": "compaction",
            "encrypted_content": _string(item, "encrypted_content", pointer, nonempty=True)}
    if "id" in item:
        kept["id"] = _string(item, "id", pointer, nonempty=True)
    return kept


def _usage(payload: dict[str, Any]) -> dict[str, Any]:
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        raise RequestFailed("the response reports no usage", error_class="missing_usage")
    return usage


def _not_completed(payload: dict[str, Any], status: str) -> RequestFailed:
    """The failure of an ``incomplete`` or ``failed`` response, billed for valid usage."""
    usage = payload.get("usage")
    try:
        billed = normalize_openai_responses(usage)
    except UsageError:
        billed, usage = None, None
    if status == "incomplete":
        details = payload.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        message = f"the response is incomplete ({str(reason)[:60] if reason else 'no reason'})"
        kind = "incomplete_response"
    else:
        error = payload.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        message = f"the response failed ({str(code)[:60]}): {str(said)[:_MAX_SHOWN_ERROR]}"
        kind = "response_failed"
    return RequestFailed(message, error_class=kind, usage=billed,
                         raw_usage=usage if billed is not None else None)


def parse_response(payload: dict[str, Any], names: Mapping[str, str] | None = None
                   ) -> ParsedResponse:
    """The answer, raw usage and compaction item of a Responses body, or RequestFailed.

    ``names`` maps tool names as sent back to the schemas' names.
    """
    status = payload.get("status", _ABSENT)
    if status in ("incomplete", "failed"):
        raise _not_completed(payload, str(status))
    if status != "completed":
        raise _malformed("/status", "completed, incomplete or failed", status)
    output = payload.get("output", _ABSENT)
    if not isinstance(output, list):
        raise _malformed("/output", "an array of output items", output)
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[tuple[str, Any]] = []
    compaction: dict[str, Any] | None = None
    for n, item in enumerate(output):
        pointer = f"/output/{n}"
        if not isinstance(item, dict):
            raise _malformed(pointer, "an output item object", item)
        kind = item.get("type", _ABSENT)
        if kind not in _OUTPUT_TYPES:
            raise _malformed(f"{pointer}/type", f"one of {', '.join(_OUTPUT_TYPES)}", kind)
        if kind == "message":
            said, refused = _message_text(item, pointer)
            texts += said
            refusals += refused
        elif kind == "function_call":
            _string(item, "call_id", pointer, nonempty=True)
            calls.append((_string(item, "name", pointer, nonempty=True),
                          _string(item, "arguments", pointer)))
        elif kind == "compaction":
            compaction = _compaction(item, pointer)  # the last one carries the context
    if calls:
        try:
            text = render_calls(calls_from_native(calls, names or {}))
        except CallParseError as exc:
            raise RequestFailed(str(exc)[:300], error_class="malformed_response") from None
    elif texts or refusals:
        text = "".join(texts) if texts else "".join(refusals)
    else:
        raise _malformed("/output", "a message or function_call item",
                         got_text=f"{len(output)} item(s) of neither")
    return ParsedResponse(text, _usage(payload), compaction)


async def complete_responses(client: httpx.AsyncClient, url: str, request: ProviderRequest,
                             body: dict[str, Any], headers: dict[str, str], *,
                             deadline_s: float, redactor: Redactor) -> ProviderResponse:
    """POST one Responses request; the response keeps the compaction item, if any."""
    names = native_names(request.tools)
    compactions: list[dict[str, Any]] = []

    def parse(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        parsed = parse_response(payload, names)
        if parsed.compaction is not None:
            compactions.append(parsed.compaction)
        return parsed.text, parsed.raw_usage

    response = await complete_json(client, url, body, headers, "x-request-id", parse,
                                   normalize_openai_responses, deadline_s=deadline_s,
                                   redactor=redactor)
    return replace(response, compaction=compactions[-1]) if compactions else response
