"""The context-manager interface, and the checks ctxbench applies to each turn's decision.

Before every model turn of an agent, a context manager receives a
:class:`ContextRequest` (the conversation so far, the tools offered, the budget and the
declared tokenizer) and returns the messages to send::

    class KeepRecent:
        name = "keep-recent"
        budgeted = True
        summarizes = False
        summary = "the system prompt, the task and the newest steps"

        def manage(self, request: ContextRequest) -> ContextDecision:
            head, steps = request.head(), request.steps()
            return ContextDecision((*head, *(m for s in steps[-2:] for m in s)))

ctxbench trusts none of it (:func:`check_decision`): the answer must be a
:class:`ContextDecision` (or a sequence of :class:`AgentMessage`) whose roles are known,
that keeps the conversation's first system message and its last message verbatim, that
answers no tool call it does not show, and that holds no text the task restricts; it is
recounted with the declared tokenizer and refused over the budget. A refusal or an
exception raises :class:`ContextManagerFailure` (``kind`` one of :data:`FAILURE_KINDS`),
which is that trial's failure. Every accepted decision is committed
(:func:`decision_commit`): the BLAKE3 of the messages sent, their token count, how many
of the conversation's messages were kept, and the manager's ``details``.

A manager that declares ``summarizes = True`` may call ``request.summarize(text)``: the
runner sends that text to the trial's own provider, and the tokens of that call are
counted in the trial (:attr:`ContextRequest.summaries`). No other manager may call a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ctxbench.compiler.restricted import shares_restricted_run
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import RuntimeFailure, blake3_json

__all__ = [
    "FAILURE_KINDS",
    "ROLES",
    "AgentMessage",
    "CheckedDecision",
    "ContextDecision",
    "ContextManager",
    "ContextManagerFailure",
    "ContextRequest",
    "SummaryCall",
    "ToolCallRef",
    "check_decision",
    "decide",
    "decision_commit",
    "message_texts",
    "message_tokens",
    "messages_from_json",
    "messages_to_json",
    "withheld_in",
]

ROLES = ("system", "user", "assistant", "tool")
FAILURE_KINDS = ("exception", "timeout", "invalid_output", "forbidden_text", "over_budget")
#: The most characters a decision's ``details`` may hold in all (names and values).
MAX_DETAILS_CHARS = 4096


class ContextManagerFailure(RuntimeFailure):
    """A manager's decision was refused or never came; ``kind`` is one of FAILURE_KINDS."""

    def __init__(self, manager: str, kind: str, reason: str, *,
                 artifact_ids: tuple[str, ...] = (),
                 messages: tuple[AgentMessage, ...] = ()) -> None:
        reason = " ".join(reason.split())[:300]
        super().__init__(f"context manager {manager}: {kind}: {reason}")
        self.manager = manager
        self.kind = kind
        self.reason = reason
        #: For a ``forbidden_text`` refusal of withheld artifacts: which ones the refused
        #: messages held, and those messages (never sent; ECEB's policy gate is shown them).
        self.artifact_ids = artifact_ids
        self.messages = messages

    @property
    def error_type(self) -> str:
        """The trial's ``error_type``: ``context_manager_failed:KIND: reason``."""
        return f"context_manager_failed:{self.kind}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    """One tool call an assistant message made: its id, function and JSON arguments."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """One message of an agent's conversation.

    An assistant message that calls tools lists them in ``tool_calls`` (its ``content``
    is their canonical text); a ``tool`` message answers the call ``tool_call_id``.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCallRef, ...] = ()
    tool_call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [{"id": c.call_id, "name": c.name, "arguments": c.arguments}
                                 for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


def message_texts(messages: Sequence[AgentMessage]) -> list[str]:
    """Every text the messages carry: each content and each call's arguments (what the
    text checks and the artifact attribution read)."""
    return [t for m in messages for t in (m.content, *(c.arguments for c in m.tool_calls))]


def messages_to_json(messages: Sequence[AgentMessage]) -> list[dict[str, Any]]:
    """The JSON form of a message list (what the subprocess protocol and digests use)."""
    return [m.to_json() for m in messages]


def _fail(name: str, where: str, expected: str, got: Any) -> ContextManagerFailure:
    shown = json.dumps(got)[:60] if isinstance(got, str | int | float | bool) or got is None \
        else type(got).__name__
    return ContextManagerFailure(name, "invalid_output", f"{where}: expected {expected}, "
                                 f"got {shown}")


def messages_from_json(name: str, value: Any) -> tuple[AgentMessage, ...]:
    """Messages from their JSON form; ContextManagerFailure (invalid_output) at the first
    thing that is not one, named by its JSON pointer."""
    if not isinstance(value, list):
        raise _fail(name, "/messages", "an array of messages", value)
    out = []
    for n, item in enumerate(value):
        where = f"/messages/{n}"
        if not isinstance(item, dict):
            raise _fail(name, where, "a message object", item)
        extra = set(item) - {"role", "content", "tool_calls", "tool_call_id"}
        if extra:
            raise _fail(name, f"{where}/{sorted(extra)[0]}", "no such field", sorted(extra)[0])
        calls = []
        raw_calls = item.get("tool_calls", [])
        if not isinstance(raw_calls, list):
            raise _fail(name, f"{where}/tool_calls", "an array", raw_calls)
        for k, call in enumerate(raw_calls):
            if not isinstance(call, dict) or not all(
                    isinstance(call.get(f), str) for f in ("id", "name", "arguments")):
                raise _fail(name, f"{where}/tool_calls/{k}",
                            "{id: string, name: string, arguments: string}", call)
            calls.append(ToolCallRef(call["id"], call["name"], call["arguments"]))
        call_id = item.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise _fail(name, f"{where}/tool_call_id", "a string", call_id)
        out.append(AgentMessage(item.get("role"), item.get("content"),  # type: ignore[arg-type]
                                tuple(calls), call_id))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ContextDecision:
    """The messages to send this turn; ``details`` (name, value) go into the turn's commit."""

    messages: tuple[AgentMessage, ...]
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One summarization a manager asked for, with the provider-reported usage."""

    input_tokens: int
    output_tokens: int
    latency_ms: float
    request_id: str | None


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """Everything a context manager may use for one turn (``turn`` counts from 0);
    ``params`` are the condition's parameters, the declared defaults filled in
    (:mod:`ctxbench.compiler.context_managers.params`)."""

    task_id: str
    turn: int
    messages: tuple[AgentMessage, ...]
    tools: tuple[dict[str, Any], ...]
    budget: int | None
    tokenizer: Tokenizer
    summarizer: Callable[[str], tuple[str, SummaryCall]] | None = None
    summaries: list[SummaryCall] = field(default_factory=list, compare=False, repr=False)
    params: Mapping[str, Any] = field(default_factory=dict)

    def count(self, text: str) -> int:
        """Tokens of ``text`` under the declared tokenizer (the count ctxbench enforces)."""
        return self.tokenizer.count(text)

    def count_messages(self, messages: Sequence[AgentMessage]) -> int:
        """Tokens of a message list as ctxbench counts it (:func:`message_tokens`)."""
        return message_tokens(messages, self.tokenizer)

    def head(self) -> tuple[AgentMessage, ...]:
        """The leading system message(s) and the first user message (the task)."""
        out = []
        for m in self.messages:
            out.append(m)
            if m.role == "user":
                break
        return tuple(out)

    def steps(self) -> tuple[tuple[AgentMessage, ...], ...]:
        """The messages after :meth:`head`, grouped: each group opens with a message that
        is not a tool result and holds the tool results that answer it."""
        groups: list[list[AgentMessage]] = []
        for m in self.messages[len(self.head()):]:
            if m.role == "tool" and groups:
                groups[-1].append(m)
            else:
                groups.append([m])
        return tuple(tuple(g) for g in groups)

    def summarize(self, text: str) -> str:
        """A summary of ``text`` written by the trial's own model (managers that declare
        ``summarizes`` only); its tokens are counted in the trial."""
        if self.summarizer is None:
            raise RuntimeError("this context manager did not declare summarizes = True")
        summary, call = self.summarizer(text)
        self.summaries.append(call)
        return summary


@runtime_checkable
class ContextManager(Protocol):
    """A context manager: ``manage`` is called before every model turn."""

    name: str
    budgeted: bool
    summarizes: bool
    summary: str

    def manage(self, request: ContextRequest) -> ContextDecision | Sequence[AgentMessage]: ...


def _count_text(m: AgentMessage) -> str:
    calls = "".join(f"\n{c.name}({c.arguments})" for c in m.tool_calls)
    return f"{m.role}\n{m.content}{calls}"


def message_tokens(messages: Sequence[AgentMessage], tokenizer: Tokenizer) -> int:
    """Tokens of a message list: each message's role, content and calls, counted apart."""
    return sum(tokenizer.count(_count_text(m)) for m in messages)


