"""Trace files in every shape the agents' writers produce, built the way each writer builds
them (the function that writes each record is named beside it). ``write_all`` writes the
files under tests/workloads/fixtures/traces/shapes/; test_trace_shapes checks that the
committed files are what these builders give.

OpenClaw (openclaw/openclaw ``src/config/sessions/transcript.ts``; badlogic/pi-mono
``packages/coding-agent/src/core/session-manager.ts``, ``core/messages.ts``,
``packages/ai/src/types.ts``) writes ``JSON.stringify`` lines: compact separators, keys
in the order the objects are built. Hermes Agent (NousResearch/hermes-agent
``agent/trajectory.py``, ``run_agent.py``, ``batch_runner.py``,
``trajectory_compressor.py``) writes ``json.dumps(entry, ensure_ascii=False)`` lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SHAPES = Path(__file__).parent / "fixtures" / "traces" / "shapes"
Row = dict[str, Any]
_T = "2026-03-20T09:1{}:00.000Z"
# The tool definitions AIAgent._format_tools_for_system_message writes ("required": None).
_HERMES_TOOLS = [{"name": "terminal", "description": "Run a shell command.",
                  "parameters": {"type": "object", "properties": {
                      "command": {"type": "string"}}, "required": ["command"]},
                  "required": None}]


def _usage(n_in: int, n_out: int) -> Row:
    # packages/ai/src/types.ts Usage
    return {"input": n_in, "output": n_out, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": n_in + n_out, "cost": {"input": 0.0, "output": 0.0,
                                                   "cacheRead": 0.0, "cacheWrite": 0.0,
                                                   "total": 0.0}}


def _assistant(content: list[Row], stop: str, ts: int, model: str = "claude-sonnet-4-5",
               **extra: Any) -> Row:
    # types.ts AssistantMessage: role, content, api, provider, model, usage, stopReason,
    # errorMessage?, timestamp
    return {"role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": model, "usage": _usage(900 + ts, 20),
            "stopReason": stop, **extra, "timestamp": 1773997800000 + ts}


def _call(call_id: str, command: str) -> Row:
    return {"type": "toolCall", "id": call_id, "name": "exec",
            "arguments": {"command": command}}


def _result(call_id: str, content: list[Row], ts: int) -> Row:
    # types.ts ToolResultMessage (details is the tool's own, not sent to the model)
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "exec",
            "content": content, "details": {"exitCode": 0}, "isError": False,
            "timestamp": 1773997800000 + ts}


def _text(text: str) -> Row:
    return {"type": "text", "text": text}


def _entry(kind: str, entry_id: str, parent: str | None, n: int, **fields: Any) -> Row:
    # SessionManager.append*: {type, ..., id, parentId, timestamp} (appendMessage puts
    # id/parentId/timestamp before message; appendCustomEntry after customType/data)
    if kind in ("custom", "custom_message"):
        return {"type": kind, **fields, "id": entry_id, "parentId": parent,
                "timestamp": _T.format(n % 10)}
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": _T.format(n % 10),
            **fields}


def openclaw_tree() -> list[Row]:
    """A version-3 session forked from another (``parentSession``): reasoning (one block
    redacted), images, an auto-retried error turn, the agent's compaction, an abandoned
    branch and the ``branch_summary`` it left, an extension's message and entries, a
    ``!command``, a future entry type and OpenClaw's delivery mirror."""
    m = "message"
    return [
        # SessionManager.newSession (createBranchedSession / forkFrom set parentSession)
        {"type": "session", "version": 3, "id": "0b6f2d9e-4c1a-4e7b-9d35-2a8c71f0e6b4",
         "timestamp": "2026-03-20T09:10:00.000Z", "cwd": "/srv/exports",
         "parentSession": "/home/ana/.openclaw/agents/main/sessions/"
                          "2026-03-19T17-02-11-000Z_5d1e.jsonl"},
        _entry("thinking_level_change", "e1000001", None, 1, thinkingLevel="medium"),
        _entry("model_change", "e1000002", "e1000001", 1, provider="anthropic",
               modelId="claude-sonnet-4-5"),
        _entry(m, "e1000003", "e1000002", 2, message={
            "role": "user", "content": [_text("Why does the nightly export fail? Screen "
                                              "attached."),
                                        {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg==",
                                         "mimeType": "image/png"}],
            "timestamp": 1773997800002}),
        _entry(m, "e1000004", "e1000003", 2, message=_assistant(
            [{"type": "thinking", "thinking": "", "thinkingSignature": "EqQBCkgIAhABGAIi",
              "redacted": True}, _call("toolu_01", "tail -n 3 /var/log/export.log")],
            "toolUse", 4)),
        _entry(m, "e1000005", "e1000004", 3, message=_result(
            "toolu_01", [_text("ERROR write failed: disk quota exceeded on /mnt/exports")],
            5)),
        # An overloaded provider: the turn is persisted with stopReason error, then retried
        _entry(m, "e1000006", "e1000005", 3, message=_assistant(
            [], "error", 6, errorMessage="529 overloaded_error")),
        _entry(m, "e1000007", "e1000006", 3, message=_assistant(
            [{"type": "thinking", "thinking": "Check how full the volume is.",
              "thinkingSignature": "sig-7"}, _call("toolu_02", "df -h /mnt/exports")],
            "toolUse", 7)),
        _entry(m, "e1000008", "e1000007", 4, message=_result(
            "toolu_02", [_text("/dev/sdb1  500G  500G  0  100% /mnt/exports")], 8)),
        # SessionManager.appendCompaction: the agent compacted its own context here
        _entry("compaction", "e1000009", "e1000008", 4,
               summary="The user asked why the nightly export fails; the log shows the "
                       "export volume's quota is exceeded.",
               firstKeptEntryId="e1000007", tokensBefore=48211,
               details={"readFiles": [], "modifiedFiles": []}),
        _entry(m, "e100000a", "e1000009", 4, message=_assistant(
            [_text("The export volume /mnt/exports is full (100%), so writes fail.")],
            "stop", 10)),
        # a branch the user abandoned: it stays in the file, off the path
        _entry(m, "e100000b", "e100000a", 5, message={
            "role": "user", "content": "Delete the old exports.", "timestamp": 1773997800011}),
        _entry(m, "e100000c", "e100000b", 5, message=_assistant(
            [_call("toolu_03", "rm -rf /mnt/exports/2025-*")], "toolUse", 12)),
        _entry("label", "e100000d", "e100000c", 5, targetId="e100000c", label="risky"),
        # SessionManager.branchWithSummary: back at e100000a with a summary of the branch
        _entry("branch_summary", "e100000e", "e100000a", 6, fromId="e100000a",
               summary="Deleting old exports with rm -rf was proposed and abandoned."),
        # appendCustomMessageEntry (an extension's text in the context) and appendCustomEntry
        _entry("custom_message", "e100000f", "e100000e", 6, customType="policy",
               content="Never delete data without a backup.", display=False),
        _entry("custom", "e1000010", "e100000f", 6, customType="cache-ttl",
               data={"ttl": 300}),
        # core/messages.ts BashExecutionMessage (the user's !command)
        _entry(m, "e1000011", "e1000010", 7, message={
            "role": "bashExecution", "command": "ls /mnt/exports | wc -l", "output": "412",
            "exitCode": 0, "cancelled": False, "truncated": False,
            "timestamp": 1773997800017}),
        _entry(m, "e1000012", "e1000011", 7, message={
            "role": "user", "content": "Archive the exports older than 90 days instead.",
            "timestamp": 1773997800018}),
        # core/messages.ts CustomMessage (an extension's sendMessage)
        _entry(m, "e1000013", "e1000012", 7, message={
            "role": "custom", "customType": "reminder",
            "content": [_text("Report the space freed.")], "display": True,
            "timestamp": 1773997800019}),
        _entry(m, "e1000014", "e1000013", 8, message=_assistant(
            [_text("Archiving them."), _call("toolu_04", "archive-exports --older-than 90d")],
            "toolUse", 20)),
        _entry(m, "e1000015", "e1000014", 8, message=_result(
            "toolu_04", [_text("archived 301 files, freed 182 GB"),
                         {"type": "image", "data": "R0lGODlhAQABAAAAACw=",
                          "mimeType": "image/gif"}], 21)),
        _entry("session_info", "e1000016", "e1000015", 8, name="export cleanup"),
        _entry("workspace_snapshot", "e1000017", "e1000016", 9, files=3),  # no writer yet
        _entry(m, "e1000018", "e1000017", 9, message=_assistant(
            [_text("Archived 301 exports older than 90 days; 182 GB freed.")], "stop", 24)),
        # transcript.ts appendAssistantMessageToSessionTranscript: the delivered text
        _entry(m, "e1000019", "e1000018", 9, message={
            **_assistant([_text("Archived 301 exports older than 90 days; 182 GB freed.")],
                         "stop", 25), "api": "openai-responses", "provider": "dna",
            "model": "delivery-mirror", "usage": _usage(0, 0)}),
    ]


