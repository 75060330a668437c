"""The one small interface every provider implements, and its request/response records.

    provider = get_provider("openai", model="gpt-4o-mini")  # imports its module lazily
    response = await provider.complete(request)  # or raises RequestFailed

Latency is measured by each provider at the same boundary for every condition: from
just before the request is sent to when the complete response has been received.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ctxbench.core import ProviderError, TokenUsage
from ctxbench.runner.providers.registry import provider_factory

__all__ = [
    "Message",
    "Provider",
    "ProviderRequest",
    "ProviderResponse",
    "RequestFailed",
    "get_provider",
]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message (``system``, ``user`` or, in a task's own history, ``assistant``).

    In an agent's conversation (:mod:`ctxbench.runner.agent`) an ``assistant`` message
    may carry ``tool_calls`` as (call id, name, JSON arguments), and a ``tool`` message
    answers ``tool_call_id``; only providers with ``native_tool_history`` receive those.
    """

    role: str
    content: str
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What is sent: identical for every condition except the context inside ``messages``."""

    messages: tuple[Message, ...]
    max_output_tokens: int
    temperature: float
    stop: tuple[str, ...] = ()
    seed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Tool schemas offered (ctxbench.workloads.tools.ToolSchema); empty for text tasks.
    # A provider with native tool calls sends them as ``tools`` and returns the calls in
    # their canonical text form (ctxbench.workloads.calls.render_calls).
    tools: tuple[Any, ...] = ()
    # An opaque item an earlier response of this conversation compacted the context into
    # (OpenAI Responses ``compaction``), sent before ``messages`` in place of what it
    # replaced; only a provider that returned one (``ProviderResponse.compaction``) gets one.
    compaction: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ProviderResponse:
    """What the provider itself reported for one successful request."""

    text: str
    usage: TokenUsage
    raw_usage: dict[str, Any] | None
    request_id: str | None
    latency_ms: float
    http_status: int | None = None
    #: The item the server compacted the conversation's context into, when it did
    #: (server-side compaction of the OpenAI Responses API), to send back next turn.
    compaction: Mapping[str, Any] | None = None


class RequestFailed(ProviderError):
    """A request without a usable response; ``retryable`` for 429, 5xx and timeouts.

    ``usage``/``raw_usage`` are set only when the provider reported valid usage for the
    failed request (an error body that carries usage, a truncated stream); the attempt is
    then billed for it. Nothing is ever estimated. ``retry_after_s`` is the server's
    ``Retry-After``, already parsed and capped.
    """

    def __init__(self, message: str, *, error_class: str, retryable: bool = False,
                 http_status: int | None = None, request_id: str | None = None,
                 latency_ms: float = 0.0, usage: TokenUsage | None = None,
                 raw_usage: dict[str, Any] | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message, error_class=error_class, retryable=retryable)
        self.http_status = http_status
        self.request_id = request_id
        self.latency_ms = latency_ms
        self.usage = usage if usage is not None else TokenUsage()
        self.raw_usage = raw_usage
        self.retry_after_s = retry_after_s


class Provider(Protocol):
    """A model endpoint. ``usage_source`` is what its counts are (see ctxbench.trial.v1)."""

    name: str
    model: str
    usage_source: str

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one request; raise :class:`RequestFailed` when no usable response came."""
        ...

    async def aclose(self) -> None:
        """Release connections or the loaded model."""
        ...


def get_provider(name: str, **options: Any) -> Provider:
    """Build provider ``name`` (:mod:`ctxbench.runner.providers.registry`) with ``options``;
    an unknown name lists the installed ones, a missing extra raises an install hint."""
    return provider_factory(name).create(**options)
