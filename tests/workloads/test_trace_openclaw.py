"""OpenClaw sessions in every shape pi-coding-agent's SessionManager writes (versions 1 to
3, trees, compaction, branch summaries, extension messages, ``!commands``, images,
reasoning, ended turns, OpenClaw's delivery mirror), built in trace_shapes.py beside
the writer functions they follow, read as the agent's own reader reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_shapes import SHAPES, openclaw_tree, text_of

from ctxbench.core import FieldError, InputError
from ctxbench.workloads.agent_traces import decision_points, skipped_summary
from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.trace_openclaw import read_openclaw_session

NAMES = ("openclaw-tree.jsonl", "openclaw-v1.jsonl", "openclaw-v2.jsonl",
         "openclaw-incomplete.jsonl")


@pytest.mark.parametrize("name", NAMES)
def test_the_committed_files_are_what_the_builders_write(name: str) -> None:
    assert (SHAPES / name).read_text(encoding="utf-8") == text_of(name)


def test_a_forked_session_with_compaction_and_a_branch_follows_the_leaf_path() -> None:
    trace = read_openclaw_session(SHAPES / "openclaw-tree.jsonl")
    assert (trace.trace_id, trace.completed, trace.model) == (
        "0b6f2d9e-4c1a-4e7b-9d35-2a8c71f0e6b4", True, "claude-sonnet-4-5")
    roles = [m.role for m in trace.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user",
                     "user", "user", "user", "user", "assistant", "tool", "assistant",
                     "assistant"]
    texts = [m.content for m in trace.messages]
    # images are placeholders; reasoning (a redacted block too) is no part of a message
    assert texts[0] == "Why does the nightly export fail? Screen attached.\n[image: image/png]"
    assert texts[1] == "" and "iVBOR" not in "".join(texts)
    assert texts[12] == "archived 301 files, freed 182 GB\n[image: image/gif]"
    # the abandoned branch is off the path; its summary, the extension's message, the
    # user's !command and an extension's custom message are user messages
    assert "Delete the old exports." not in texts
    assert "rm -rf" not in " ".join(c.arguments for m in trace.messages for c in m.tool_calls)
    assert texts[6] == ("Summary of a branch this conversation came back from:\n"
                        "Deleting old exports with rm -rf was proposed and abandoned.")
    assert texts[7:11] == ["Never delete data without a backup.",
                           "Ran `ls /mnt/exports | wc -l`\n```\n412\n```",
                           "Archive the exports older than 90 days instead.",
                           "Report the space freed."]
    # the whole history is kept across the agent's own compaction, for the manager to compact
    assert "disk quota exceeded" in texts[2]
    assert trace.skipped == (
        "line 2: thinking_level_change", "line 3: model_change",
        "line 7: assistant message stopReason error", "line 10: compaction",
        "line 17: custom", "line 23: session_info", "line 24: workspace_snapshot",
        "entries off the path from the last entry: 3")
    assert trace.not_moves == frozenset({14})  # the delivery mirror
    points = decision_points(trace)
    assert [(p.index, p.kind) for p in points] == [(1, "action"), (3, "action"),
                                                   (5, "answer"), (11, "action"),
                                                   (13, "answer")]
    # the retried call, not the error turn before it, is the move after the first result
    assert points[1].score([ToolCall("exec", {"command": "df -h /mnt/exports"})], None) == 1.0
    assert points[3].history[-1].content == "Report the space freed."
    assert [t.name for t in trace.tools] == ["exec"]


def test_older_versions_read_as_the_agent_migrates_them() -> None:
    v1 = read_openclaw_session(SHAPES / "openclaw-v1.jsonl")
    assert [m.role for m in v1.messages] == ["user", "assistant", "tool", "assistant"]
    assert v1.completed and v1.skipped == ("line 2: thinking_level_change",
                                           "line 6: compaction")
    action, answer = decision_points(v1)
    assert action.score([ToolCall("exec", {"command": "grep -n PORT vite.config.ts"})],
                        None) == 1.0
    assert answer.evidence == ("4:  server: { port: 5173 },",)
    v2 = read_openclaw_session(SHAPES / "openclaw-v2.jsonl")
    assert [(m.role, m.content) for m in v2.messages[:2]] == [
        ("user", "Is the build green?"), ("user", "CI: main is failing (lint).")]
    assert v2.completed and len(decision_points(v2)) == 1


def test_a_branched_then_aborted_session_did_not_complete() -> None:
    trace = read_openclaw_session(SHAPES / "openclaw-incomplete.jsonl")
    assert not trace.completed and decision_points(trace) == ()
    assert [m.content for m in trace.messages] == ["And before that?"]
    assert trace.skipped == (
        "line 5: assistant message stopReason aborted",
        "line 4: parentId names no entry of the file ('a3000003'; the path starts here)",
        "entries off the path from the last entry: 2")


def test_the_run_summary_counts_what_was_set_aside() -> None:
    traces = [read_openclaw_session(SHAPES / n) for n in NAMES]
    assert skipped_summary(traces) == (
        "traces: 16 recorded entries not replayed as conversation, each listed in its "
        "trace's skipped: assistant message stopReason aborted x1; assistant message "
        "stopReason error x1; compaction x2; custom x1; entries off the path from the "
        "last entry x5; model_change x1; parentId names no entry of the file x1; "
        "session_info x1; thinking_level_change x2; workspace_snapshot x1; assistant "
        "messages that are not the model's moves x1")
    assert skipped_summary([]) is None


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("line", "change", "message"), [
    (0, {"version": 4}, r"s\.jsonl:1: version: expected a session version 1, 2 or 3"),
    (0, {"version": True}, r"s\.jsonl:1: version: expected a session version"),
    (3, {"message": {"role": "user", "content": [{"type": "audio"}]}},
     r"s\.jsonl:4: message\.content\[0\]\.type: expected one of text, image, got"),
    (4, {"message": {"role": "assistant", "content": [{"type": "image"}]}},
     r"s\.jsonl:5: message\.content\[0\]\.type: expected one of text, thinking, toolCall"),
    (5, {"message": {"role": "toolResult", "toolCallId": "toolu_99", "content": []}},
     r"s\.jsonl:6: message\.toolCallId: expected the id of an earlier toolCall"),
    (17, {"message": {"role": "bashExecution", "command": "ls"}},
     r"s\.jsonl:18: message: expected a bashExecution \{command: string, output: string\}"),
    (20, {"type": 7}, r"s\.jsonl:21: type: expected a string, got the integer 7"),
    (8, {"id": "e1000003"}, r"s\.jsonl:9: id: expected an id no other entry has \(line 4"),
])
def test_what_no_writer_produces_is_a_located_error(
        tmp_path: Path, line: int, change: dict[str, object], message: str) -> None:
    rows = openclaw_tree()
    rows[line] = {**rows[line], **change}
    with pytest.raises(FieldError, match=message):
        read_openclaw_session(_write(tmp_path, rows))


def test_a_hook_message_in_a_version_3_file_is_set_aside(tmp_path: Path) -> None:
    rows = openclaw_tree()
    rows[19] = {**rows[19], "message": {**rows[19]["message"], "role": "hookMessage"}}
    trace = read_openclaw_session(_write(tmp_path, rows))
    assert "line 20: message role hookMessage" in trace.skipped
    assert "Report the space freed." not in [m.content for m in trace.messages]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
_BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "thinking",
                                                         "toolCall", "x"]),
                                "text": _JSON, "id": st.sampled_from(["t1", "t2"]),
                                "name": _JSON, "arguments": _JSON, "mimeType": _JSON})


@settings(derandomize=True, max_examples=200, deadline=None)
@given(version=st.sampled_from([None, 1, 2, 3, 4, "3", True]), entries=st.lists(
    st.fixed_dictionaries({
        "type": st.sampled_from(["message", "compaction", "branch_summary", "custom_message",
                                 "session", "label", "future"]),
        "id": st.sampled_from(["a", "b", "c", "d"]),
        "parentId": st.sampled_from([None, "a", "b", "c", "z", 5]),
        "summary": _JSON, "content": _JSON | st.lists(_BLOCK, max_size=3),
        "message": st.fixed_dictionaries({
            "role": st.sampled_from(["user", "assistant", "toolResult", "custom",
                                     "hookMessage", "bashExecution", "branchSummary"]),
            "content": _JSON | st.lists(_BLOCK, max_size=3), "toolCallId": _JSON,
            "stopReason": st.sampled_from(["stop", "toolUse", "error", "aborted"]),
            "model": st.sampled_from(["m", "delivery-mirror"]), "command": _JSON,
            "output": _JSON, "excludeFromContext": _JSON})}), max_size=5))
def test_any_session_of_any_version_is_a_trace_or_a_located_error(
        tmp_path_factory: pytest.TempPathFactory, version: object,
        entries: list[dict[str, object]]) -> None:
    path = tmp_path_factory.mktemp("o") / "s.jsonl"
    header: dict[str, object] = {"type": "session", "id": "s", "timestamp": "t", "cwd": "/"}
    if version is not None:
        header["version"] = version
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *entries]))
    try:
        trace = read_openclaw_session(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:") and len(str(exc)) < 2000
    else:
        assert all(n < len(trace.messages) and trace.messages[n].role == "assistant"
                   for n in trace.not_moves)
        decision_points(trace)