def openclaw_v1() -> list[Row]:
    """A version-1 session (no ``version``, no ids: migrateV1ToV2 chains the entries in
    file order; its compaction names ``firstKeptEntryIndex``)."""
    return [
        {"type": "session", "id": "7a3e9c10-5b2d-4f8a-b6e1-0c9d4a2f7e35",
         "timestamp": "2025-11-02T08:00:00.000Z", "cwd": "/home/ana/site"},
        {"type": "thinking_level_change", "timestamp": "2025-11-02T08:00:00.100Z",
         "thinkingLevel": "off"},
        {"type": "message", "timestamp": "2025-11-02T08:00:01.000Z", "message": {
            "role": "user", "content": "Which port does the dev server use?",
            "timestamp": 1762070401000}},
        {"type": "message", "timestamp": "2025-11-02T08:00:02.000Z", "message": _assistant(
            [_call("toolu_11", "grep -n PORT vite.config.ts")], "toolUse", 2)},
        {"type": "message", "timestamp": "2025-11-02T08:00:02.500Z", "message": _result(
            "toolu_11", [_text("4:  server: { port: 5173 },")], 3)},
        {"type": "compaction", "timestamp": "2025-11-02T08:00:03.000Z",
         "summary": "Looked up the dev server port.", "firstKeptEntryIndex": 3,
         "tokensBefore": 20110},
        {"type": "message", "timestamp": "2025-11-02T08:00:04.000Z", "message": _assistant(
            [_text("The dev server listens on port 5173.")], "stop", 5)},
    ]


