"""The agent loop: model turns until a final answer, a turn or token limit, or an error.

Before every turn the condition's context manager
(:mod:`ctxbench.compiler.context_managers`) chooses the messages to send from the
conversation so far; ctxbench checks and commits that decision, sends it with the task's
tools, and reads the answer as tool calls (the provider's native calls, already in their
canonical text form, or the prompting format parsed from text; the embedded model decodes
under its call grammar). Calls run deterministically in-process
(:meth:`ctxbench.workloads.agent.AgentTask.execute`) and their results join the
conversation. The task ends when the model calls ``final_answer`` (or, on a provider with
native tool calls, answers in plain text), answers ``[]`` (``no_action``) or text that is
not a call list in the prompting format (``invalid_call``), reaches
:attr:`AgentLimits.max_turns` or :attr:`AgentLimits.max_context_tokens`, or fails.
Every turn records the decision's commit, the provider-reported usage, latency, request
id and the calls made (and, for a task that declares artifacts, the ones in the messages
sent); a summarizing manager's model calls are recorded beside the turn and counted in the
trial's usage. A decision holding part of an artifact the task may not send is refused
(:meth:`~ctxbench.workloads.agent.AgentTask.withheld`): nothing is sent, the trial fails,
and the outcome keeps the artifacts the refused messages held for ECEB's policy gate.

Providers with ``native_tool_history`` (OpenAI-compatible, Anthropic) receive the
assistant's calls and the tools' results as native messages; the others get them as text
(the calls' canonical text, then a user message per result headed
:data:`~ctxbench.runner.prompt.AGENT_RESULT_HEAD`). There are no retries inside a trial: a
failed request ends it as an error, keeping the usage reported so far.

With the provider's own context management on (``extra`` from :func:`native_context`),
every turn also records ``native_context``: whether the server compacted the input, and
the compaction item sent in place of what it replaced
(:mod:`ctxbench.runner.native_context`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.context_managers import (
    AgentMessage,
    CheckedDecision,
    ContextManager,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    ToolCallRef,
    decide,
    decision_commit,
)
from ctxbench.compiler.context_managers.builtins import SUMMARY_ROOM
from ctxbench.compiler.context_managers.interface import message_texts, messages_to_json
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import TokenUsage, blake3_json
from ctxbench.runner.native_context import CompactionCarry, native_context
from ctxbench.runner.prompt import AGENT_RESULT_HEAD
from ctxbench.runner.providers.base import Message, Provider, ProviderRequest, RequestFailed
from ctxbench.workloads.agent import FINAL_ANSWER, AgentTask
from ctxbench.workloads.calls import CallParseError, ToolCall, parse_calls, render_calls

__all__ = ["STOP_REASONS", "AgentLimits", "AgentOutcome", "native_context", "run_agent"]

STOP_REASONS = ("final_answer", "no_action", "invalid_call", "turn_limit", "token_limit",
                "error")
SUMMARY_SYSTEM = "You write short, faithful summaries."


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """When a trial stops without a final answer (both count as unresolved)."""

    max_turns: int = 6
    max_context_tokens: int | None = None
    max_output_tokens: int = 96
    #: Seconds a context manager may take for one decision (a summarizing manager's model
    #: calls included) before it is the trial's ``timeout`` failure.
    manager_timeout_s: float = 900.0


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """How one agent trial ended, with its turns and summed provider-reported usage."""

    stop_reason: str
    final_answer: str | None
    error_type: str | None
    turns: tuple[dict[str, Any], ...]
    usage: TokenUsage
    latency_ms: float
    tool_calls: int
    final_sent: tuple[str, ...]
    request_id: str | None
    #: The task's artifacts in the messages of the answering turn (the last one sent),
    #: or, when a decision was refused for holding artifacts the task may not send, the
    #: artifacts in those refused messages; with that message list's BLAKE3 (None when no
    #: turn was sent) and the largest per-turn count ctxbench made of what it sent.
    final_artifacts: tuple[str, ...] = ()
    final_context: str | None = None
    prompt_tokens: int = 0


def _artifact_ids(task: AgentTask, messages: Sequence[AgentMessage]) -> tuple[str, ...]:
    """The ids of ``task``'s artifacts whose whole text one of ``messages`` holds."""
    if not task.artifacts:
        return ()
    return tuple(a.artifact_id for a in task.artifacts_in(message_texts(messages)))


