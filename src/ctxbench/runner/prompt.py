"""The prompt every condition receives: one template, only the context differs."""

from __future__ import annotations

from collections.abc import Sequence

from ctxbench.core import blake3_hex
from ctxbench.runner.providers.base import Message

__all__ = ["ABSTAIN_TEXT", "PROMPT_TEMPLATE_DIGEST", "SYSTEM_PROMPT", "build_messages",
           "split_prompt"]

ABSTAIN_TEXT = "I cannot answer from the provided context."

SYSTEM_PROMPT = (
    "Answer the question by copying the one sentence of the context that answers it. "
    "Example: if the context says \"The cafeteria opens at 11:30.\" and the question is "
    "\"When does the cafeteria open?\", answer \"The cafeteria opens at 11:30.\" "
    f"If the context does not contain the answer, reply exactly: {ABSTAIN_TEXT}"
)

_CONTEXT_HEAD = "Context:\n"
_QUESTION_HEAD = "\n\nQuestion: "

PROMPT_TEMPLATE_DIGEST = blake3_hex(
    (SYSTEM_PROMPT + "\0" + _CONTEXT_HEAD + "{context}" + _QUESTION_HEAD + "{question}")
    .encode("utf-8"))


def build_messages(context: str, question: str) -> tuple[Message, ...]:
    """System instruction + user message holding the context and then the question."""
    return (Message("system", SYSTEM_PROMPT),
            Message("user", _CONTEXT_HEAD + context + _QUESTION_HEAD + question))


def split_prompt(messages: Sequence[Message]) -> tuple[str, str]:
    """Recover (context, question) from messages built by :func:`build_messages`."""
    user = next((m.content for m in messages if m.role == "user"), "")
    body = user[len(_CONTEXT_HEAD):] if user.startswith(_CONTEXT_HEAD) else user
    context, _, question = body.rpartition(_QUESTION_HEAD)
    return context, question