def openclaw_v2() -> list[Row]:
    """A version-2 session: ids, and the ``hookMessage`` role migrateV2ToV3 renames."""
    return [
        {"type": "session", "version": 2, "id": "c41d8e2a-0f6b-4a97-8e3c-5b2f1a9d6c70",
         "timestamp": "2025-12-05T14:00:00.000Z", "cwd": "/home/ana/site"},
        _entry("message", "f2000001", None, 1, message={
            "role": "user", "content": [_text("Is the build green?")],
            "timestamp": 1764943201000}),
        _entry("message", "f2000002", "f2000001", 1, message={
            "role": "hookMessage", "customType": "ci-status",
            "content": "CI: main is failing (lint).", "display": True,
            "timestamp": 1764943201500}),
        _entry("message", "f2000003", "f2000002", 2, message=_assistant(
            [_text("No: main fails its lint step.")], "stop", 3)),
    ]


def openclaw_incomplete() -> list[Row]:
    """A session branched into its own file without its label entries
    (createBranchedSession keeps the path less its labels, so a child of a label names an
    entry the file does not hold), then aborted by the user: it did not complete."""
    return [
        {"type": "session", "version": 3, "id": "e8b1c3d5-2a4f-4b6e-9c8d-1f3a5b7c9d0e",
         "timestamp": "2026-03-21T11:00:00.000Z", "cwd": "/srv/exports",
         "parentSession": "/home/ana/.openclaw/agents/main/sessions/"
                          "2026-03-20T09-10-00-000Z_0b6f.jsonl"},
        _entry("message", "a3000001", None, 1, message={
            "role": "user", "content": "Summarise the export log.",
            "timestamp": 1774090801000}),
        _entry("message", "a3000002", "a3000001", 1, message=_assistant(
            [_text("It shows quota errors since Tuesday.")], "stop", 2)),
        _entry("message", "a3000004", "a3000003", 2, message={
            "role": "user", "content": "And before that?", "timestamp": 1774090803000}),
        _entry("message", "a3000005", "a3000004", 2, message=_assistant(
            [_text("Before Tuesday the")], "aborted", 4, errorMessage="Request aborted")),
    ]


