"""BFCL multi-turn tasks run by the agent loop, under a context manager, judged as BFCL does.

The loop follows BFCL's own inference (``inference_multi_turn_FC`` in
``bfcl_eval/model_handler/base_handler.py``, bfcl-eval 2026.3.23): each turn's user
messages join the conversation (a held-out function's turn says BFCL's "I have updated
some more functions ..." and offers the function from then on); then, step by step, the
context manager chooses the messages to send (checked and committed as in
:func:`ctxbench.runner.agent.run_agent`), the model answers, and its calls run on the
task's BFCL API instances (:meth:`MultiTurnTask.environment`, kept across turns), their
results joining the conversation as tool results. A turn ends when the model answers
without a call (plain text, or ``[]``); past ``max_steps`` steps in one turn the task is
force-terminated, as in BFCL (its ``MAXIMUM_STEP_LIMIT`` is 20). The trajectory, turn by
turn and step by step, is judged by :meth:`MultiTurnTask.check`: BFCL's state- and
response-based checker. A refused decision or a failed request ends the task as an error
(unresolved), keeping the usage reported so far.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.context_managers import (
    AgentMessage,
    ContextManager,
    ContextManagerFailure,
    ContextRequest,
    ToolCallRef,
    decision_commit,
)
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import TokenUsage
from ctxbench.runner.agent import decide_in_thread, sent_messages
from ctxbench.runner.providers.base import Provider, ProviderRequest, RequestFailed
from ctxbench.workloads.bfcl_multi_turn import MultiTurnTask
from ctxbench.workloads.bfcl_multi_turn_checker import ApiCall, MultiTurnCheck
from ctxbench.workloads.calls import CallParseError, ToolCall, parse_calls, render_calls

__all__ = ["BFCL_MAX_STEPS", "MultiTurnOutcome", "run_multi_turn"]

BFCL_MAX_STEPS = 20


@dataclass(frozen=True, slots=True)
class MultiTurnOutcome:
    """How one multi-turn task ended: ``stop_reason`` ``completed``, ``force_terminated``
    or ``error``; the verdict; every model request's record; summed provider usage."""

    task_id: str
    stop_reason: str
    check: MultiTurnCheck
    trajectory: tuple[tuple[tuple[ApiCall, ...], ...], ...]
    requests: tuple[dict[str, Any], ...]
    usage: TokenUsage
    latency_ms: float
    tool_calls: int
    error_type: str | None

    @property
    def score(self) -> float:
        return 1.0 if self.check.valid else 0.0


def _calls(text: str) -> tuple[ToolCall, ...]:
    try:
        return parse_calls(text)
    except CallParseError:
        return ()


async def run_multi_turn(provider: Provider, task: MultiTurnTask, manager: ContextManager, *,
                         budget: int | None, tokenizer: Tokenizer,
                         max_steps: int = BFCL_MAX_STEPS, max_output_tokens: int = 256,
                         temperature: float = 0.0, seed: int | None = None,
                         params: Mapping[str, Any] | None = None) -> MultiTurnOutcome:
    """Run ``task`` turn by turn with ``manager`` choosing each request's messages."""
    name = str(getattr(manager, "name", "unnamed"))
    environment = task.environment()
    native = bool(getattr(provider, "native_tool_history", False))
    conversation: list[AgentMessage] = []
    trajectory: list[tuple[tuple[ApiCall, ...], ...]] = []
    requests: list[dict[str, Any]] = []
    usage, latency, tool_calls = TokenUsage(), 0.0, 0

    def end(stop: str, error: str | None = None) -> MultiTurnOutcome:
        check = task.check(trajectory) if stop == "completed" else MultiTurnCheck(
            False, "multi_turn:force_terminated" if stop == "force_terminated" else
            "multi_turn:inference_error", len(trajectory) - 1, error or stop)
        return MultiTurnOutcome(task.task_id, stop, check, tuple(trajectory),
                                tuple(requests), usage, latency, tool_calls, error)

    for turn, messages in enumerate(task.turns):
        conversation.extend(AgentMessage("user", text) for text in messages)
        tools = task.tools_at(turn)
        steps: list[tuple[ApiCall, ...]] = []
        trajectory.append(())
        for step in range(max_steps + 1):
            if step == max_steps:
                return end("force_terminated")
            request = ContextRequest(task.task_id, len(requests), tuple(conversation),
                                     tuple(t.document for t in tools), budget, tokenizer,
                                     params=dict(params or {}))
            try:
                decision = await decide_in_thread(manager, request)
            except ContextManagerFailure as exc:
                return end("error", exc.error_type)
            record: dict[str, Any] = {"turn": turn, "step": step, "decision": decision_commit(
                name, len(requests), decision, len(conversation))}
            requests.append(record)
            sent = ProviderRequest(sent_messages(decision.messages, native),
                                   max_output_tokens=max_output_tokens,
                                   temperature=temperature, seed=seed, tools=tools)
            try:
                response = await provider.complete(sent)
            except RequestFailed as exc:
                usage, latency = usage + exc.usage, latency + exc.latency_ms
                return end("error", f"{exc.error_class}: {str(exc)[:200]}")
            usage, latency = usage + response.usage, latency + response.latency_ms
            record.update(input_tokens=response.usage.context_tokens,
                          cached_input_tokens=response.usage.cached_input,
                          output_tokens=response.usage.output,
                          reasoning_tokens=response.usage.reasoning,
                          latency_ms=round(response.latency_ms, 3),
                          request_id=response.request_id, response_text=response.text)
            calls = _calls(response.text)
            if not calls:
                conversation.append(AgentMessage("assistant", response.text))
                break
            record["tool_calls"] = [render_calls([c]) for c in calls]
            made = tuple(ApiCall.from_tool_call(c) for c in calls)
            steps.append(made)
            trajectory[-1] = tuple(steps)
            refs = tuple(ToolCallRef(f"call_{len(requests)}_{n}", c.name,
                                     json.dumps(dict(c.arguments), sort_keys=True))
                         for n, c in enumerate(calls))
            conversation.append(AgentMessage("assistant", render_calls(calls), refs))
            for ref, call in zip(refs, made, strict=True):
                conversation.append(AgentMessage("tool", environment.execute(call),
                                                 tool_call_id=ref.call_id))
            tool_calls += len(made)
    return end("completed")
