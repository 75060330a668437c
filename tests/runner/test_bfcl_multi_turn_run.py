"""BFCL multi-turn tasks through the agent loop: tools on BFCL's API classes, the trajectory
judged by BFCL's semantics, per-request decisions under two context managers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import InputError, TokenUsage, iter_jsonl
from ctxbench.runner.agent_run import AgentCondition
from ctxbench.runner.bfcl_multi_turn_experiment import run_multi_turn_experiment
from ctxbench.runner.bfcl_multi_turn_run import MultiTurnOutcome, run_multi_turn
from ctxbench.runner.pricing import load_pricing_snapshot
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.workloads.bfcl_multi_turn import load_multi_turn
from ctxbench.workloads.calls import ToolCall, render_calls
from runner.bfcl_multi_turn_server import MultiTurnServer

TOKENIZER = get_tokenizer()


class Scripted:
    name = "scripted"
    model = "script-v1"
    usage_source = "provider_response"

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        words = sum(len(m.content.split()) for m in request.messages)
        return ProviderResponse(self.texts.pop(0), TokenUsage(uncached_input=words, output=5),
                                None, f"r{len(self.requests)}", 1.0)

    async def aclose(self) -> None:
        return None


def _ground_truth_replies(task_id: str) -> list[str]:
    """Per turn: one reply with the turn's ground-truth calls, then a text reply."""
    (task,) = [t for t in load_multi_turn("multi_turn_base", limit=3) if t.task_id == task_id]
    out = []
    for calls in task.ground_truth:
        out.append(render_calls([ToolCall(c.name, dict(c.kwargs)) for c in calls]))
        out.append("Done.")
    return out


def _run(texts: Sequence[str], manager: str = "full_history", budget: int | None = None,
         max_steps: int = 20) -> tuple[MultiTurnOutcome, Scripted]:
    (task,) = [t for t in load_multi_turn("multi_turn_base", limit=3)
               if t.task_id == "multi_turn_base_1"]
    provider = Scripted(texts)
    outcome = asyncio.run(run_multi_turn(provider, task,
                                         get_context_manager(manager), budget=budget,
                                         tokenizer=TOKENIZER, max_steps=max_steps))
    return outcome, provider


def test_ground_truth_moves_pass_bfcl_semantics() -> None:
    outcome, provider = _run(_ground_truth_replies("multi_turn_base_1"))
    assert outcome.stop_reason == "completed" and outcome.check.valid and outcome.score == 1.0
    assert len(outcome.trajectory) == 4 and outcome.tool_calls == 6
    assert len(outcome.requests) == 8 and [r["turn"] for r in outcome.requests] == \
        [0, 0, 1, 1, 2, 2, 3, 3]
    assert outcome.usage.context_tokens == sum(r["input_tokens"] for r in outcome.requests)
    second = provider.requests[1].messages
    assert second[-1].content.startswith("Result of ls:\n")
    assert second[-1].content.endswith('{"current_directory_content": ["workspace"]}')


def test_a_wrong_move_fails_and_an_endless_turn_is_force_terminated() -> None:
    replies = _ground_truth_replies("multi_turn_base_1")
    replies[2] = "[cd(folder='workspace')]"  # turn 1 without the move of log.txt
    outcome, _ = _run(replies)
    assert outcome.stop_reason == "completed" and not outcome.check.valid
    assert (outcome.check.error_type, outcome.check.turn) == (
        "multi_turn:instance_state_mismatch", 1)
    outcome, _ = _run(["[ls(a=True)]"] * 3, max_steps=3)
    assert outcome.stop_reason == "force_terminated" and outcome.score == 0.0


def test_a_budgeted_manager_sends_less_and_a_tiny_budget_is_an_error() -> None:
    full, _ = _run(_ground_truth_replies("multi_turn_base_1"))
    last, _ = _run(_ground_truth_replies("multi_turn_base_1"), "last_k_turns", 2000)
    assert last.check.valid
    assert last.requests[-1]["decision"]["tokens"] < full.requests[-1]["decision"]["tokens"]
    refused, _ = _run(_ground_truth_replies("multi_turn_base_1"), "last_k_turns", 3)
    assert refused.stop_reason == "error" and refused.error_type is not None
    assert refused.error_type.startswith("context_manager_failed:over_budget:")