def _system(tools: list[Row]) -> Row:
    # run_agent.py AIAgent._convert_to_trajectory_format: the function-calling prompt
    return {"from": "system", "value": (
        "You are a function calling AI model. You are provided with function signatures "
        "within <tools> </tools> XML tags. Here are the available tools:\n"
        f"<tools>\n{json.dumps(tools, ensure_ascii=False)}\n</tools>\n"
        "Each function call should be enclosed within <tool_call> </tool_call> XML tags.")}


def _gpt(text: str, calls: Sequence[tuple[str, Row]] = (), think: str = "") -> Row:
    # convert_to_trajectory_format: "<think>\n{reasoning}\n</think>\n" (an empty block when
    # there is none), the content, one "<tool_call>\n{json}\n</tool_call>" per call
    value = f"<think>\n{think}\n</think>\n" if think else "<think>\n</think>\n"
    value += text + ("\n" if calls and text else "")
    for name, arguments in calls:
        value += f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n" \
                 "</tool_call>\n"
    return {"from": "gpt", "value": value.strip()}


def _tool(*responses: tuple[str, str, Any]) -> Row:
    # all tool messages after a call turn, "<tool_response>\n{json}\n</tool_response>" each
    return {"from": "tool", "value": "\n".join(
        "<tool_response>\n" + json.dumps({"tool_call_id": i, "name": n, "content": c},
                                         ensure_ascii=False) + "\n</tool_response>"
        for i, n, c in responses)}


def hermes_agent() -> list[Row]:
    """save_trajectory lines: a multimodal question (images already ``[screenshot]``),
    native reasoning, a turn the agent's context compressor wrote, a response past the
    calls (``unknown``), and a failed run whose last turn left a scratchpad open."""
    # agent/context_compressor.py: the summary after the protected head takes the role
    # "assistant" when the head ends with the user, then the kept tail follows
    done = [_system(_HERMES_TOOLS),
            {"from": "human", "value": [_text("Why is the disk full?"),
                                        _text("[screenshot]")]},
            _gpt("[CONTEXT SUMMARY]: the user asked why the disk is full; the root volume "
                 "is at 97%."),
            _gpt("", [("terminal", {"command": "du -sh /var/*"})], think="Measure first."),
            _tool(("call_a1", "terminal", {"output": "41G /var/log", "exit_code": 0}),
                  ("call_a2", "unknown", "stray output")),
            {"from": "human", "value": "Which log is largest?"},
            _gpt("Checking.", [("terminal", {"command": "ls -S /var/log | head -1"})]),
            _tool(("call_b1", "terminal", "journal")),
            _gpt("The journal is the largest log in /var/log (41G in all).")]
    failed = [_system(_HERMES_TOOLS), {"from": "human", "value": "Rotate the journal."},
              {"from": "gpt", "value": "<think>\nI should vacuum the journal, but"}]
    return [{"conversations": c, "timestamp": f"2026-03-20T10:0{n}:00.000000",
             "model": "NousResearch/Hermes-4-70B", "completed": n == 0}
            for n, c in enumerate((done, failed))]