@dataclass(frozen=True, slots=True)
class CheckedDecision:
    """A decision that passed every check, with ctxbench's own count and digest."""

    messages: tuple[AgentMessage, ...]
    tokens: int
    messages_blake3: str
    kept: int
    details: tuple[tuple[str, str], ...]


def _shape(name: str, result: Any) -> tuple[tuple[AgentMessage, ...], tuple[tuple[str, str], ...]]:
    if isinstance(result, ContextDecision):
        messages: Any = result.messages
        raw_details: Any = result.details
    else:
        messages, raw_details = result, ()
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise _fail(name, "messages", "a sequence of AgentMessage", messages)
    for n, m in enumerate(messages):
        if not isinstance(m, AgentMessage):
            raise _fail(name, f"messages[{n}]", "an AgentMessage", m)
        if m.role not in ROLES:
            raise _fail(name, f"messages[{n}].role", f"one of {', '.join(ROLES)}", m.role)
        if not isinstance(m.content, str):
            raise _fail(name, f"messages[{n}].content", "a string", m.content)
    try:
        details = tuple((str(k), str(v)) for k, v in raw_details)
    except (TypeError, ValueError):
        raise _fail(name, "details", "(name, value) pairs", raw_details) from None
    if sum(len(k) + len(v) for k, v in details) > MAX_DETAILS_CHARS:
        raise ContextManagerFailure(name, "invalid_output", f"details: expected at most "
                                    f"{MAX_DETAILS_CHARS} characters in all")
    return tuple(messages), details


