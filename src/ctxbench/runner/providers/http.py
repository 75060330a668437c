"""Shared HTTP plumbing for the httpx providers: one boundary where httpx errors become
:class:`RequestFailed`, and the latency clock."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from ctxbench.core import TokenUsage
from ctxbench.runner.providers.base import ProviderResponse, RequestFailed
from ctxbench.runner.usage import UsageError

__all__ = ["RETRYABLE_STATUS", "complete_json", "post_json"]

# 408 request timeout, 409 conflict (Anthropic's lock), 429 rate limit, 5xx and
# Anthropic's 529 overloaded are transient.
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


async def post_json(client: httpx.AsyncClient, url: str, body: dict[str, Any],
                    headers: dict[str, str], request_id_header: str
                    ) -> tuple[dict[str, Any], float, int, str | None]:
    """POST ``body``; return (decoded JSON, latency ms, status, request id header).

    Latency runs from just before the request is sent until the whole body has been read.
    """
    started = time.perf_counter()
    try:
        response = await client.post(url, json=body, headers=headers)
        await response.aread()
    except httpx.TimeoutException as exc:
        raise RequestFailed(f"request timed out: {type(exc).__name__}", error_class="timeout",
                            retryable=True,
                            latency_ms=(time.perf_counter() - started) * 1000) from exc
    except httpx.TransportError as exc:
        raise RequestFailed(f"transport error: {type(exc).__name__}",
                            error_class="connection_error", retryable=True,
                            latency_ms=(time.perf_counter() - started) * 1000) from exc
    latency_ms = (time.perf_counter() - started) * 1000
    request_id = response.headers.get(request_id_header)
    if response.status_code != 200:
        raise RequestFailed(
            f"HTTP {response.status_code}", error_class=f"http_{response.status_code}",
            retryable=response.status_code in RETRYABLE_STATUS,
            http_status=response.status_code, request_id=request_id, latency_ms=latency_ms)
    try:
        payload = json.loads(response.content)
    except ValueError as exc:
        raise RequestFailed("the response body is not JSON", error_class="malformed_response",
                            http_status=response.status_code, request_id=request_id,
                            latency_ms=latency_ms) from exc
    if not isinstance(payload, dict):
        raise RequestFailed("the response body is not a JSON object",
                            error_class="malformed_response", http_status=response.status_code,
                            request_id=request_id, latency_ms=latency_ms)
    return payload, latency_ms, response.status_code, request_id


async def complete_json(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str],
    id_header: str,
    parse: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
    normalize: Callable[[dict[str, Any]], TokenUsage],
) -> ProviderResponse:
    """POST one request and turn the provider's JSON into a :class:`ProviderResponse`.

    The request id is the ``id_header`` header, else the body's ``id``; a body that cannot
    be parsed, or usage that cannot be normalised, is a failed request that keeps them.
    """
    payload, latency_ms, status, header_id = await post_json(client, url, body, headers,
                                                             id_header)
    request_id = header_id or (payload.get("id") if isinstance(payload.get("id"), str)
                               else None)
    try:
        text, raw_usage = parse(payload)
        usage = normalize(raw_usage)
    except RequestFailed as exc:
        exc.request_id, exc.latency_ms, exc.http_status = request_id, latency_ms, status
        raise
    except UsageError as exc:
        raise RequestFailed(str(exc), error_class="malformed_usage", http_status=status,
                            request_id=request_id, latency_ms=latency_ms) from exc
    return ProviderResponse(text=text, usage=usage, raw_usage=raw_usage,
                            request_id=request_id, latency_ms=latency_ms, http_status=status)
