"""Recorded agent traces: Hermes Agent trajectories and OpenClaw sessions, read strictly.

The fixtures are written to the formats of the agents' own writers:

- tests/workloads/fixtures/traces/trajectory_samples.jsonl: Hermes Agent
  (NousResearch/hermes-agent ``agent/trajectory.py``, ``save_trajectory``: one
  ``{"conversations", "timestamp", "model", "completed"}`` line per run; ``run_agent.py``,
  ``AIAgent._convert_to_trajectory_format`` and ``_format_tools_for_system_message``: the
  ShareGPT turns, the ``<tools>`` system prompt, ``<think>``, ``<tool_call>`` and
  ``<tool_response>`` blocks with their JSON);
- tests/workloads/fixtures/traces/5c8e2f4a-....jsonl: OpenClaw (openclaw/openclaw
  ``src/config/sessions/transcript.ts``: the ``{"type": "session", "version", "id",
  "timestamp", "cwd"}`` header and ``SessionManager.appendMessage``; badlogic/pi-mono
  ``packages/coding-agent/src/core/session-manager.ts``: entries with ``id``/``parentId``,
  version 3, ``model_change`` and ``custom`` entries, the leaf-to-root path;
  ``packages/ai/src/types.ts``: user, assistant (``thinking``/``toolCall`` blocks,
  ``usage``, ``stopReason``) and ``toolResult`` messages).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.core import FieldError, InputError
from ctxbench.workloads.agent_traces import answer_f1, decision_points
from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.trace_hermes import read_hermes_trajectories
from ctxbench.workloads.trace_openclaw import read_openclaw_session

TRACES = Path(__file__).parent / "fixtures" / "traces"
HERMES = TRACES / "trajectory_samples.jsonl"
OPENCLAW = TRACES / "5c8e2f4a-91d3-4b7e-a0c2-7d1e9f3b6a21.jsonl"


def test_hermes_trajectories_become_conversations() -> None:
    done, failed = read_hermes_trajectories(HERMES)
    assert (done.agent, done.completed, failed.completed) == ("hermes", True, False)
    assert done.model == "NousResearch/Hermes-4-70B"
    assert [t.name for t in done.tools] == ["read_file", "terminal"]
    assert [m.role for m in done.messages] == ["system", "user", "assistant", "tool",
                                               "assistant", "tool", "tool", "assistant"]
    second = done.messages[4]
    assert second.content == "Checking the live deployment as well."
    assert [c.name for c in second.tool_calls] == ["terminal", "read_file"]
    assert done.messages[5].tool_call_id == second.tool_calls[0].call_id
    assert json.loads(done.messages[5].content)["status"]["replicas"] == 2
    assert done.messages[-1].content.startswith("On staging the billing service")
    assert "<think>" not in "".join(m.content for m in done.messages[2:])
    points = decision_points(done)
    assert [p.kind for p in points] == ["action", "action", "answer"]
    assert len(points[2].evidence) == 3 and decision_points(failed) == ()


def test_openclaw_session_follows_the_leaf_path() -> None:
    trace = read_openclaw_session(OPENCLAW)
    assert (trace.trace_id, trace.agent, trace.completed) == (
        "5c8e2f4a-91d3-4b7e-a0c2-7d1e9f3b6a21", "openclaw", True)
    assert trace.model == "claude-sonnet-4-5"
    assert [m.role for m in trace.messages] == ["user", "assistant", "tool", "assistant"]
    assert "It might be in settings." not in [m.content for m in trace.messages]
    assert trace.skipped == ("line 2: model_change", "line 7: custom",
                             "entries off the path from the last entry: 1")
    assert trace.messages[1].tool_calls[0].call_id == "toolu_01A"
    assert "TIMEOUT_S = 12.5" in trace.messages[2].content
    assert [(t.name, list(t.parameters["properties"])) for t in trace.tools] == \
        [("read", ["path"])]
    action, answer = decision_points(trace)
    assert action.score([ToolCall("read", {"path": "src/payments/client.py"})], None) == 1.0
    assert action.score([ToolCall("read", {"path": "src/payments/other.py"})], None) == 0.0
    assert answer.score(None, "a 12.5 second timeout") > 0.4
    assert answer.score([ToolCall("read", {"path": "x"})], None) == 0.0


def test_answer_f1_is_squad_token_f1() -> None:
    assert answer_f1("The port, 8443.", "port 8443") == 1.0
    assert answer_f1("The port is 8443.", "port 8443") == pytest.approx(0.8)
    assert answer_f1("8443", "port 8443") == pytest.approx(2 / 3)
    assert answer_f1("nothing", "port 8443") == 0.0


def _write(tmp_path: Path, name: str, rows: list[object]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_bad_traces_are_located(tmp_path: Path) -> None:
    row = json.loads(HERMES.read_text().splitlines()[0])
    row["conversations"][1]["from"] = "user"
    with pytest.raises(FieldError, match=r"bad.jsonl:1: conversations\[1\]: expected "
                       r"\{from: system\|human\|gpt\|tool"):
        read_hermes_trajectories(_write(tmp_path, "bad.jsonl", [row]))
    row = json.loads(HERMES.read_text().splitlines()[0])
    row["conversations"][3]["value"] = "<tool_response>\nnot json\n</tool_response>"
    with pytest.raises(FieldError, match=r"bad.jsonl:1: conversations\[3\]\.value: expected "
                       "<tool_response> blocks holding JSON"):
        read_hermes_trajectories(_write(tmp_path, "bad.jsonl", [row]))
    row = json.loads(HERMES.read_text().splitlines()[0])
    del row["completed"]
    with pytest.raises(FieldError, match=r"bad\.jsonl:1: completed: expected a boolean"):
        read_hermes_trajectories(_write(tmp_path, "bad.jsonl", [row]))
    lines = [json.loads(x) for x in OPENCLAW.read_text().splitlines()]
    with pytest.raises(FieldError, match=r"s\.jsonl:1: type: expected a session header"):
        read_openclaw_session(_write(tmp_path, "s.jsonl", lines[1:]))
    lines[4]["message"]["toolCallId"] = "toolu_99"
    with pytest.raises(FieldError, match=r"s.jsonl:5: message.toolCallId: expected the id "
                       "of an earlier toolCall"):
        read_openclaw_session(_write(tmp_path, "s.jsonl", lines))
    lines = [json.loads(x) for x in OPENCLAW.read_text().splitlines()]
    lines[-1]["parentId"] = 7
    with pytest.raises(FieldError, match=r"s\.jsonl:8: parentId: expected a string or null, "
                       "got the integer 7"):
        read_openclaw_session(_write(tmp_path, "s.jsonl", lines))
    lines[0]["version"] = 4
    with pytest.raises(FieldError, match=r"s\.jsonl:1: version: expected a session version "
                       "1, 2 or 3"):
        read_openclaw_session(_write(tmp_path, "s.jsonl", lines))


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
_TURN = st.fixed_dictionaries({"from": st.sampled_from(["system", "human", "gpt", "tool", "x"]),
                               "value": st.text(max_size=40) | _JSON})


@settings(derandomize=True, max_examples=150, deadline=None)
@given(conversations=st.lists(_TURN, max_size=5), completed=_JSON, extra=_JSON)
def test_any_hermes_line_is_a_trace_or_a_located_error(
        tmp_path_factory: pytest.TempPathFactory, conversations: list[object],
        completed: object, extra: object) -> None:
    path = tmp_path_factory.mktemp("h") / "t.jsonl"
    path.write_text(json.dumps({"conversations": conversations, "completed": completed,
                                "model": extra}) + "\n")
    try:
        read_hermes_trajectories(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:1: ")


@settings(derandomize=True, max_examples=150, deadline=None)
@given(entries=st.lists(st.fixed_dictionaries({
    "type": st.sampled_from(["message", "custom"]), "id": st.sampled_from(["a", "b", "c"]),
    "parentId": st.sampled_from([None, "a", "b", "z"]),
    "message": st.fixed_dictionaries({"role": st.sampled_from(
        ["user", "assistant", "toolResult", "other"]), "content": _JSON,
        "toolCallId": _JSON})}), max_size=4))
def test_any_openclaw_session_is_a_trace_or_a_located_error(
        tmp_path_factory: pytest.TempPathFactory, entries: list[object]) -> None:
    path = tmp_path_factory.mktemp("o") / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *entries]))
    try:
        read_openclaw_session(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:")


def test_openclaw_custom_messages_join_the_context(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in OPENCLAW.read_text().splitlines()]
    lines.insert(3, {"type": "custom_message", "customType": "reminder", "id": "c0ffee00",
                     "parentId": "b2c3d4e5", "timestamp": "2026-03-15T10:02:15.500Z",
                     "content": "Answer in one sentence.", "display": False})
    lines[4]["parentId"] = "c0ffee00"
    trace = read_openclaw_session(_write(tmp_path, "s.jsonl", lines))
    assert [(m.role, m.content) for m in trace.messages[:2]] == [
        ("user", "What timeout does the payments client use?"),
        ("user", "Answer in one sentence.")]
    assert trace.completed and len(decision_points(trace)) == 2