def withheld_in(texts: Sequence[str], withheld: Mapping[str, str],
                permitted: Sequence[str]) -> tuple[str, ...]:
    """The ids of the ``withheld`` artifacts (id -> text) some of ``texts`` holds: a run
    of :data:`~ctxbench.compiler.restricted.WINDOW` characters of the artifact's text that
    no ``permitted`` text also holds (whitespace and ASCII case ignored), so a part of it
    counts as much as the whole."""
    permitted_bytes = [p.encode("utf-8") for p in permitted]
    return tuple(a for a, text in withheld.items()
                 if text and shares_restricted_run(texts, (text.encode("utf-8"),),
                                                   permitted_bytes))


def check_decision(name: str, request: ContextRequest, result: Any, *,
                   restricted: Sequence[str] = (), withheld: Mapping[str, str] | None = None,
                   permitted: Sequence[str] = ()) -> CheckedDecision:
    """Check, recount and digest what a manager returned (see the module docstring).

    ``restricted``: text the task forbids sending (a credential a tool printed); a
    decision sharing a run of it (:func:`ctxbench.compiler.restricted.
    shares_restricted_run`) is refused as ``forbidden_text``. ``withheld``: the artifacts
    (id -> text) the task may not send (a classification it does not allow, or denied);
    a decision holding part of one (:func:`withheld_in`, runs that a ``permitted`` text
    also holds aside) is refused as ``forbidden_text``, the failure naming the artifacts.
    """
    messages, details = _shape(name, result)
    given = request.messages
    if not messages:
        raise ContextManagerFailure(name, "invalid_output", "messages: expected at least "
                                    "the conversation's last message, got none")
    if given and given[0].role == "system" and messages[0] != given[0]:
        raise ContextManagerFailure(name, "invalid_output", "messages[0]: expected the "
                                    "conversation's system message, unchanged")
    if given and messages[-1] != given[-1]:
        raise ContextManagerFailure(name, "invalid_output", "the last message: expected the "
                                    "conversation's last message, unchanged")
    shown: set[str] = set()
    for n, m in enumerate(messages):
        if m.role == "tool" and m.tool_call_id not in shown:
            raise ContextManagerFailure(name, "invalid_output", f"messages[{n}]: a tool "
                                        f"result for {str(m.tool_call_id)[:40]!r}, a call no "
                                        "earlier message shows")
        shown.update(c.call_id for c in m.tool_calls)
    texts = message_texts(messages)
    # The withheld artifacts a refused decision holds are named whatever refuses it, so
    # that ECEB's policy gate sees the violation (fail closed).
    held = withheld_in(texts + [v for _, v in details], withheld, permitted) \
        if withheld else ()
    secrets = [s.encode("utf-8") for s in restricted if s]
    if secrets and (any(s in t for s in restricted if s for t in texts)
                    or shares_restricted_run(texts + [v for _, v in details], secrets, ())):
        raise ContextManagerFailure(name, "forbidden_text", "the messages or details hold "
                                    "text the task restricts", artifact_ids=held,
                                    messages=messages if held else ())
    if held:
        named = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        raise ContextManagerFailure(
            name, "forbidden_text", f"the messages or details hold text of artifact(s) "
            f"{named}, which the task does not allow", artifact_ids=held, messages=messages)
    tokens = message_tokens(messages, request.tokenizer)
    if request.budget is not None and tokens > request.budget:
        raise ContextManagerFailure(name, "over_budget", f"{tokens} tokens "
                                    f"({request.tokenizer.id}) exceed the budget "
                                    f"{request.budget}")
    kept = sum(1 for m in messages if m in given)
    return CheckedDecision(messages, tokens, blake3_json(messages_to_json(messages)), kept,
                           details)


