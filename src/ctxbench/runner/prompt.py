"""The prompt every condition receives: one template, only the context differs.

Tool-schema tasks (BFCL) get :data:`TOOL_SYSTEM_PROMPT` and the task's own turns; the
schemas travel as the request's ``tools``. Providers without native tool calls show them
in the prompt instead (:func:`prompting_messages`): the format instruction and one
canonical JSON schema per line are appended to the system message, and the answer is
read back from the Python-list call format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxbench.core import blake3_hex
from ctxbench.runner.providers.base import Message

if TYPE_CHECKING:
    from ctxbench.workloads.tools import ToolSchema

__all__ = ["ABSTAIN_TEXT", "AGENT_RESULT_HEAD", "PROMPT_TEMPLATE_DIGEST", "SYSTEM_PROMPT",
           "TOOL_FORMAT_PROMPT", "TOOL_SYSTEM_PROMPT", "build_messages", "build_tool_messages",
           "prompting_messages", "split_prompt"]

ABSTAIN_TEXT = "I cannot answer from the provided context."
#: How a tool's result is shown, as a user message, to a provider without native tool
#: messages (:mod:`ctxbench.runner.agent`).
AGENT_RESULT_HEAD = "Result of {name}:\n"

SYSTEM_PROMPT = (
    "Answer the question by copying the one sentence of the context that answers it. "
    "Example: if the context says \"The cafeteria opens at 11:30.\" and the question is "
    "\"When does the cafeteria open?\", answer \"The cafeteria opens at 11:30.\" "
    f"If the context does not contain the answer, reply exactly: {ABSTAIN_TEXT}"
)

TOOL_SYSTEM_PROMPT = (
    "You are given a request and a set of functions. Make the function call(s) that "
    "fulfil the request, with parameter values taken from the request. If no function "
    "fits the request, or it lacks a required parameter, call no function and say so."
)
TOOL_FORMAT_PROMPT = (
    "Reply with the calls only, as a Python list: "
    "[func_name1(param1=value1, param2=value2), func_name2(param=value)]. "
    "Functions available (one JSON schema per line):\n"
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


def build_tool_messages(turns: Sequence[tuple[str, str]]) -> tuple[Message, ...]:
    """The tool system prompt (plus the task's own system turns), then the task's turns."""
    own = [content for role, content in turns if role == "system"]
    system = "\n\n".join([TOOL_SYSTEM_PROMPT, *own])
    return (Message("system", system),
            *(Message(role, content) for role, content in turns if role != "system"))


def prompting_messages(messages: Sequence[Message], tools: Sequence[ToolSchema]
                       ) -> tuple[Message, ...]:
    """``messages`` with the tool schemas and the call format appended to the system turn."""
    listing = TOOL_FORMAT_PROMPT + "\n".join(t.text for t in tools)
    out = list(messages)
    for index, message in enumerate(out):
        if message.role == "system":
            out[index] = Message("system", message.content + "\n\n" + listing)
            return tuple(out)
    return (Message("system", listing), *out)
