"""Native context management in agent runs: OpenAI's Responses API truncation and
server-side compaction through ``ctxbench run``, against a loopback Responses server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.run import run as run_command
from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import InputError, iter_jsonl
from ctxbench.runner.native_context import CompactionCarry, native_context
from ctxbench.runner.providers.openai import OpenAIProvider

from .responses_server import ResponsesServer, decode_state

CONDITIONS = ('[[conditions]]\nname = "full"\nmanager = "full_history"\n\n'
              '[[conditions]]\nname = "native"\nmanager = "full_history"\n'
              'native_context = true\n\n'
              '[[conditions]]\nname = "combined"\nmanager = "elide_tool_outputs"\n'
              'budget = 300\nnative_context = true\n')


def _spec(tmp_path: Path, server: ResponsesServer, *, window: str, model: str = "",
          conditions: str = CONDITIONS) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(
        'name = "responses-agent"\nseed = 0\nreplicates = 1\noutput = "out"\n'
        'pricing = "self_hosted"\n\n[workload]\nformat = "agent"\n'
        f'source = "builtin:agent-tasks"\n{window}\n[model]\nprovider = "openai"\n'
        f'model = "responses-loopback"\napi = "responses"\nbase_url = "{server.base_url}"\n'
        f"{model}\n{conditions}", encoding="utf-8")
    return path


def _lines(path: Path) -> list[dict[str, Any]]:
    return [item.value for item in iter_jsonl(path)]


def test_native_conditions_send_truncation_and_compaction_and_carry_the_item(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ResponsesServer() as server:
        path = _spec(tmp_path, server, window="offset = 14\nlimit = 2\n")  # aisle 7, 9
        code = run_guarded(run_command, [str(path), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert server.problems == []
    trials = {(t["task_id"], t["condition"]): t for t in _lines(tmp_path / "out" /
                                                               "agent-trials.jsonl")}
    assert len(trials) == 6
    assert all(t["stop_reason"] == "final_answer" and t["task_score"] == 1.0
               for t in trials.values())
    sent = {"native": 200_000, "combined": 300}  # no budget: the documented default
    for (_, condition), t in trials.items():
        if condition == "full":
            assert t["native_context_management"] is None
            assert all("native_context" not in turn for turn in t["turns"])
        else:
            assert t["native_context_management"] == {
                "truncation": "auto",
                "context_management": [{"type": "compaction",
                                        "compact_threshold": sent[condition]}]}
            assert all("native_context" in turn for turn in t["turns"])
    bodies = server.bodies
    assert sum("context_management" in b for b in bodies) == sum(
        t["turn_count"] for (_, c), t in trials.items() if c != "full")
    assert all(b.get("truncation") == "auto" for b in bodies if "context_management" in b)
    # The full history under a 200,000-token threshold never compacts; at 300 the second
    # turn (past 300 server tokens) does, and its item goes back on the third.
    assert not any(turn["native_context"]["compacted"]
                   for turn in trials[("aisle7-price", "native")]["turns"])
    first, second, third = trials[("aisle7-price", "combined")]["turns"]
    assert first["native_context"] == {"compaction_sent": None, "replaced_messages": 0,
                                       "compacted": False, "compaction": None}
    made = second["native_context"]["compaction"]
    assert second["native_context"]["compacted"] and made["id"].startswith("cmp_")
    assert third["native_context"]["compaction_sent"] == made
    # The task, the first call and its (elided) result were replaced by the item.
    assert third["native_context"]["replaced_messages"] == 3
    reply = next(r for r in server.replies if r["output"][0].get("id") == made["id"])
    item = reply["output"][0]
    body = next(b for b in bodies if b["input"][0].get("id") == made["id"])
    assert body["input"][0] == {"type": "compaction", "id": item["id"],
                                "encrypted_content": item["encrypted_content"]}
    assert [i.get("type") for i in body["input"]] == ["compaction", "function_call",
                                                      "function_call_output"]
    assert body["input"][1]["name"] == "get_price" and "aisle 7" in decode_state(
        item["encrypted_content"])["task"]
    assert body["instructions"].startswith("You are a store assistant.")
    # Every turn's tokens are the server's, as it reported them.
    turns = [turn for t in trials.values() for turn in t["turns"]]
    reported = [r["usage"] for r in server.replies]
    assert sorted(turn["input_tokens"] for turn in turns) == sorted(
        u["input_tokens"] for u in reported)
    assert all(turn["cached_input_tokens"] == 119 and turn["reasoning_tokens"] == 2
               and turn["output_tokens"] == 7 for turn in turns)
    assert all(str(turn["request_id"]).startswith("req-") for turn in turns)
    cef = {(r["task_id"], r["condition"]): r for r in _lines(tmp_path / "out" /
                                                            "cef-trials.jsonl")}
    for key, t in trials.items():
        assert cef[key]["context_tokens"] == sum(turn["input_tokens"] for turn in t["turns"])
        assert cef[key]["cached_input_tokens"] == 119 * t["turn_count"]


def test_bad_bodies_are_that_trials_failure_with_a_located_error(tmp_path: Path) -> None:
    faults = {"blue kettle": "malformed", "price in dollars of the 'red lamp'": "incomplete"}
    with ResponsesServer(faults) as server:
        path = _spec(tmp_path, server, window="limit = 5\n")  # kettle, red lamp, ..., mug
        assert run_guarded(run_command, [str(path), "--no-progress"]) == 0
    trials = {(t["task_id"], t["condition"]): t for t in _lines(tmp_path / "out" /
                                                               "agent-trials.jsonl")}
    for condition in ("full", "native", "combined"):
        kettle = trials[("price-blue-kettle", condition)]
        assert kettle["stop_reason"] == "error"
        assert kettle["error_type"] == ("malformed_response: the response's "
                                        "/output/1/call_id: expected a non-empty string, "
                                        "got nothing")
        lamp = trials[("price-red-lamp", condition)]
        assert lamp["error_type"] == ("incomplete_response: the response is incomplete "
                                      "(max_output_tokens)")
        # The incomplete response's usage is billed and kept on its turn.
        (turn,) = lamp["turns"]
        assert turn["input_tokens"] > 0 and turn["error"] == "incomplete_response"
        assert lamp["context_tokens"] == turn["input_tokens"]
        mug = trials[("price-green-mug", condition)]
        assert mug["stop_reason"] == "final_answer" and mug["task_score"] == 1.0
    cef = {(r["task_id"], r["condition"]): r["outcome"]
           for r in _lines(tmp_path / "out" / "cef-trials.jsonl")}
    assert {cef[(task, c)] for task in ("price-blue-kettle", "price-red-lamp")
            for c in ("full", "native", "combined")} == {"error"}


@pytest.mark.parametrize(("change", "message"), [
    (('api = "responses"', 'api = "graphql"'), 'agent.toml:15: [model].api: expected one of '
     'chat_completions, responses, got the string "graphql"'),
    (('provider = "openai"', 'provider = "anthropic"'), 'agent.toml:15: [model].api: '
     'expected no api (the provider anthropic speaks one API), got the string "responses"'),
    # Chat Completions: a native condition is refused, naming the Responses API.
    (('api = "responses"\n', ''), 'condition native: native_context: provider openai has no '
     'context management ctxbench can turn on (supported: anthropic, whose context editing '
     'clears old tool results; openai with [model] api = "responses"'),
])
def test_an_unknown_api_is_a_located_spec_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: tuple[str, str],
        message: str) -> None:
    with ResponsesServer() as server:
        path = _spec(tmp_path, server, window="limit = 1\n")
        path.write_text(path.read_text(encoding="utf-8").replace(*change), encoding="utf-8")
        code = run_guarded(run_command, [str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert server.bodies == [] and not (tmp_path / "out" / "agent-trials.jsonl").exists()


def test_native_context_asks_the_provider_for_its_parameters() -> None:
    responses = OpenAIProvider(model="m", api="responses")
    assert native_context(responses, "c", 4000)["context_management"] == [
        {"type": "compaction", "compact_threshold": 4000}]
    with pytest.raises(InputError, match='openai with \\[model\\] api = "responses"'):
        native_context(OpenAIProvider(model="m"), "c", 4000)


def _call(call_id: str) -> AgentMessage:
    return AgentMessage("assistant", f"[get_price(item='{call_id}')]",
                        (ToolCallRef(call_id, "get_price", json.dumps({"item": call_id})),))


def test_the_carried_item_replaces_what_it_covers_and_keeps_every_call_with_its_result(
        ) -> None:
    system, task = AgentMessage("system", "sys"), AgentMessage("user", "task")
    old, old_result = _call("c0"), AgentMessage("tool", "line one\nline two",
                                                tool_call_id="c0")
    conversation = [system, task, old, old_result]
    carry = CompactionCarry()
    assert carry.messages(conversation) == (tuple(conversation), 0)
    carry.update({"type": "compaction", "encrypted_content": "x"}, conversation,
                 conversation)
    new, new_result = _call("c1"), AgentMessage("tool", "fresh", tool_call_id="c1")
    summary = AgentMessage("user", "Summary of the earlier steps: c0 was looked up.")
    # A rewritten old result (elided) is covered too: it answers a call the item holds.
    decision = (system, task, old, AgentMessage("tool", "line one\n[9 characters elided]",
                                                tool_call_id="c0"), summary, new, new_result)
    assert carry.messages(decision) == ((system, summary, new, new_result), 3)
    record = carry.turn_record(3, None)
    assert record["compaction_sent"]["encrypted_content_chars"] == 1
    assert record["compacted"] is False and record["replaced_messages"] == 3


def test_the_api_is_recorded_and_a_resume_through_another_api_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conditions = ('[[conditions]]\nname = "full"\nmanager = "full_history"\n\n'
                  '[[conditions]]\nname = "elided"\nmanager = "elide_tool_outputs"\n'
                  'budget = 300\n')
    with ResponsesServer() as server:
        path = _spec(tmp_path, server, window="offset = 14\nlimit = 1\n",
                     conditions=conditions)
        assert run_guarded(run_command, [str(path), "--no-progress"]) == 0
        trials = _lines(tmp_path / "out" / "agent-trials.jsonl")
        assert {t["provider_api"] for t in trials} == {"responses"}
        # The same spec through Chat Completions (the default) may not resume the run.
        path.write_text(path.read_text(encoding="utf-8").replace('api = "responses"\n', ""),
                        encoding="utf-8")
        capsys.readouterr()
        code = run_guarded(run_command, [str(path), "--no-progress", "--resume"])
    err = capsys.readouterr().err
    assert code == 2
    assert "provider_api: expected a trial through this spec's API (chat_completions), " \
           "got responses" in err
    assert len(err.strip().splitlines()) == 1
