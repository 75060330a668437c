"""OpenClaw session transcripts (``~/.openclaw/agents/<agent>/sessions/<session-id>.jsonl``).

OpenClaw writes its sessions with pi-coding-agent's ``SessionManager``
(openclaw/openclaw: ``src/config/sessions/transcript.ts``, which writes the header and
appends through ``SessionManager.appendMessage``; badlogic/pi-mono:
``packages/coding-agent/src/core/session-manager.ts`` for the entries, session version
3, and ``packages/ai/src/types.ts`` for the messages). One JSON object a line:

- line 1, the header: ``{"type": "session", "version", "id", "timestamp", "cwd"}``;
- then entries ``{"type", "id", "parentId", "timestamp", ...}`` forming a tree; the
  session is the path from the last entry to the root, as ``buildSessionContext`` reads
  it. ``type: "message"`` entries hold ``message``:
  ``{"role": "user", "content": string | [text | image blocks]}``,
  ``{"role": "assistant", "content": [text | thinking | toolCall blocks], "stopReason",
  "model", "usage", ...}`` (``toolCall``: ``{"id", "name", "arguments": {...}}``) and
  ``{"role": "toolResult", "toolCallId", "toolName", "content": [...], "isError"}``.

Thinking blocks are not part of a message; an image block is the text
``[image: MIME]``. A ``custom_message`` entry (an extension's text put into the model's
context) is a user message, as ``buildSessionContext`` makes it. Entries that are not
conversation (``model_change``, ``thinking_level_change``, ``custom``, ``label``,
``session_info``, ``branch_summary``, and ``compaction``: the agent's own compaction; the
trace keeps the whole history, for the context manager under test to compact), and
messages of other roles, are listed in the trace's ``skipped``, never dropped unseen.
The terminal outcome: the session completed when its last message is an assistant's with
``stopReason: "stop"``. Tool schemas are not recorded in a session; the trace offers each
tool it called, with the arguments it was called with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import FieldError, JsonLine, iter_jsonl
from ctxbench.workloads.agent_traces import MAX_TRACE_MESSAGES, RecordedTrace, recorded_tools

__all__ = ["read_openclaw_session"]


def _text(where: str, item: JsonLine, field: str, content: Any,
          kinds: tuple[str, ...]) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(content, str) and "toolCall" not in kinds:
        return content, []
    if not isinstance(content, list):
        raise FieldError(where, item.line, field, "an array of content blocks", content)
    texts, calls = [], []
    for k, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in kinds:
            raise FieldError(where, item.line, f"{field}[{k}].type",
                             f"one of {', '.join(kinds)}", kind)
        assert isinstance(block, dict)
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise FieldError(where, item.line, f"{field}[{k}].text", "a string",
                                 block.get("text"))
            texts.append(block["text"])
        elif kind == "image":
            texts.append(f"[image: {block.get('mimeType', 'unknown')}]")
        elif kind == "toolCall":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str) \
                    or not isinstance(block.get("arguments"), dict):
                raise FieldError(where, item.line, f"{field}[{k}]", "a toolCall {id: string, "
                                 "name: string, arguments: object}", block)
            calls.append(block)
    return "\n".join(texts), calls


def _message(where: str, item: JsonLine, known: set[str]) -> AgentMessage | None:
    message = item.value.get("message")
    if not isinstance(message, dict):
        raise FieldError(where, item.line, "message", "an object", message)
    role = message.get("role")
    if role == "user":
        text, _ = _text(where, item, "message.content", message.get("content"),
                        ("text", "image"))
        return AgentMessage("user", text)
    if role == "assistant":
        text, calls = _text(where, item, "message.content", message.get("content"),
                            ("text", "thinking", "toolCall"))
        refs = tuple(ToolCallRef(c["id"], c["name"], json.dumps(c["arguments"], sort_keys=True))
                     for c in calls)
        known.update(r.call_id for r in refs)
        return AgentMessage("assistant", text, refs)
    if role == "toolResult":
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str) or call_id not in known:
            raise FieldError(where, item.line, "message.toolCallId", "the id of an earlier "
                             "toolCall", call_id)
        text, _ = _text(where, item, "message.content", message.get("content"),
                        ("text", "image"))
        return AgentMessage("tool", text, tool_call_id=call_id)
    return None


def _path(entries: list[JsonLine], where: str) -> list[JsonLine]:
    by_id: dict[str, JsonLine] = {}
    for item in entries:
        entry_id = item.value.get("id")
        if not isinstance(entry_id, str):
            raise FieldError(where, item.line, "id", "a string", entry_id)
        if entry_id in by_id:
            raise FieldError(where, item.line, "id", f"an id no other entry has (line "
                             f"{by_id[entry_id].line} has it)", entry_id)
        by_id[entry_id] = item
    path: list[JsonLine] = []
    current: JsonLine | None = entries[-1] if entries else None
    while current is not None:
        path.append(current)
        if len(path) > len(entries):
            raise FieldError(where, current.line, "parentId", "a tree (no cycle)",
                             current.value.get("parentId"))
        parent = current.value.get("parentId")
        if parent is None:
            break
        if parent not in by_id:
            raise FieldError(where, current.line, "parentId", "the id of an entry or null",
                             parent)
        current = by_id[parent]
    return path[::-1]


def read_openclaw_session(path: str | Path) -> RecordedTrace:
    """The session of one OpenClaw transcript file (see the module doc)."""
    where = str(path)
    items = list(iter_jsonl(path))
    if not items or items[0].value.get("type") != "session" \
            or not isinstance(items[0].value.get("id"), str):
        got = items[0].value.get("type") if items else None
        raise FieldError(where, items[0].line if items else 1, "type",
                         "a session header first ({type: \"session\", id: string})", got)
    header, entries = items[0], items[1:]
    if len(entries) > MAX_TRACE_MESSAGES:
        raise FieldError(where, entries[MAX_TRACE_MESSAGES].line, None,
                         f"at most {MAX_TRACE_MESSAGES} entries", got_text=str(len(entries)))
    messages: list[AgentMessage] = []
    skipped: list[str] = []
    known: set[str] = set()
    last: dict[str, Any] | None = None
    for item in _path(entries, where):
        kind = item.value.get("type")
        if kind == "custom_message":  # injected into the model's context as a user message
            text, _ = _text(where, item, "content", item.value.get("content"),
                            ("text", "image"))
            messages.append(AgentMessage("user", text))
            last = None
            continue
        if kind != "message":
            skipped.append(f"line {item.line}: {kind}")
            continue
        message = _message(where, item, known)
        if message is None:
            skipped.append(f"line {item.line}: message role "
                           f"{item.value['message'].get('role')}")
            continue
        messages.append(message)
        last = item.value["message"]
    completed = last is not None and last.get("role") == "assistant" \
        and last.get("stopReason") == "stop" and not messages[-1].tool_calls
    model = last.get("model") if last is not None and last.get("role") == "assistant" \
        else None
    return RecordedTrace(header.value["id"], "openclaw", where,
                         model if isinstance(model, str) else None, completed,
                         tuple(messages), recorded_tools(messages), tuple(skipped))
