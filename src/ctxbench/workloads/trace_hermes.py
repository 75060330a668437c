"""Hermes Agent trajectory files (``trajectory_samples.jsonl``, ``failed_trajectories.jsonl``,
the batch runner's ``trajectories.jsonl`` and the trajectory compressor's output).

The format is the one Hermes Agent writes (NousResearch/hermes-agent: ``save_trajectory``
in ``agent/trajectory.py``; ``AIAgent._convert_to_trajectory_format`` and
``_format_tools_for_system_message`` in ``run_agent.py``; ``_process_batch_worker`` in
``batch_runner.py``; ``trajectory_compressor.py``): one JSON object a line,
``{"conversations": [...], "completed": true|false, ...}`` with ``"model"`` (the agent's
file) or ``"metadata": {"model", ...}`` and ``"partial"`` (the batch runner's: the run
stopped on invalid tool calls), other fields (``timestamp``, ``prompt_index``,
``api_calls``, ``toolsets_used``, ``tool_stats``, ...) not read. ``conversations`` is in
ShareGPT form, ``{"from": "system"|"human"|"gpt"|"tool", "value"}``:

- ``system``: the function-calling prompt, the tools as a JSON array on the lines between
  ``<tools>`` and ``</tools>`` (``{"name", "description", "parameters", "required"}``
  each; without that block, each tool called is offered with the arguments it was
  called with);
- ``human``: the text, or the content parts of a multimodal message (text parts; image
  parts, which the writer turns into ``[screenshot]`` text, or older ones it kept, are
  the text ``[image]``, never decoded); the compressor's summary turn is one of these;
- ``gpt``: a ``<think>...</think>`` block (reasoning; not part of the message; one left
  open by an unterminated ``<REASONING_SCRATCHPAD>`` runs to the first call), text, then
  one ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block per call, or the
  calls as a structured ``tool_calls`` array of ``{"id", "function": {"name",
  "arguments"}}`` (as the project's batch-processing docs draw it); a turn the agent's own
  context compressor wrote (``[CONTEXT SUMMARY]:`` / ``[CONTEXT COMPACTION``) is history,
  not a move (``not_moves``);
- ``tool``: one ``<tool_response>{"tool_call_id", "name", "content"}</tool_response>`` block
  per call, in call order, ``content`` a string or the JSON the tool printed (a response
  past the calls, which the writer names ``unknown``, is listed in ``skipped``); after
  structured calls, a value without blocks answers the one call.

Each line is one :class:`~ctxbench.workloads.agent_traces.RecordedTrace` (``completed``,
and not ``partial``, is its terminal outcome); anything else is a located error
(``file:line: field: ...``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import FieldError, JsonLine, iter_jsonl
from ctxbench.workloads.agent_traces import MAX_TRACE_MESSAGES, RecordedTrace, recorded_tools
from ctxbench.workloads.tools import ToolSchema

__all__ = ["read_hermes_trajectories"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_OPEN_THINK = re.compile(r"<think>.*?(?=<tool_call>|\Z)", re.DOTALL)
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)
# The prompt first names the tags in prose ("within <tools> </tools> XML tags"); the
# tools themselves are the block on lines of their own.
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)
_ROLES = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}
_SUMMARIES = ("[CONTEXT SUMMARY]:", "[CONTEXT COMPACTION")
_IMAGE_PARTS = ("image_url", "image", "input_image")


@dataclass
class _Line:
    where: str
    line: int
    messages: list[AgentMessage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_moves: set[int] = field(default_factory=set)

    def fail(self, field_name: str, expected: str, got: Any) -> FieldError:
        return FieldError(self.where, self.line, field_name, expected, got)

    def json_block(self, field_name: str, text: str, what: str) -> Any:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting past the stack
            raise self.fail(field_name, what, text[:80]) from None


def _tools(t: _Line, text: str) -> tuple[ToolSchema, ...] | None:
    block = _TOOLS.search(text)
    if block is None:
        return None
    what = "a JSON array of tools between <tools> and </tools>"
    docs = t.json_block("conversations[0].value", block.group(1), what)
    if not isinstance(docs, list):
        raise t.fail("conversations[0].value", what, docs)
    out = []
    for k, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) \
                or not isinstance(doc.get("parameters", {}), dict):
            raise t.fail(f"conversations[0].value: tools[{k}]",
                         "{name: string, parameters: object}", doc)
        out.append(ToolSchema(doc["name"], str(doc.get("description") or ""),
                              doc.get("parameters") or {}))
    return tuple(out)


def _human(t: _Line, field_name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise t.fail(field_name, "a string or an array of content parts", value)
    texts = []
    for k, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in _IMAGE_PARTS:
            texts.append("[image]")  # a placeholder: the image data is never decoded
        else:
            raise t.fail(f"{field_name}[{k}]", "a text {type, text: string} or image part",
                         part)
    return "\n".join(texts)


def _structured(t: _Line, field_name: str, raw: Any, n: int) -> list[ToolCallRef]:
    if not isinstance(raw, list):
        raise t.fail(field_name, "an array of tool calls", raw)
    calls = []
    for k, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str):
            arguments = t.json_block(f"{field_name}[{k}].function.arguments", arguments,
                                     "a JSON object")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) \
                or not isinstance(arguments, dict):
            raise t.fail(f"{field_name}[{k}]", "{function: {name: string, arguments: "
                         "object or its JSON}}", call)
        assert isinstance(call, dict)
        call_id = call.get("id")
        calls.append(ToolCallRef(call_id if isinstance(call_id, str) and call_id
                                 else f"hermes-{n}-{k}", function["name"],
                                 json.dumps(arguments, sort_keys=True)))
    return calls


def _assistant(t: _Line, turn: dict[str, Any], n: int) -> None:
    field_name = f"conversations[{n}].value"
    text = _OPEN_THINK.sub("", _THINK.sub("", turn["value"]))
    calls = []
    for k, block in enumerate(_CALL.findall(text)):
        call = t.json_block(field_name, block, "<tool_call> blocks holding JSON")
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) \
                or not isinstance(call.get("arguments", {}), dict):
            raise t.fail(field_name, "<tool_call> blocks holding {name: string, "
                         "arguments: object}", call)
        calls.append(ToolCallRef(f"hermes-{n}-{k}", call["name"],
                                 json.dumps(call.get("arguments", {}), sort_keys=True)))
    if "tool_calls" in turn:
        if calls:
            raise t.fail(f"conversations[{n}].tool_calls", "calls in one form (<tool_call> "
                         "blocks or tool_calls), not both", turn["tool_calls"])
        calls = _structured(t, f"conversations[{n}].tool_calls", turn["tool_calls"], n)
    content = _CALL.sub("", text).strip()
    if content.startswith(_SUMMARIES):  # the agent's context compressor wrote it
        t.not_moves.add(len(t.messages))
    t.messages.append(AgentMessage("assistant", content, tuple(calls)))


def _response(t: _Line, field_name: str, block: str, call: ToolCallRef) -> AgentMessage:
    response = t.json_block(field_name, block, "<tool_response> blocks holding JSON")
    if not isinstance(response, dict) or "content" not in response:
        raise t.fail(field_name, "<tool_response> blocks holding {name, content}", response)
    if response.get("name") != call.name:
        raise t.fail(field_name, f"the response to call {call.name!r}", response.get("name"))
    content = response["content"]
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return AgentMessage("tool", text, tool_call_id=call.call_id)


def _results(t: _Line, turn: dict[str, Any], n: int, structured: bool) -> None:
    field_name, value = f"conversations[{n}].value", turn["value"]
    previous = t.messages[-1] if t.messages else None
    if previous is None or previous.role != "assistant" or not previous.tool_calls:
        raise t.fail(field_name, "tool responses right after a gpt message that calls "
                     "tools", value[:80])
    calls = previous.tool_calls
    blocks = _RESPONSE.findall(value)
    if not blocks and structured and len(calls) == 1:  # the plain result of the one call
        t.messages.append(AgentMessage("tool", value, tool_call_id=calls[0].call_id))
        return
    if not blocks:
        raise t.fail(field_name, f"1 to {len(calls)} <tool_response> blocks (one per "
                     "call)", value[:80])
    for k, block in enumerate(blocks):
        if k < len(calls):
            t.messages.append(_response(t, field_name, block, calls[k]))
            continue
        extra = t.json_block(field_name, block, "<tool_response> blocks holding JSON")
        if not isinstance(extra, dict) or extra.get("name") != "unknown":
            raise t.fail(field_name, f"1 to {len(calls)} <tool_response> blocks (one per "
                         "call; the writer names one past them 'unknown')", value[:80])
        t.skipped.append(f"line {t.line}: tool response past the calls (conversations[{n}], "
                         f"block {k + 1})")


def _outcome(t: _Line, row: dict[str, Any]) -> tuple[bool, str | None]:
    completed, partial = row.get("completed"), row.get("partial", False)
    if not isinstance(completed, bool):
        raise t.fail("completed", "a boolean", completed)
    if not isinstance(partial, bool):
        raise t.fail("partial", "a boolean", partial)
    metadata = row.get("metadata", {})
    if not isinstance(metadata, dict):
        raise t.fail("metadata", "an object", metadata)
    # The agent's file names the model at the top (null when it had none to name); the
    # batch runner's in its metadata.
    model = row.get("model")
    at = "model"
    if model is None:
        model, at = metadata.get("model"), "metadata.model"
    if model is not None and not isinstance(model, str):
        raise t.fail(at, "a string", model)
    return completed and not partial, model


def _trace(item: JsonLine, where: str, stem: str) -> RecordedTrace:
    row = item.value
    t = _Line(where, item.line)
    conversations = row.get("conversations")
    if not isinstance(conversations, list) or not conversations:
        raise t.fail("conversations", "a non-empty array", conversations)
    if len(conversations) > MAX_TRACE_MESSAGES:
        raise FieldError(where, item.line, "conversations", f"at most {MAX_TRACE_MESSAGES} "
                         "messages", got_text=f"{len(conversations)}")
    completed, model = _outcome(t, row)
    tools: tuple[ToolSchema, ...] | None = None
    structured = False
    for n, turn in enumerate(conversations):
        field_name = f"conversations[{n}]"
        if not isinstance(turn, dict) or turn.get("from") not in _ROLES \
                or not isinstance(turn.get("value"), (str, list)) \
                or (isinstance(turn["value"], list) and turn["from"] != "human"):
            raise t.fail(field_name, "{from: system|human|gpt|tool, value: string (a "
                         "human's: or content parts)}", turn)
        role = _ROLES[turn["from"]]
        if role == "system":
            if n != 0:
                raise t.fail(f"{field_name}.from", "system only first", "system")
            tools = _tools(t, turn["value"])
            t.messages.append(AgentMessage("system", turn["value"]))
        elif role == "user":
            t.messages.append(AgentMessage("user", _human(t, f"{field_name}.value",
                                                          turn["value"])))
        elif role == "assistant":
            _assistant(t, turn, n)
            structured = "tool_calls" in turn
        else:
            _results(t, turn, n, structured)
    return RecordedTrace(f"{stem}:{item.line}", "hermes", f"{where}:{item.line}", model,
                         completed, tuple(t.messages),
                         tools if tools is not None else recorded_tools(t.messages),
                         tuple(t.skipped), frozenset(t.not_moves))


def read_hermes_trajectories(path: str | Path) -> tuple[RecordedTrace, ...]:
    """Every trajectory of a Hermes Agent JSONL file (see the module doc)."""
    where = str(path)
    return tuple(_trace(item, where, Path(path).stem) for item in iter_jsonl(path))
