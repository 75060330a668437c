"""Shared HTTP plumbing for the httpx providers: the one boundary where a response, however
hostile, becomes a :class:`ProviderResponse` or a :class:`RequestFailed`.

Each attempt runs under a wall-clock deadline (connect, send, every byte of the body),
not only httpx's per-read timeouts, so a server that drips one byte a second cannot hold
an attempt past it. The body is read in chunks under the bounds of
:mod:`ctxbench.runner.providers.bounds`; the provider's own API key is redacted from
everything kept (answer, request id, usage object).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ctxbench.core import TokenUsage
from ctxbench.runner.providers.base import ProviderResponse, RequestFailed
from ctxbench.runner.providers.bounds import (
    BodyDecoder,
    BoundExceeded,
    parse_json_body,
    retry_after_seconds,
)
from ctxbench.runner.redact import Redactor
from ctxbench.runner.usage import UsageError

__all__ = ["RETRYABLE_STATUS", "HttpReply", "complete_json", "post_json"]

# 408 request timeout, 409 conflict (Anthropic's lock), 429 rate limit, 5xx and
# Anthropic's 529 overloaded are transient.
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Only what the bounded decoder reads; httpx would otherwise also offer br and zstd.
ACCEPT_ENCODING = "gzip, deflate"
_MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class HttpReply:
    """A whole response, read within the deadline and the bounds."""

    status: int
    body: bytes
    content_type: str
    request_id: str | None
    retry_after_s: float | None
    latency_ms: float


def _elapsed(started: float) -> float:
    return (time.perf_counter() - started) * 1000


async def _read_bounded(response: httpx.Response) -> bytes:
    """The decoded body, read chunk by chunk off the wire under the bounds.

    A response an injected transport built in memory was already read (and decoded) by
    httpx; it is only counted.
    """
    try:
        content = response.content
    except httpx.ResponseNotRead:
        decoder = BodyDecoder(response.headers.get("content-encoding"))
        async for chunk in response.aiter_raw():
            decoder.feed(chunk)
        return decoder.finish()
    decoder = BodyDecoder(None)
    decoder.feed(content)
    return decoder.finish()


async def post_json(client: httpx.AsyncClient, url: str, body: dict[str, Any],
                    headers: dict[str, str], request_id_header: str, *, deadline_s: float,
                    redactor: Redactor) -> HttpReply:
    """POST ``body`` and read the whole response within ``deadline_s`` seconds.

    Latency runs from just before the request is sent until the whole body has been read.
    """
    started = time.perf_counter()
    try:
        async with asyncio.timeout(deadline_s):
            async with client.stream("POST", url, json=body,
                                     headers={**headers, "accept-encoding": ACCEPT_ENCODING}
                                     ) as response:
                data = await _read_bounded(response)
    except TimeoutError as exc:
        raise RequestFailed(f"no complete response within the {deadline_s:g} s deadline",
                            error_class="deadline_exceeded", retryable=True,
                            latency_ms=_elapsed(started)) from exc
    except httpx.TimeoutException as exc:
        raise RequestFailed(f"request timed out: {type(exc).__name__}", error_class="timeout",
                            retryable=True, latency_ms=_elapsed(started)) from exc
    except httpx.TransportError as exc:
        raise RequestFailed(f"transport error: {type(exc).__name__}",
                            error_class="connection_error", retryable=True,
                            latency_ms=_elapsed(started)) from exc
    except httpx.DecodingError as exc:
        raise RequestFailed("the body could not be decoded", error_class="malformed_response",
                            latency_ms=_elapsed(started)) from exc
    except httpx.HTTPError as exc:  # any other failure httpx reports (redirect loops, ...)
        raise RequestFailed(f"HTTP error: {type(exc).__name__}", error_class="http_error",
                            latency_ms=_elapsed(started)) from exc
    except BoundExceeded as exc:
        raise RequestFailed(str(exc), error_class=exc.error_class,
                            latency_ms=_elapsed(started)) from exc
    request_id = response.headers.get(request_id_header)
    if request_id is not None:
        request_id = redactor.text(request_id)[:_MAX_ID_CHARS] or None
    return HttpReply(status=response.status_code, body=data,
                     content_type=response.headers.get("content-type", ""),
                     request_id=request_id,
                     retry_after_s=retry_after_seconds(response.headers.get("retry-after")),
                     latency_ms=_elapsed(started))


def _json_object(reply: HttpReply, redactor: Redactor) -> dict[str, Any]:
    """The body as a redacted JSON object, or a RequestFailed saying what it was instead."""
    kind = reply.content_type.split(";", 1)[0].strip().lower()
    if kind and kind != "application/json" and not kind.endswith("+json"):
        raise RequestFailed(f"the response is {kind[:60]!r}, not JSON",
                            error_class="unexpected_content_type")
    try:
        payload = parse_json_body(reply.body)
    except BoundExceeded as exc:
        raise RequestFailed(str(exc), error_class=exc.error_class) from exc
    if not isinstance(payload, dict):
        raise RequestFailed("the response body is not a JSON object",
                            error_class="malformed_response")
    redacted: dict[str, Any] = redactor.json(payload)
    return redacted


def _error_usage(reply: HttpReply, redactor: Redactor,
                 normalize: Callable[[dict[str, Any]], TokenUsage]
                 ) -> tuple[TokenUsage | None, dict[str, Any] | None]:
    """Usage that an error body reports (billed); None when there is none or it is invalid."""
    try:
        payload = _json_object(reply, redactor)
    except RequestFailed:
        return None, None
    raw = payload.get("usage")
    if not isinstance(raw, dict):
        return None, None
    try:
        return normalize(raw), raw
    except UsageError:
        return None, None


async def complete_json(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str],
    id_header: str,
    parse: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
    normalize: Callable[[dict[str, Any]], TokenUsage], *, deadline_s: float,
    redactor: Redactor,
) -> ProviderResponse:
    """POST one request and turn the provider's JSON into a :class:`ProviderResponse`.

    The request id is the ``id_header`` header, else the body's ``id``. A body that cannot
    be parsed, or usage that cannot be normalised, is a failed request that keeps them; an
    error status keeps the usage its body reports, when valid, so that it is billed.
    """
    reply = await post_json(client, url, body, headers, id_header, deadline_s=deadline_s,
                            redactor=redactor)
    where: dict[str, Any] = {"http_status": reply.status, "request_id": reply.request_id,
                             "latency_ms": reply.latency_ms}
    if reply.status != 200:
        usage, raw_usage = _error_usage(reply, redactor, normalize)
        raise RequestFailed(f"HTTP {reply.status}", error_class=f"http_{reply.status}",
                            retryable=reply.status in RETRYABLE_STATUS, usage=usage,
                            raw_usage=raw_usage, retry_after_s=reply.retry_after_s, **where)
    try:
        payload = _json_object(reply, redactor)
    except RequestFailed as exc:
        exc.request_id, exc.latency_ms, exc.http_status = (reply.request_id, reply.latency_ms,
                                                           reply.status)
        raise
    body_id = payload.get("id")
    if where["request_id"] is None and isinstance(body_id, str) and body_id:
        where["request_id"] = body_id[:_MAX_ID_CHARS]
    try:
        text, raw_usage = parse(payload)
        usage = normalize(raw_usage)
    except RequestFailed as exc:
        exc.request_id, exc.latency_ms, exc.http_status = (where["request_id"],
                                                           reply.latency_ms, reply.status)
        raise
    except UsageError as exc:
        raise RequestFailed(str(exc), error_class=exc.kind, **where) from exc
    return ProviderResponse(text=text, usage=usage, raw_usage=raw_usage,
                            request_id=where["request_id"], latency_ms=reply.latency_ms,
                            http_status=reply.status)
