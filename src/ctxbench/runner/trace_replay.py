"""Replay recorded agent traces to their decision points under a context manager.

For each :class:`~ctxbench.workloads.agent_traces.DecisionPoint`, the condition's
context manager receives the recorded history (its tools, the budget, the tokenizer) and
chooses the messages to send; ctxbench checks and commits that decision exactly as in the
agent loop (:func:`ctxbench.runner.agent.decide_in_thread`: malformed, restricted text,
over budget, an exception or no decision in time is that point's failure), sends it once
with the trace's tools, reads the reply as tool calls (canonical text) or a text answer,
and scores it against the recorded next move (:meth:`DecisionPoint.score`). A summarizing
manager's model calls go to the same provider and their tokens are in the point's usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.context_managers import (
    ContextManager,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    decision_commit,
)
from ctxbench.compiler.context_managers.builtins import SUMMARY_ROOM
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import TokenUsage
from ctxbench.runner.agent import SUMMARY_SYSTEM, decide_in_thread, sent_messages
from ctxbench.runner.providers.base import Message, Provider, ProviderRequest, RequestFailed
from ctxbench.workloads.agent_traces import DecisionPoint
from ctxbench.workloads.calls import CallParseError, ToolCall, parse_calls

__all__ = ["TraceOutcome", "replay_point", "replay_points"]


@dataclass(frozen=True, slots=True)
class TraceOutcome:
    """One decision point under one manager: its score (None when the point failed), the
    evidence recall of what was sent, the decision's commit and the provider's usage."""

    point_id: str
    kind: str
    manager: str
    score: float | None
    evidence_recall: float | None
    decision: dict[str, Any] | None
    usage: TokenUsage
    latency_ms: float
    request_id: str | None
    response_text: str | None
    error_type: str | None


class _Usage:
    def __init__(self) -> None:
        self.usage = TokenUsage()
        self.latency_ms = 0.0

    def add(self, usage: TokenUsage, latency_ms: float) -> None:
        self.usage = self.usage + usage
        self.latency_ms += latency_ms


def _summarizer(provider: Provider, loop: asyncio.AbstractEventLoop, spent: _Usage,
                temperature: float, seed: int | None) -> Any:
    def summarize(text: str) -> tuple[str, SummaryCall]:
        request = ProviderRequest((Message("system", SUMMARY_SYSTEM), Message("user", text)),
                                  max_output_tokens=SUMMARY_ROOM, temperature=temperature,
                                  seed=seed)
        try:
            response = asyncio.run_coroutine_threadsafe(provider.complete(request),
                                                        loop).result()
        except RequestFailed as exc:
            spent.add(exc.usage, exc.latency_ms)
            raise
        spent.add(response.usage, response.latency_ms)
        return response.text, SummaryCall(response.usage.context_tokens,
                                          response.usage.total_output, response.latency_ms,
                                          response.request_id)
    return summarize


def _reply(text: str) -> tuple[tuple[ToolCall, ...] | None, str | None]:
    try:
        return parse_calls(text), None
    except CallParseError:
        return None, text


async def replay_point(provider: Provider, point: DecisionPoint, manager: ContextManager, *,
                       budget: int | None, tokenizer: Tokenizer,
                       max_output_tokens: int = 256, temperature: float = 0.0,
                       seed: int | None = None,
                       params: Mapping[str, Any] | None = None) -> TraceOutcome:
    """Replay ``point`` under ``manager`` and score the model's next move."""
    name = str(getattr(manager, "name", "unnamed"))
    spent = _Usage()
    tools = tuple(t.document for t in point.trace.tools)
    request = ContextRequest(point.point_id, point.index, point.history, tools, budget,
                             tokenizer, _summarizer(provider, asyncio.get_running_loop(),
                                                    spent, temperature, seed),
                             params=dict(params or {}))

    def failed(error: str, decision: dict[str, Any] | None = None) -> TraceOutcome:
        return TraceOutcome(point.point_id, point.kind, name, None, None, decision,
                            spent.usage, spent.latency_ms, None, None, error)

    try:
        checked = await decide_in_thread(manager, request)
    except ContextManagerFailure as exc:
        return failed(exc.error_type)
    except RequestFailed as exc:
        return failed(f"{exc.error_class}: {str(exc)[:200]}")
    commit = decision_commit(name, point.index, checked, len(point.history))
    native = bool(getattr(provider, "native_tool_history", False))
    sent = ProviderRequest(sent_messages(checked.messages, native),
                           max_output_tokens=max_output_tokens, temperature=temperature,
                           seed=seed, tools=point.trace.tools)
    try:
        response = await provider.complete(sent)
    except RequestFailed as exc:
        spent.add(exc.usage, exc.latency_ms)
        return failed(f"{exc.error_class}: {str(exc)[:200]}", commit)
    spent.add(response.usage, response.latency_ms)
    calls, text = _reply(response.text)
    return TraceOutcome(point.point_id, point.kind, name, point.score(calls, text),
                        point.evidence_recall(checked.messages), commit, spent.usage,
                        spent.latency_ms, response.request_id, response.text, None)


def replay_points(provider: Provider, points: Sequence[DecisionPoint],
                  managers: Sequence[tuple[ContextManager, int | None]], *,
                  tokenizer: Tokenizer, max_output_tokens: int = 256,
                  temperature: float = 0.0, seed: int | None = None) -> list[TraceOutcome]:
    """Every point under every (manager, budget), in one event loop, points in order."""
    async def run() -> list[TraceOutcome]:
        return [await replay_point(provider, point, manager, budget=budget,
                                   tokenizer=tokenizer, max_output_tokens=max_output_tokens,
                                   temperature=temperature, seed=seed)
                for manager, budget in managers for point in points]
    return asyncio.run(run())
