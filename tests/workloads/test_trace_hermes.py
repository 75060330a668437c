"""Hermes Agent trajectories in every shape its writers produce (save_trajectory, the batch
runner, the trajectory compressor, the structured form of the batch docs), built in
trace_shapes.py beside the writer functions they follow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_shapes import SHAPES, hermes_agent, text_of

from ctxbench.core import FieldError, InputError
from ctxbench.workloads.agent_traces import decision_points, skipped_summary
from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.trace_hermes import read_hermes_trajectories

NAMES = ("hermes-trajectory_samples.jsonl", "hermes-batch.jsonl", "hermes-compressed.jsonl",
         "hermes-structured.jsonl")


@pytest.mark.parametrize("name", NAMES)
def test_the_committed_files_are_what_the_builders_write(name: str) -> None:
    assert (SHAPES / name).read_text(encoding="utf-8") == text_of(name)


def test_agent_trajectories_multimodal_reasoning_and_its_own_summaries() -> None:
    done, failed = read_hermes_trajectories(SHAPES / "hermes-trajectory_samples.jsonl")
    assert (done.completed, failed.completed) == (True, False)
    assert [m.role for m in done.messages] == ["system", "user", "assistant", "assistant",
                                               "tool", "user", "assistant", "tool",
                                               "assistant"]
    assert done.messages[1].content == "Why is the disk full?\n[screenshot]"
    assert done.messages[3].content == "" and done.messages[3].tool_calls[0].name == "terminal"
    # the response past the calls (the writer names it "unknown") is set aside, listed
    assert json.loads(done.messages[4].content) == {"output": "41G /var/log", "exit_code": 0}
    assert done.skipped == ("line 1: tool response past the calls (conversations[4], "
                            "block 2)",)
    # the agent's compressor wrote message 2 right after the user: history, never a move
    assert done.messages[2].content.startswith("[CONTEXT SUMMARY]:")
    assert done.not_moves == frozenset({2})
    points = decision_points(done)
    assert [(p.index, p.kind) for p in points] == [(6, "action"), (8, "answer")]
    assert points[0].score([ToolCall("terminal", {"command": "ls -S /var/log | head -1"})],
                           None) == 1.0
    assert points[1].evidence == ("journal",)
    assert [t.name for t in done.tools] == ["terminal"]
    # a scratchpad left open: the reasoning is dropped, the run gives no points
    assert failed.messages[-1].content == "" and decision_points(failed) == ()


def test_batch_runner_lines_model_in_metadata_and_partial_runs() -> None:
    first, stopped = read_hermes_trajectories(SHAPES / "hermes-batch.jsonl")
    assert first.model == stopped.model == "anthropic/claude-sonnet-4.6"
    assert first.messages[0].content == "What is in /etc/hostname?\n[image]"
    assert "base64" not in first.messages[0].content
    assert first.completed and not stopped.completed  # completed but partial
    assert [p.kind for p in decision_points(first)] == ["action", "answer"]


def test_compressed_trajectories_keep_the_summary_turn_as_the_user_gave_it() -> None:
    (trace,) = read_hermes_trajectories(SHAPES / "hermes-compressed.jsonl")
    assert trace.messages[4].role == "user"
    assert trace.messages[4].content.startswith("[CONTEXT SUMMARY]: test_login fails")
    points = decision_points(trace)
    assert [p.kind for p in points] == ["action", "action", "answer"]
    assert points[2].evidence == ("1 passed",)


def test_structured_tool_calls_and_plain_results() -> None:
    (trace,) = read_hermes_trajectories(SHAPES / "hermes-structured.jsonl")
    call = trace.messages[1].tool_calls[0]
    assert (call.call_id, call.name) == ("call_e1", "write_file")
    assert trace.messages[2].tool_call_id == "call_e1"
    assert trace.messages[2].content == '{"ok": true}'
    action, _ = decision_points(trace)
    assert action.score([ToolCall("write_file", {"content": "hi",
                                                 "path": "notes/note.txt"})], None) == 1.0
    assert [(t.name, sorted(t.parameters["properties"])) for t in trace.tools] == [
        ("write_file", ["content", "path"])]


def test_the_run_summary_counts_what_was_set_aside() -> None:
    traces = [t for n in NAMES for t in read_hermes_trajectories(SHAPES / n)]
    assert skipped_summary(traces) == (
        "traces: 1 recorded entries not replayed as conversation, each listed in its "
        "trace's skipped: tool response past the calls x1; assistant messages that are "
        "not the model's moves x1")


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _turn(n: int, **change: object) -> dict[str, object]:
    row = hermes_agent()[0]
    row["conversations"][n] = {**row["conversations"][n], **change}
    return row


@pytest.mark.parametrize(("row", "message"), [
    ({**hermes_agent()[0], "partial": "no"}, r"t\.jsonl:1: partial: expected a boolean"),
    ({k: v for k, v in hermes_agent()[0].items() if k != "model"} | {"metadata": {"model": 3}},
     r"t\.jsonl:1: metadata\.model: expected a string, got the integer 3"),
    ({**hermes_agent()[0], "metadata": []}, r"t\.jsonl:1: metadata: expected an object"),
    (_turn(1, value=[{"type": "audio"}]),
     r"t\.jsonl:1: conversations\[1\]\.value\[0\]: expected a text \{type, text: string\} "
     "or image part"),
    (_turn(2, value=["x"]), r"t\.jsonl:1: conversations\[2\]: expected \{from: "),
    (_turn(3, tool_calls=[{"function": {"name": "terminal", "arguments": "{}"}}]),
     r"t\.jsonl:1: conversations\[3\]\.tool_calls: expected calls in one form"),
    (_turn(6, value="Checking.", tool_calls=[{"function": {"name": "terminal",
                                                           "arguments": "{bad"}}]),
     r"t\.jsonl:1: conversations\[6\]\.tool_calls\[0\]\.function\.arguments: expected a "
     "JSON object"),
    (_turn(4, value="<tool_response>\n{\"name\": \"terminal\", \"content\": 1}\n"
                    "</tool_response>\n<tool_response>\n{\"name\": \"other\", \"content\": "
                    "2}\n</tool_response>"),
     r"t\.jsonl:1: conversations\[4\]\.value: expected 1 to 1 <tool_response> blocks "
     r"\(one per call; the writer names one past them 'unknown'\)"),
    (_turn(7, value="plain output"),
     r"t\.jsonl:1: conversations\[7\]\.value: expected 1 to 1 <tool_response> blocks"),
])
def test_what_no_writer_produces_is_a_located_error(
        tmp_path: Path, row: dict[str, object], message: str) -> None:
    with pytest.raises(FieldError, match=message):
        read_hermes_trajectories(_write(tmp_path, [row]))


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
_VALUE = st.sampled_from(["<think>\nx", "<tool_call>\n{\"name\": \"terminal\", "
                          "\"arguments\": {}}\n</tool_call>", "<tool_response>\n{\"name\": "
                          "\"terminal\", \"content\": \"ok\"}\n</tool_response>",
                          "<tool_response>\n{\"name\": \"unknown\", \"content\": 1}\n"
                          "</tool_response>", "[CONTEXT SUMMARY]: s", "plain"]) \
    | st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "x"]),
                                      "text": _JSON}), max_size=2)
_TURN = st.fixed_dictionaries(
    {"from": st.sampled_from(["system", "human", "gpt", "tool"]), "value": _VALUE},
    optional={"tool_calls": st.lists(st.fixed_dictionaries({"function": st.fixed_dictionaries(
        {"name": st.sampled_from(["terminal", 3]),
         "arguments": st.sampled_from(["{}", "{bad", {}, 1])})}), max_size=2) | _JSON})


@settings(derandomize=True, max_examples=200, deadline=None)
@given(conversations=st.lists(_TURN, max_size=6), partial=_JSON, metadata=_JSON)
def test_any_batch_line_is_a_trace_or_a_located_error(
        tmp_path_factory: pytest.TempPathFactory, conversations: list[object],
        partial: object, metadata: object) -> None:
    path = tmp_path_factory.mktemp("h") / "t.jsonl"
    path.write_text(json.dumps({"conversations": conversations, "completed": True,
                                "partial": partial, "metadata": metadata}) + "\n")
    try:
        (trace,) = read_hermes_trajectories(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:1: ") and len(str(exc)) < 2000
    else:
        assert all(trace.messages[n].role == "assistant" for n in trace.not_moves)
        decision_points(trace)


def test_a_null_model_at_the_top_falls_back_to_the_metadata(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in
            (SHAPES / "hermes-batch.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["model"] = None
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    first, _ = read_hermes_trajectories(path)
    assert first.model == "anthropic/claude-sonnet-4.6"
    rows[0]["metadata"]["model"] = 7
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(FieldError, match=r"metadata\.model: expected a string"):
        read_hermes_trajectories(path)


def test_a_tool_call_block_nested_past_the_stack_is_a_located_error(tmp_path: Path) -> None:
    row = {"conversations": [{"from": "system", "value": "x"}, {"from": "human", "value": "hi"},
                             {"from": "gpt",
                              "value": "<tool_call>" + "[" * 100_000 + "</tool_call>"}],
           "completed": True, "model": "m"}
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(FieldError, match=r"deep\.jsonl:1: conversations\[2\]\.value: expected "
                                         r"<tool_call> blocks holding JSON"):
        read_hermes_trajectories(path)