def test_an_experiment_writes_the_agent_reports_and_resumes(tmp_path: Path) -> None:
    tasks = load_multi_turn("multi_turn_base", limit=2)
    conditions = [AgentCondition("full", "full_history"),
                  AgentCondition("elide", "elide_tool_outputs", 2000),
                  AgentCondition("last_k", "last_k_turns", 2000)]
    summary = run_multi_turn_experiment(tmp_path, tasks=tasks, conditions=conditions,
                                        max_steps=3)
    assert (summary.completed, summary.skipped) == (6, 0)
    assert {"cef-report.json", "public-eval-elide.json", "public-eval-last_k.json",
            "report.html"} <= set(summary.paths)
    trials = [item.value for item in iter_jsonl(tmp_path / "agent-trials.jsonl")]
    assert {t["scorer"] for t in trials} == {"bfcl-multi-turn-state-response-v1"}
    for t in trials:  # the fixture reader repeats one call: BFCL's force-termination
        assert (t["multi_turn_stop"], t["stop_reason"], t["task_score"]) == (
            "force_terminated", "turn_limit", 0.0)
        assert t["multi_turn_check"] == {"valid": False, "turn": 0,
                                         "error_type": "multi_turn:force_terminated"}
        assert t["turn_count"] == 3 and t["context_tokens"] > 0
    rows = [item.value for item in iter_jsonl(tmp_path / "public-eval" / "full.jsonl")]
    assert [r["resolved"] for r in rows] == [False, False]
    again = run_multi_turn_experiment(tmp_path, tasks=tasks, conditions=conditions)
    assert (again.completed, again.skipped) == (0, 6)


def test_openai_compatible_server_plays_the_ground_truth_natively(tmp_path: Path) -> None:
    tasks = [t for t in load_multi_turn("multi_turn_base", limit=12)
             if not any(c.args for turn in t.ground_truth for c in turn)][:3]
    truths = {t.task_id: [[(c.name, dict(c.kwargs)) for c in turn] for turn in t.ground_truth]
              for t in tasks}
    with MultiTurnServer(truths, {t.task_id: t.turns[0][0] for t in tasks}) as server:
        summary = run_multi_turn_experiment(
            tmp_path, tasks=tasks, provider="openai", self_hosted=True,
            provider_options={"model": "bfcl-loopback", "base_url": server.base_url},
            conditions=[AgentCondition("full", "full_history"),
                        AgentCondition("elide", "elide_tool_outputs", 8000)])
    assert summary.completed == 6 and server.problems == []
    trials = [item.value for item in iter_jsonl(tmp_path / "agent-trials.jsonl")]
    assert [(t["task_score"], t["multi_turn_stop"]) for t in trials] == [(1.0, "completed")] * 6
    second = server.bodies[1]["messages"]
    assert [m["role"] for m in second][-2:] == ["assistant", "tool"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == truths[tasks[0].task_id][0][0][0]
    assert {f["function"]["name"] for f in server.bodies[0]["tools"]} >= {"cd", "ls"}
    assert trials[0]["provider_request_id"] is not None


def test_a_priced_provider_is_priced_per_request(tmp_path: Path) -> None:
    snapshot = {"schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai",
                "model": "bfcl-loopback", "effective_date": "2026-01-15",
                "source_reference": "https://example.invalid/pricing",
                "rates_usd_per_million": {"uncached_input": 2, "cached_input": 0.5,
                                          "cache_write": 0, "output": 10}}
    (tmp_path / "prices.json").write_text(json.dumps(snapshot), encoding="utf-8")
    (task,) = [t for t in load_multi_turn("multi_turn_base", limit=12)
               if not any(c.args for turn in t.ground_truth for c in turn)][:1]
    truths = {task.task_id: [[(c.name, dict(c.kwargs)) for c in turn]
                             for turn in task.ground_truth]}
    with MultiTurnServer(truths, {task.task_id: task.turns[0][0]}) as server:
        run_multi_turn_experiment(
            tmp_path / "run", tasks=[task], provider="openai",
            pricing=load_pricing_snapshot(tmp_path / "prices.json"),
            provider_options={"model": "bfcl-loopback", "base_url": server.base_url},
            conditions=[AgentCondition("full", "full_history"),
                        AgentCondition("elide", "elide_tool_outputs", 8000)])
    trials = [item.value for item in iter_jsonl(tmp_path / "run" / "agent-trials.jsonl")]
    for t in trials:
        assert t["cost_source"] == "pricing_snapshot"
        # 2 USD per million input tokens, 10 per million output: micro-USD per request.
        assert t["cost_micro_usd"] == sum(2 * r["input_tokens"] + 10 * r["output_tokens"]
                                          for r in t["turns"]) > 0
    rows = [item.value for item in iter_jsonl(tmp_path / "run" / "public-eval" / "full.jsonl")]
    assert rows[0]["usd"] == trials[0]["cost_micro_usd"] / 1e6


def test_a_priced_provider_without_a_snapshot_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="pricing: expected a pricing snapshot for provider "
                                         "openai"):
        run_multi_turn_experiment(
            tmp_path, tasks=load_multi_turn("multi_turn_base", limit=1), provider="openai",
            provider_options={"model": "m", "base_url": "http://127.0.0.1:9/v1"},
            conditions=[AgentCondition("full", "full_history"),
                        AgentCondition("elide", "elide_tool_outputs", 8000)])
