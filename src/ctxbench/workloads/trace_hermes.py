"""Hermes Agent trajectory files (``trajectory_samples.jsonl``, ``failed_trajectories.jsonl``).

The format is the one Hermes Agent writes (NousResearch/hermes-agent: ``save_trajectory``
in ``agent/trajectory.py``, ``AIAgent._convert_to_trajectory_format`` and
``_format_tools_for_system_message`` in ``run_agent.py``): one JSON object a line,
``{"conversations": [...], "timestamp": ..., "model": ..., "completed": true|false}``,
``conversations`` in ShareGPT form, ``{"from": "system"|"human"|"gpt"|"tool", "value"}``:

- ``system``: the function-calling prompt, the tools as a JSON array on the lines between
  ``<tools>`` and ``</tools>`` (``{"name", "description", "parameters", "required"}``
  each; without that block, each tool called is offered with the arguments it was
  called with);
- ``gpt``: a ``<think>...</think>`` block (reasoning; not part of the message), text, then
  one ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block per call;
- ``tool``: one ``<tool_response>{"tool_call_id", "name", "content"}</tool_response>`` block
  per call, in call order, ``content`` a string or the JSON the tool printed.

Each line is one :class:`~ctxbench.workloads.agent_traces.RecordedTrace` (``completed`` is
its terminal outcome); anything else is a located error (``file:line: field: ...``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import FieldError, JsonLine, iter_jsonl
from ctxbench.workloads.agent_traces import MAX_TRACE_MESSAGES, RecordedTrace, recorded_tools
from ctxbench.workloads.tools import ToolSchema

__all__ = ["read_hermes_trajectories"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)
# The prompt first names the tags in prose ("within <tools> </tools> XML tags"); the
# tools themselves are the block on lines of their own.
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)
_ROLES = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}


def _json_block(where: str, line: int, field: str, text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise FieldError(where, line, field, what, text[:80]) from None


def _tools(where: str, line: int, text: str) -> tuple[ToolSchema, ...] | None:
    block = _TOOLS.search(text)
    if block is None:
        return None
    docs = _json_block(where, line, "conversations[0].value", block.group(1),
                       "a JSON array of tools between <tools> and </tools>")
    if not isinstance(docs, list):
        raise FieldError(where, line, "conversations[0].value", "a JSON array of tools "
                         "between <tools> and </tools>", docs)
    out = []
    for k, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) \
                or not isinstance(doc.get("parameters", {}), dict):
            raise FieldError(where, line, f"conversations[0].value: tools[{k}]",
                             "{name: string, parameters: object}", doc)
        out.append(ToolSchema(doc["name"], str(doc.get("description") or ""),
                              doc.get("parameters") or {}))
    return tuple(out)


def _assistant(where: str, line: int, field: str, value: str, n: int) -> AgentMessage:
    text = _THINK.sub("", value)
    calls = []
    for k, block in enumerate(_CALL.findall(text)):
        call = _json_block(where, line, field, block, "<tool_call> blocks holding JSON")
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) \
                or not isinstance(call.get("arguments", {}), dict):
            raise FieldError(where, line, field, "<tool_call> blocks holding {name: string, "
                             "arguments: object}", call)
        calls.append(ToolCallRef(f"hermes-{n}-{k}", call["name"],
                                 json.dumps(call.get("arguments", {}), sort_keys=True)))
    return AgentMessage("assistant", _CALL.sub("", text).strip(), tuple(calls))


def _results(where: str, line: int, field: str, value: str,
             previous: AgentMessage | None) -> list[AgentMessage]:
    if previous is None or previous.role != "assistant" or not previous.tool_calls:
        raise FieldError(where, line, field, "tool responses right after a gpt message "
                         "that calls tools", value[:80])
    blocks = _RESPONSE.findall(value)
    if not blocks or len(blocks) > len(previous.tool_calls):
        raise FieldError(where, line, field, f"1 to {len(previous.tool_calls)} "
                         "<tool_response> blocks (one per call)", value[:80])
    out = []
    for call, block in zip(previous.tool_calls, blocks, strict=False):
        response = _json_block(where, line, field, block, "<tool_response> blocks holding "
                               "JSON")
        if not isinstance(response, dict) or "content" not in response:
            raise FieldError(where, line, field, "<tool_response> blocks holding {name, "
                             "content}", response)
        if response.get("name") != call.name:
            raise FieldError(where, line, field, f"the response to call {call.name!r}",
                             response.get("name"))
        content = response["content"]
        text = content if isinstance(content, str) else json.dumps(content,
                                                                   ensure_ascii=False)
        out.append(AgentMessage("tool", text, tool_call_id=call.call_id))
    return out


def _trace(item: JsonLine, where: str, stem: str) -> RecordedTrace:
    row, line = item.value, item.line
    conversations = row.get("conversations")
    if not isinstance(conversations, list) or not conversations:
        raise FieldError(where, line, "conversations", "a non-empty array", conversations)
    if len(conversations) > MAX_TRACE_MESSAGES:
        raise FieldError(where, line, "conversations", f"at most {MAX_TRACE_MESSAGES} "
                         "messages", got_text=f"{len(conversations)}")
    completed = row.get("completed")
    if not isinstance(completed, bool):
        raise FieldError(where, line, "completed", "a boolean", completed)
    model = row.get("model")
    if model is not None and not isinstance(model, str):
        raise FieldError(where, line, "model", "a string", model)
    messages: list[AgentMessage] = []
    tools: tuple[ToolSchema, ...] | None = None
    for n, turn in enumerate(conversations):
        field = f"conversations[{n}]"
        if not isinstance(turn, dict) or turn.get("from") not in _ROLES \
                or not isinstance(turn.get("value"), str):
            raise FieldError(where, line, field, "{from: system|human|gpt|tool, value: "
                             "string}", turn)
        role, value = _ROLES[turn["from"]], turn["value"]
        if role == "system":
            if n != 0:
                raise FieldError(where, line, f"{field}.from", "system only first", "system")
            tools = _tools(where, line, value)
            messages.append(AgentMessage("system", value))
        elif role == "user":
            messages.append(AgentMessage("user", value))
        elif role == "assistant":
            messages.append(_assistant(where, line, f"{field}.value", value, n))
        else:
            messages.extend(_results(where, line, f"{field}.value", value,
                                     messages[-1] if messages else None))
    return RecordedTrace(f"{stem}:{line}", "hermes", f"{where}:{line}", model, completed,
                         tuple(messages), tools if tools is not None
                         else recorded_tools(messages))


def read_hermes_trajectories(path: str | Path) -> tuple[RecordedTrace, ...]:
    """Every trajectory of a Hermes Agent JSONL file (see the module doc)."""
    where = str(path)
    return tuple(_trace(item, where, Path(path).stem) for item in iter_jsonl(path))
