"""OpenClaw session transcripts (``~/.openclaw/agents/<agent>/sessions/<session-id>.jsonl``).

OpenClaw writes its sessions with pi-coding-agent's ``SessionManager``
(openclaw/openclaw: ``src/config/sessions/transcript.ts``, which writes the header and
appends through ``SessionManager.appendMessage``; badlogic/pi-mono:
``packages/coding-agent/src/core/session-manager.ts`` for the entries and their
migrations, ``core/messages.ts`` for the agent's own message roles and
``packages/ai/src/types.ts`` for the model messages). One JSON object a line:

- line 1, the header: ``{"type": "session", "version", "id", "timestamp", "cwd",
  "parentSession"?}``; ``version`` 3 now, 2 before the ``hookMessage`` role became
  ``custom``, absent (1) before entries had ids: a version-1 file is a chain, each entry
  the child of the one before, as ``migrateV1ToV2`` makes it;
- then entries ``{"type", "id", "parentId", "timestamp", ...}`` forming a tree; the
  session is the path from the last entry to the root, as ``buildSessionContext`` reads
  it (a ``parentId`` naming no entry of the file, as a branched session written without
  its ``label`` entries has, ends the path there, as it ends it there).

On the path, ``message`` entries hold ``message``:

- ``user`` (``content``: a string or text / image blocks) and ``custom`` (``hookMessage``
  before version 3: an extension's message) are user messages; ``bashExecution`` (a
  ``!command`` the user ran) is a user message holding the command and its output,
  unless ``excludeFromContext``;
- ``assistant``: ``content`` of text, thinking (dropped: not part of the message) and
  toolCall ``{"id", "name", "arguments": {...}}`` blocks, ``stopReason``, ``model``,
  ``usage``; a turn that ended in ``error`` or ``aborted`` is not sent to the model again
  (pi-ai's ``transformMessages`` drops it), so it is listed in ``skipped``, with the
  results of its calls; an assistant message OpenClaw wrote to mirror delivered text
  (``model: "delivery-mirror"``) is history, not a move of the model (``not_moves``);
- ``toolResult``: ``{"toolCallId", "toolName", "content": [...], "isError"}``.

An image block is the text ``[image: MIME]`` (its data is never decoded).
``custom_message`` entries (an extension's text in the model's context) are user messages,
and so is a ``branch_summary`` with its summary, as ``buildSessionContext`` makes them.
Entries that are not conversation (``model_change``, ``thinking_level_change``,
``custom``, ``label``, ``session_info``, ``compaction``: the agent's own compaction; the
trace keeps the whole history, for the context manager under test to compact), entries
of types no writer has yet (the agent's reader ignores them too), a repeated header, and
messages of other roles are listed in the trace's ``skipped``, never dropped unseen.
The terminal outcome: the session completed when its last model message is an
assistant's with ``stopReason: "stop"`` and no tool call. Tool schemas are not recorded
in a session; the trace offers each tool it called, with the arguments it was called with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import FieldError, JsonLine, iter_jsonl
from ctxbench.workloads.agent_traces import MAX_TRACE_MESSAGES, RecordedTrace, recorded_tools

__all__ = ["SESSION_VERSIONS", "read_openclaw_session"]

SESSION_VERSIONS = (1, 2, 3)
"""The session versions pi-coding-agent has written (1: no ``version`` field)."""
_MIRROR = "delivery-mirror"
_ENDED = ("error", "aborted")
_USER_KINDS = ("text", "image")


def _text(where: str, item: JsonLine, field_name: str, content: Any,
          kinds: tuple[str, ...]) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(content, str) and "toolCall" not in kinds:
        return content, []
    if not isinstance(content, list):
        raise FieldError(where, item.line, field_name, "an array of content blocks", content)
    texts, calls = [], []
    for k, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in kinds:
            raise FieldError(where, item.line, f"{field_name}[{k}].type",
                             f"one of {', '.join(kinds)}", kind)
        assert isinstance(block, dict)
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise FieldError(where, item.line, f"{field_name}[{k}].text", "a string",
                                 block.get("text"))
            texts.append(block["text"])
        elif kind == "image":  # a placeholder: the base64 data is never decoded
            mime = block.get("mimeType")
            texts.append(f"[image: {mime}]" if isinstance(mime, str) else "[image]")
        elif kind == "toolCall":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str) \
                    or not isinstance(block.get("arguments"), dict):
                raise FieldError(where, item.line, f"{field_name}[{k}]", "a toolCall {id: "
                                 "string, name: string, arguments: object}", block)
            calls.append(block)
    return "\n".join(texts), calls


@dataclass
class _Session:
    """What the path has given so far."""

    where: str
    version: int
    messages: list[AgentMessage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_moves: set[int] = field(default_factory=set)
    known: set[str] = field(default_factory=set)
    dropped: set[str] = field(default_factory=set)
    final: dict[str, Any] | None = None
    final_calls: bool = False
    model: str | None = None

    def user(self, text: str) -> None:
        self.messages.append(AgentMessage("user", text))
        self.final, self.final_calls = {"role": "user"}, False

    def skip(self, item: JsonLine, what: str) -> None:
        self.skipped.append(f"line {item.line}: {what}")


def _bash(where: str, item: JsonLine, message: dict[str, Any]) -> str:
    command, output = message.get("command"), message.get("output")
    if not isinstance(command, str) or not isinstance(output, str):
        raise FieldError(where, item.line, "message", "a bashExecution {command: string, "
                         "output: string}", message)
    text = f"Ran `{command}`\n" + (f"```\n{output}\n```" if output else "(no output)")
    if message.get("cancelled") is True:
        return text + "\n\n(command cancelled)"
    code = message.get("exitCode")
    return text + (f"\n\nCommand exited with code {code}"
                   if isinstance(code, int) and code != 0 else "")


def _assistant(s: _Session, item: JsonLine, message: dict[str, Any]) -> None:
    text, calls = _text(s.where, item, "message.content", message.get("content"),
                        ("text", "thinking", "toolCall"))
    ids = [c["id"] for c in calls]
    stop = message.get("stopReason")
    if stop in _ENDED:  # never sent to the model again
        s.dropped.update(ids)
        s.skip(item, f"assistant message stopReason {stop}")
        s.final, s.final_calls = message, bool(calls)
        return
    refs = tuple(ToolCallRef(c["id"], c["name"], json.dumps(c["arguments"], sort_keys=True))
                 for c in calls)
    s.known.update(ids)
    s.messages.append(AgentMessage("assistant", text, refs))
    if message.get("model") == _MIRROR:  # text OpenClaw delivered, mirrored into history
        s.not_moves.add(len(s.messages) - 1)
        return
    s.final, s.final_calls = message, bool(calls)
    model = message.get("model")
    s.model = model if isinstance(model, str) else None


def _message(s: _Session, item: JsonLine) -> None:
    message = item.value.get("message")
    if not isinstance(message, dict):
        raise FieldError(s.where, item.line, "message", "an object", message)
    role = message.get("role")
    if role == "user":
        s.user(_text(s.where, item, "message.content", message.get("content"),
                     _USER_KINDS)[0])
    elif role == "assistant":
        _assistant(s, item, message)
    elif role == "toolResult":
        call_id = message.get("toolCallId")
        if isinstance(call_id, str) and call_id in s.dropped:
            s.skip(item, "toolResult of an ended assistant message")
            return
        if not isinstance(call_id, str) or call_id not in s.known:
            raise FieldError(s.where, item.line, "message.toolCallId", "the id of an earlier "
                             "toolCall", call_id)
        text, _ = _text(s.where, item, "message.content", message.get("content"), _USER_KINDS)
        s.messages.append(AgentMessage("tool", text, tool_call_id=call_id))
        s.final, s.final_calls = message, False
    elif role == "custom" or (role == "hookMessage" and s.version < 3):
        s.user(_text(s.where, item, "message.content", message.get("content"),
                     _USER_KINDS)[0])
    elif role == "bashExecution" and message.get("excludeFromContext") is not True:
        s.user(_bash(s.where, item, message))
    elif role == "bashExecution":
        s.skip(item, "bashExecution excluded from context")
    else:
        s.skip(item, f"message role {role}")


def _entry(s: _Session, item: JsonLine) -> None:
    kind = item.value.get("type")
    if kind == "message":
        _message(s, item)
    elif kind == "custom_message":  # injected into the model's context as a user message
        s.user(_text(s.where, item, "content", item.value.get("content"), _USER_KINDS)[0])
    elif kind == "branch_summary" and isinstance(item.value.get("summary"), str) \
            and item.value["summary"]:
        s.user("Summary of a branch this conversation came back from:\n"
               + item.value["summary"])
    elif isinstance(kind, str):
        s.skip(item, kind)
    else:
        raise FieldError(s.where, item.line, "type", "a string", kind)


def _tree(entries: list[JsonLine], where: str, version: int
          ) -> tuple[dict[str, JsonLine], dict[str, str | None]]:
    by_id: dict[str, JsonLine] = {}
    parents: dict[str, str | None] = {}
    previous: str | None = None
    for item in entries:
        entry_id: Any
        parent: Any
        if version == 1:  # no ids yet: a chain, in file order
            entry_id, parent = f"line {item.line}", previous
        else:
            entry_id, parent = item.value.get("id"), item.value.get("parentId")
            if not isinstance(entry_id, str):
                raise FieldError(where, item.line, "id", "a string", entry_id)
            if parent is not None and not isinstance(parent, str):
                raise FieldError(where, item.line, "parentId", "a string or null", parent)
        if entry_id in by_id:
            raise FieldError(where, item.line, "id", f"an id no other entry has (line "
                             f"{by_id[entry_id].line} has it)", entry_id)
        by_id[entry_id], parents[entry_id] = item, parent
        previous = entry_id
    return by_id, parents


def _path(entries: list[JsonLine], where: str, version: int,
          notes: list[str]) -> list[JsonLine]:
    by_id, parents = _tree(entries, where, version)
    path: list[JsonLine] = []
    current = next(reversed(by_id), None)
    while current is not None:
        item = by_id[current]
        path.append(item)
        if len(path) > len(entries):
            raise FieldError(where, item.line, "parentId", "a tree (no cycle)",
                             parents[current])
        parent = parents[current]
        if parent is not None and parent not in by_id:
            notes.append(f"line {item.line}: parentId names no entry of the file "
                         f"({parent[:40]!r}; the path starts here)")
        current = parent if parent in by_id and parent != current else None
    if len(path) < len(entries):
        notes.append(f"entries off the path from the last entry: {len(entries) - len(path)}")
    return path[::-1]


def _version(where: str, header: JsonLine) -> int:
    version = header.value.get("version", 1)
    if isinstance(version, bool) or version not in SESSION_VERSIONS:
        raise FieldError(where, header.line, "version", "a session version 1, 2 or 3 (or "
                         "none: version 1)", version)
    assert isinstance(version, int)
    return version


def read_openclaw_session(path: str | Path) -> RecordedTrace:
    """The session of one OpenClaw transcript file (see the module doc)."""
    where = str(path)
    items = list(iter_jsonl(path))
    if not items or items[0].value.get("type") != "session" \
            or not isinstance(items[0].value.get("id"), str):
        got = items[0].value.get("type") if items else None
        raise FieldError(where, items[0].line if items else 1, "type",
                         "a session header first ({type: \"session\", id: string})", got)
    header = items[0]
    session = _Session(where, _version(where, header))
    entries = []
    for item in items[1:]:
        if item.value.get("type") == "session":  # the agent's reader skips a repeated one
            session.skip(item, "session header again")
        else:
            entries.append(item)
    if len(entries) > MAX_TRACE_MESSAGES:
        raise FieldError(where, entries[MAX_TRACE_MESSAGES].line, None,
                         f"at most {MAX_TRACE_MESSAGES} entries", got_text=str(len(entries)))
    notes: list[str] = []
    for item in _path(entries, where, session.version, notes):
        _entry(session, item)
    final = session.final
    completed = final is not None and final.get("role") == "assistant" \
        and final.get("stopReason") == "stop" and not session.final_calls
    return RecordedTrace(header.value["id"], "openclaw", where, session.model, completed,
                         tuple(session.messages), recorded_tools(session.messages),
                         tuple(session.skipped + notes), frozenset(session.not_moves))
