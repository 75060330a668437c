"""A provider's own context management in an agent trial: the request parameters that turn
it on, and the compaction items it returns, carried into the next turns.

:func:`native_context` gives what an agent's ``native_context`` condition adds to every
request: Anthropic's context editing (clearing old tool results), or on the OpenAI
Responses API ``truncation: auto`` and server-side compaction (``context_management``,
its ``compact_threshold`` the condition's budget, else
:data:`~ctxbench.runner.providers.openai_responses.DEFAULT_COMPACT_THRESHOLD`).

When a response carries a ``compaction`` item (the server compacted the input it was
sent), ctxbench sends that item on every later turn in place of what it replaced, as
stateless input-array chaining asks: the context manager still decides over the whole
conversation, and of its decision the system message and every message the item does not
cover are sent after the item. The item covers everything sent on the turn that produced
it and every message of the conversation up to then, including rewritten forms of them (a
tool result of an earlier call, an assistant message whose calls are all earlier ones),
so no result is ever sent without its call. A later compaction replaces the earlier item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage
from ctxbench.core import InputError, sha256_hex
from ctxbench.runner.providers.base import Provider

__all__ = ["CompactionCarry", "compaction_summary", "native_context"]


def native_context(provider: Provider, condition: str, budget: int | None = None
                   ) -> dict[str, Any]:
    """The request parameters that turn on ``provider``'s own context management.

    A provider offers them as ``native_context_management``: a mapping, or a method of
    the condition's budget returning one (None where its current API has none). Raises
    InputError where there is nothing ctxbench can turn on.
    """
    offered = getattr(provider, "native_context_management", None)
    parameters = offered(budget) if callable(offered) else offered
    if not isinstance(parameters, Mapping):
        raise InputError(
            f"condition {condition}: native_context: provider {provider.name} has no context "
            "management ctxbench can turn on (supported: anthropic, whose context editing "
            'clears old tool results; openai with [model] api = "responses", whose '
            "truncation and server-side compaction the Responses API offers; Chat "
            "Completions has neither)")
    return dict(parameters)


def compaction_summary(item: Mapping[str, Any]) -> dict[str, Any]:
    """What a trial records of a compaction item: its id and the size and SHA-256 of its
    opaque ``encrypted_content`` (never the content)."""
    content = str(item.get("encrypted_content", ""))
    return {"id": item.get("id"), "encrypted_content_chars": len(content),
            "encrypted_content_sha256": sha256_hex(content.encode("utf-8"))}


class CompactionCarry:
    """One trial's latest compaction item and what it covers (see the module)."""

    def __init__(self) -> None:
        self.item: dict[str, Any] | None = None
        self._covered: set[AgentMessage] = set()
        self._calls: set[str] = set()

    def _replaced(self, m: AgentMessage) -> bool:
        if m in self._covered:
            return True
        if m.role == "tool":
            return m.tool_call_id in self._calls
        return bool(m.tool_calls) and all(c.call_id in self._calls for c in m.tool_calls)

    def messages(self, decision: Sequence[AgentMessage]) -> tuple[tuple[AgentMessage, ...], int]:
        """The decision's messages to send after the item, and how many it replaced."""
        if self.item is None:
            return tuple(decision), 0
        kept = tuple(m for n, m in enumerate(decision)
                     if (n == 0 and m.role == "system") or not self._replaced(m))
        return kept, len(decision) - len(kept)

    def turn_record(self, replaced: int, compaction: Mapping[str, Any] | None
                    ) -> dict[str, Any]:
        """A turn's ``native_context`` record: the item sent (if any) and how many of the
        decision's messages it replaced, and whether the server compacted this turn."""
        return {"compaction_sent": None if self.item is None else compaction_summary(self.item),
                "replaced_messages": replaced, "compacted": compaction is not None,
                "compaction": None if compaction is None else compaction_summary(compaction)}

    def update(self, compaction: Mapping[str, Any], conversation: Sequence[AgentMessage],
               sent: Sequence[AgentMessage]) -> None:
        """Carry ``compaction``, which replaced ``sent`` (and the item sent with it) on a
        turn whose conversation was ``conversation``."""
        self.item = dict(compaction)
        self._covered.update(conversation)
        self._covered.update(sent)
        self._calls.update(c.call_id for m in conversation for c in m.tool_calls)
