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

_QUESTION_FIRST = "Question: "
_CONTEXT_HEAD = "\n\nContext:\n"
_QUESTION_HEAD = "\n\nQuestion: "

PROMPT_TEMPLATE_DIGEST = blake3_hex(
    (SYSTEM_PROMPT + "\0" + _QUESTION_FIRST + "{question}" + _CONTEXT_HEAD + "{context}"
     + _QUESTION_HEAD + "{question}").encode("utf-8"))


def build_messages(context: str, question: str) -> tuple[Message, ...]:
    """System instruction + user message: the question, the context, the question again.

    The question comes first so that the model reads the context knowing what it looks
    for, and last so that the answer follows it.
    """
    return (Message("system", SYSTEM_PROMPT),
            Message("user", _QUESTION_FIRST + question + _CONTEXT_HEAD + context
                    + _QUESTION_HEAD + question))


def split_prompt(messages: Sequence[Message]) -> tuple[str, str]:
    """Recover (context, question) from messages built by :func:`build_messages`."""
    user = next((m.content for m in messages if m.role == "user"), "")
    head, found, body = user.partition(_CONTEXT_HEAD)
    if not found or not head.startswith(_QUESTION_FIRST):
        body = user
    context, _, question = body.rpartition(_QUESTION_HEAD)
    return context, question