def hermes_batch() -> list[Row]:
    """batch_runner._process_batch_worker lines (no system turn when the agent had no
    ``<tools>``; model under metadata; ``partial``), one from a writer that kept a
    base64 image part in the human turn."""
    def row(n: int, conversations: list[Row], completed: bool, partial: bool) -> Row:
        return {"prompt_index": n, "conversations": conversations,
                "metadata": {"batch_num": 0, "timestamp": "2026-03-20T11:00:00",
                             "model": "anthropic/claude-sonnet-4.6"},
                "completed": completed, "partial": partial, "api_calls": 2,
                "toolsets_used": ["terminal"],
                "tool_stats": {"terminal": {"count": 1, "success": 1, "failure": 0}},
                "tool_error_counts": {"terminal": 0}}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
    first = [{"from": "human", "value": [_text("What is in /etc/hostname?"), image]},
             _gpt("", [("terminal", {"command": "cat /etc/hostname"})]),
             _tool(("call_c1", "terminal", "build-07")),
             _gpt("The host is build-07.")]
    stopped = [{"from": "human", "value": "List the users."},
               _gpt("", [("terminal", {"command": "cut -d: -f1 /etc/passwd"})]),
               _gpt("Done.")]
    return [row(0, first, True, False), row(1, stopped, True, True)]


def hermes_compressed() -> list[Row]:
    """trajectory_compressor output: the protected head, one human summary turn for the
    middle, the last turns; the notice appended to the system turn."""
    system = _system(_HERMES_TOOLS)
    system["value"] += "\n\nSome of your previous tool responses may be summarized to " \
                       "preserve context."
    return [{"conversations": [
        system, {"from": "human", "value": "Find the failing test."},
        _gpt("", [("terminal", {"command": "pytest -x -q"})]),
        _tool(("call_d1", "terminal", "FAILED tests/test_api.py::test_login")),
        {"from": "human", "value": "[CONTEXT SUMMARY]: test_login fails on a 401 from the "
                                   "auth stub; the stub's token expired."},
        _gpt("", [("terminal", {"command": "pytest -q tests/test_api.py::test_login"})]),
        _tool(("call_d2", "terminal", "1 passed")),
        _gpt("test_login passes once the stub's token is renewed.")],
        "timestamp": "2026-03-20T12:00:00.000000", "model": "NousResearch/Hermes-4-70B",
        "completed": True}]


def hermes_structured() -> list[Row]:
    """The structured form the project's batch-processing docs draw: ``tool_calls`` on the
    gpt turn (OpenAI form, arguments as JSON text) and the tool's plain output."""
    return [{"conversations": [
        {"from": "human", "value": "Save a note saying hi."},
        {"from": "gpt", "value": "On it.", "tool_calls": [
            {"id": "call_e1", "type": "function", "function": {
                "name": "write_file",
                "arguments": "{\"path\": \"notes/note.txt\", \"content\": \"hi\"}"}}]},
        {"from": "tool", "value": "{\"ok\": true}"},
        {"from": "gpt", "value": "Saved notes/note.txt."}],
        "metadata": {"model": "anthropic/claude-sonnet-4.6"}, "completed": True,
        "partial": False}]


FILES = {
    "openclaw-tree.jsonl": openclaw_tree, "openclaw-v1.jsonl": openclaw_v1,
    "openclaw-v2.jsonl": openclaw_v2, "openclaw-incomplete.jsonl": openclaw_incomplete,
    "hermes-trajectory_samples.jsonl": hermes_agent, "hermes-batch.jsonl": hermes_batch,
    "hermes-compressed.jsonl": hermes_compressed, "hermes-structured.jsonl": hermes_structured,
}


def text_of(name: str) -> str:
    """The file ``name`` as its writer writes it."""
    rows = FILES[name]()
    if name.startswith("openclaw"):
        return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n"
                       for r in rows)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_all() -> None:
    """Write every shape's file under SHAPES."""
    SHAPES.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (SHAPES / name).write_text(text_of(name), encoding="utf-8")


if __name__ == "__main__":
    write_all()