def _sent(messages: Sequence[AgentMessage], native: bool) -> tuple[Message, ...]:
    names = {c.call_id: c.name for m in messages for c in m.tool_calls}
    out = []
    for m in messages:
        if native:
            out.append(Message(m.role, m.content, tuple(
                (c.call_id, c.name, c.arguments) for c in m.tool_calls), m.tool_call_id))
        elif m.role == "tool":
            head = AGENT_RESULT_HEAD.format(name=names.get(m.tool_call_id or "", "a tool"))
            out.append(Message("user", head + m.content))
        else:
            out.append(Message(m.role, m.content))
    return tuple(out)


def _calls(text: str) -> tuple[ToolCall, ...] | None:
    try:
        return parse_calls(text)
    except CallParseError:
        return None


class _Trial:
    """The mutable state of one running trial."""

    def __init__(self, provider: Provider, task: AgentTask, limits: AgentLimits,
                 temperature: float, seed: int | None, extra: Mapping[str, Any]) -> None:
        self.provider = provider
        self.task = task
        self.limits = limits
        self.temperature = temperature
        self.seed = seed
        self.extra = dict(extra)
        self.native = bool(getattr(provider, "native_tool_history", False))
        # The provider's own context management is on: carry its compaction items.
        self.carry = CompactionCarry() if extra else None
        self.turns: list[dict[str, Any]] = []
        self.usage = TokenUsage()
        self.latency_ms = 0.0
        self.tool_calls = 0
        self.request_id: str | None = None
        self.final_sent: tuple[str, ...] = ()
        self.final_artifacts: tuple[str, ...] = ()
        self.final_context: str | None = None
        self.prompt_tokens = 0
        self.loop = asyncio.get_running_loop()

    def sending(self, messages: Sequence[AgentMessage], digest: str,
                artifacts: tuple[str, ...] | None = None) -> None:
        """Note the messages of the turn about to be sent (or of a refused decision);
        ``artifacts``: the task's artifacts in them, when the caller has found them."""
        self.final_sent = tuple(m.content for m in messages)
        self.final_artifacts = artifacts if artifacts is not None else _artifact_ids(
            self.task, messages)
        self.final_context = digest

    def add(self, usage: TokenUsage, latency_ms: float) -> None:
        self.usage = self.usage + usage
        self.latency_ms += latency_ms

    def summarizer(self, text: str) -> tuple[str, SummaryCall]:
        """One summary by the trial's own model, from the manager's thread."""
        request = ProviderRequest((Message("system", SUMMARY_SYSTEM), Message("user", text)),
                                  max_output_tokens=SUMMARY_ROOM,
                                  temperature=self.temperature, seed=self.seed)
        try:
            response = asyncio.run_coroutine_threadsafe(self.provider.complete(request),
                                                        self.loop).result()
        except RequestFailed as exc:
            self.add(exc.usage, exc.latency_ms)
            raise
        self.add(response.usage, response.latency_ms)
        return response.text, SummaryCall(response.usage.context_tokens,
                                          response.usage.total_output, response.latency_ms,
                                          response.request_id)

    def outcome(self, stop: str, answer: str | None, error: str | None) -> AgentOutcome:
        return AgentOutcome(stop, answer, error, tuple(self.turns), self.usage,
                            self.latency_ms, self.tool_calls, self.final_sent,
                            self.request_id, self.final_artifacts, self.final_context,
                            self.prompt_tokens)