def decision_commit(manager: str, turn: int, decision: CheckedDecision,
                    conversation: int) -> dict[str, Any]:
    """The record of one turn's decision (written into the trial, one per turn)."""
    out: dict[str, Any] = {"turn": turn, "manager": manager,
                           "messages_blake3": decision.messages_blake3,
                           "tokens": decision.tokens, "messages": len(decision.messages),
                           "kept": decision.kept, "conversation": conversation}
    if decision.details:
        out["details"] = dict(decision.details)
    return out


def decide(manager: ContextManager, request: ContextRequest, *,
           restricted: Sequence[str] = (), withheld: Mapping[str, str] | None = None,
           permitted: Sequence[str] = ()) -> CheckedDecision:
    """Ask ``manager`` for this turn's messages, then check them (:func:`check_decision`).

    Any exception it raises (``BaseException`` but ``KeyboardInterrupt``) is a
    :class:`ContextManagerFailure` of kind ``exception``; a manager that did not declare
    ``summarizes`` gets no summarizer.
    """
    name = str(getattr(manager, "name", "unnamed"))
    if not getattr(manager, "summarizes", False) and request.summarizer is not None:
        request = replace(request, summarizer=None)
    try:
        result = manager.manage(request)
    except (ContextManagerFailure, KeyboardInterrupt):
        raise
    except BaseException as exc:  # SystemExit too: this trial's failure, not the run's
        raise ContextManagerFailure(name, "exception", f"{type(exc).__name__}: {exc}") from exc
    return check_decision(name, request, result, restricted=restricted, withheld=withheld,
                          permitted=permitted)