async def run_agent(provider: Provider, task: AgentTask, manager: ContextManager, *,
                    budget: int | None, tokenizer: Tokenizer,
                    limits: AgentLimits = AgentLimits(), temperature: float = 0.0,
                    seed: int | None = None, extra: Mapping[str, Any] | None = None,
                    params: Mapping[str, Any] | None = None) -> AgentOutcome:
    """Run ``task`` with ``manager`` choosing each turn's messages (see the module);
    ``extra``: the provider's native context-management parameters, sent every turn;
    ``params``: the manager's parameters."""
    trial = _Trial(provider, task, limits, temperature, seed, extra or {})
    conversation: list[AgentMessage] = [AgentMessage("system", task.system),
                                        AgentMessage("user", task.prompt)]
    tools = tuple(t.document for t in task.offered)
    manager_name = str(getattr(manager, "name", "unnamed"))
    for turn in range(limits.max_turns):
        request = ContextRequest(task.task_id, turn, tuple(conversation), tools, budget,
                                 tokenizer, trial.summarizer, params=dict(params or {}))
        try:
            decision = await _decide(manager, manager_name, request, task,
                                     limits.manager_timeout_s)
        except ContextManagerFailure as exc:
            if exc.artifact_ids:
                # Refused for artifacts the task may not send: nothing was sent, and what
                # the manager chose is what ECEB's policy gate judges (fail closed).
                trial.sending(exc.messages, blake3_json(messages_to_json(exc.messages)))
                trial.final_artifacts = tuple(dict.fromkeys(
                    (*trial.final_artifacts, *exc.artifact_ids)))
            return trial.outcome("error", None, exc.error_type)
        except RequestFailed as exc:  # a summarizing manager's own model call
            return trial.outcome("error", None, f"{exc.error_class}: {str(exc)[:200]}")
        record: dict[str, Any] = {
            "turn": turn, "decision": decision_commit(manager_name, turn, decision,
                                                      len(conversation))}
        if request.summaries:
            record["summaries"] = [
                {"input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                 "latency_ms": round(s.latency_ms, 3), "request_id": s.request_id}
                for s in request.summaries]
        chosen = _artifact_ids(task, decision.messages)
        if task.artifacts:
            record["artifacts"] = list(chosen)
        trial.turns.append(record)
        carry = trial.carry
        # With a compaction item carried, what is sent is not the decision's list: its
        # digest and artifacts are those of the messages sent beside the item.
        if carry is None:
            messages, replaced = decision.messages, 0
            trial.sending(messages, decision.messages_blake3, chosen)
        else:
            messages, replaced = carry.messages(decision.messages)
            trial.sending(messages, blake3_json(messages_to_json(messages)))
        trial.prompt_tokens = max(trial.prompt_tokens, decision.tokens)
        sent = ProviderRequest(_sent(messages, trial.native),
                               max_output_tokens=limits.max_output_tokens,
                               temperature=temperature, seed=seed, tools=task.offered,
                               extra=trial.extra,
                               compaction=None if carry is None else carry.item)
        try:
            response = await provider.complete(sent)
        except RequestFailed as exc:
            trial.add(exc.usage, exc.latency_ms)
            record.update(_usage(exc.usage), latency_ms=round(exc.latency_ms, 3),
                          request_id=exc.request_id, error=exc.error_class)
            if carry is not None:
                record["native_context"] = carry.turn_record(replaced, None)
            return trial.outcome("error", None, f"{exc.error_class}: {str(exc)[:200]}")
        if carry is not None:
            record["native_context"] = carry.turn_record(replaced, response.compaction)
            if response.compaction is not None:
                carry.update(response.compaction, conversation, messages)
        trial.add(response.usage, response.latency_ms)
        trial.request_id = response.request_id or trial.request_id
        record.update(_usage(response.usage), latency_ms=round(response.latency_ms, 3),
                      request_id=response.request_id, response_text=response.text)
        calls = _calls(response.text)
        if calls is None:
            # Plain text is a native provider's final answer; in the prompting format it
            # is a reply that is not a call list (a premature stop).
            stop = "final_answer" if trial.native else "invalid_call"
            return trial.outcome(stop, response.text if trial.native else None, None)
        if not calls:
            return trial.outcome("no_action", None, None)
        record["tool_calls"] = [render_calls([c]) for c in calls]
        final = next((c for c in calls if c.name == FINAL_ANSWER), None)
        if final is not None:
            return trial.outcome("final_answer", str(final.arguments.get("answer", "")), None)
        refs = tuple(ToolCallRef(f"call_{turn}_{n}", c.name,
                                 json.dumps(dict(c.arguments), sort_keys=True))
                     for n, c in enumerate(calls))
        conversation.append(AgentMessage("assistant", render_calls(calls), refs))
        for ref, call in zip(refs, calls, strict=True):
            conversation.append(AgentMessage("tool", task.execute(call),
                                             tool_call_id=ref.call_id))
        trial.tool_calls += len(calls)
        if limits.max_context_tokens is not None and \
                trial.usage.context_tokens >= limits.max_context_tokens:
            return trial.outcome("token_limit", None, None)
    return trial.outcome("turn_limit", None, None)


async def _decide(manager: ContextManager, name: str, request: ContextRequest,
                  task: AgentTask | None, timeout_s: float, restricted: Sequence[str] = ()
                  ) -> CheckedDecision:
    """The manager's checked decision, from a daemon thread under ``timeout_s``.

    A manager that never returns cannot be killed in-process, but it no longer holds up
    the run (an ``external:`` command is killed at its own deadline instead).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[CheckedDecision] = loop.create_future()

    def settle(result: CheckedDecision | None, error: BaseException | None) -> None:
        if future.done():
            return  # the deadline passed first
        if error is not None:
            future.set_exception(error)
        else:
            assert result is not None
            future.set_result(result)

    def work() -> None:
        result: CheckedDecision | None = None
        error: BaseException | None = None
        try:
            if task is None:
                result = decide(manager, request, restricted=restricted)
            else:
                result = decide(manager, request, restricted=task.restricted,
                                withheld=task.withheld(), permitted=task.permitted_texts())
        except BaseException as exc:  # handed to the loop: decide() already wrapped it
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=f"ctxbench-context-manager-{name}", daemon=True).start()
    try:
        return await asyncio.wait_for(future, timeout_s)
    except TimeoutError:
        raise ContextManagerFailure(name, "timeout", f"no decision within {timeout_s:g} s") \
            from None


def _usage(usage: TokenUsage) -> dict[str, int]:
    return {"input_tokens": usage.context_tokens, "cached_input_tokens": usage.cached_input,
            "output_tokens": usage.output, "reasoning_tokens": usage.reasoning}


def sent_messages(messages: Sequence[AgentMessage], native: bool) -> tuple[Message, ...]:
    """A decision's messages as a provider receives them: native tool history when
    ``native``, else calls as text and each result as a user message headed
    :data:`~ctxbench.runner.prompt.AGENT_RESULT_HEAD` (what :func:`run_agent` sends)."""
    return _sent(messages, native)


async def decide_in_thread(manager: ContextManager, request: ContextRequest, *,
                           restricted: Sequence[str] = (),
                           timeout_s: float | None = None) -> CheckedDecision:
    """The manager's checked decision as :func:`run_agent` takes it: from a daemon thread,
    a :class:`ContextManagerFailure` (``timeout``) past ``timeout_s`` (default
    :attr:`AgentLimits.manager_timeout_s`)."""
    name = str(getattr(manager, "name", "unnamed"))
    limit = AgentLimits().manager_timeout_s if timeout_s is None else timeout_s
    return await _decide(manager, name, request, None, limit, restricted)
