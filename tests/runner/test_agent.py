"""The agent loop: turns, tools, stop reasons, usage, failures, native tool calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import InputError, TokenUsage, iter_jsonl
from ctxbench.protocols.cef.records import read_trials
from ctxbench.runner.agent import AgentLimits, AgentOutcome, native_context, run_agent
from ctxbench.runner.agent_run import AgentCondition, run_agent_experiment
from ctxbench.runner.providers.anthropic import CONTEXT_MANAGEMENT_BETA, AnthropicProvider
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse, RequestFailed
from ctxbench.runner.providers.fixture import FixtureProvider
from ctxbench.workloads.agent import AgentTask
from ctxbench.workloads.agent_tasks import agent_tasks
from runner.agent_server import AgentServer

TOKENIZER = get_tokenizer()


class Scripted:
    """Answers with the scripted texts in order; keeps every request."""

    name = "scripted"
    model = "script-v1"
    usage_source = "provider_response"

    def __init__(self, texts: Sequence[str | RequestFailed]) -> None:
        self.texts = list(texts)
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        # A request without tools is a manager's summary call.
        text = self.texts.pop(0) if request.tools else "The item in aisle 7 is the red lamp."
        if isinstance(text, RequestFailed):
            raise text
        words = sum(len(m.content.split()) for m in request.messages)
        return ProviderResponse(text, TokenUsage(uncached_input=words, output=3), None,
                                f"r{len(self.requests)}", 2.0)

    async def aclose(self) -> None:
        return None


def _task(task_id: str = "price-blue-kettle") -> AgentTask:
    return next(t for t in agent_tasks() if t.task_id == task_id)


def _run(provider: object, manager: str = "full_history", budget: int | None = None,
         task_id: str = "price-blue-kettle", **limits: int) -> AgentOutcome:
    return asyncio.run(run_agent(provider, _task(task_id),  # type: ignore[arg-type]
                                 get_context_manager(manager), budget=budget,
                                 tokenizer=TOKENIZER, limits=AgentLimits(**limits)))


def test_tools_run_until_the_final_answer_and_usage_is_summed() -> None:
    provider = Scripted(["[get_price(item='blue kettle')]", "[final_answer(answer='14')]"])
    outcome = _run(provider)
    assert outcome.stop_reason == "final_answer" and outcome.final_answer == "14"
    assert _task().score(outcome.final_answer) == 1.0
    assert outcome.tool_calls == 1 and len(outcome.turns) == 2
    second = provider.requests[1].messages
    assert second[-1].role == "user"
    assert second[-1].content.startswith("Result of get_price:\nCatalog record BLUKET ")
    assert "\nThe price of the blue kettle is 14 dollars.\n" in second[-1].content
    assert outcome.usage.context_tokens == sum(t["input_tokens"] for t in outcome.turns)
    assert outcome.usage.output == 6
    assert [t["decision"]["turn"] for t in outcome.turns] == [0, 1]
    assert outcome.turns[0]["tool_calls"] == ["[get_price(item='blue kettle')]"]
    assert _task().evidence_recall(outcome.final_sent) == 1.0


@pytest.mark.parametrize(("texts", "stop"), [
    (["[]"], "no_action"),
    (["I think it is 14"], "invalid_call"),
    (["[get_stock(item='blue kettle')]"] * 3, "turn_limit"),
])
def test_premature_stops(texts: list[str], stop: str) -> None:
    outcome = _run(Scripted(texts), max_turns=3)
    assert outcome.stop_reason == stop and outcome.final_answer is None


def test_token_limit_stops_the_trial() -> None:
    outcome = _run(Scripted(["[get_stock(item='blue kettle')]"] * 5), max_context_tokens=150)
    assert outcome.stop_reason == "token_limit"
    assert outcome.usage.context_tokens >= 150


def test_a_failed_request_ends_the_trial_keeping_its_usage() -> None:
    failure = RequestFailed("overloaded", error_class="http_529", usage=TokenUsage(
        uncached_input=40, output=1))
    outcome = _run(Scripted(["[get_price(item='blue kettle')]", failure]))
    assert outcome.stop_reason == "error"
    assert outcome.error_type == "http_529: overloaded"
    assert outcome.usage.context_tokens == outcome.turns[0]["input_tokens"] + 40


def test_a_refused_decision_is_the_trials_failure() -> None:
    outcome = _run(Scripted(["[get_price(item='blue kettle')]"]), "last_k_turns", budget=120)
    assert outcome.stop_reason == "error"
    assert str(outcome.error_type).startswith("context_manager_failed:over_budget: ")


def test_a_summarizing_manager_pays_for_its_summaries() -> None:
    calls = ["[find_item(aisle=7)]", "[get_stock(item='red lamp')]",
             "[get_aisle(item='red lamp')]", "[get_price(item='red lamp')]",
             "[final_answer(answer='23')]"]
    provider = Scripted(calls)
    outcome = _run(provider, "summarize_older", budget=420, task_id="aisle7-price")
    assert outcome.stop_reason == "final_answer"
    summaries = [s for t in outcome.turns for s in t.get("summaries", ())]
    assert len(summaries) >= 2
    turn_input = sum(t["input_tokens"] for t in outcome.turns)
    assert outcome.usage.context_tokens == turn_input + sum(s["input_tokens"]
                                                            for s in summaries)
    assert sum(1 for r in provider.requests if not r.tools) == len(summaries)


def test_fixture_experiment_writes_cef_and_public_eval_and_resumes(tmp_path: Path) -> None:
    conditions = [AgentCondition("full_history", "full_history"),
                  AgentCondition("last_k", "last_k_turns", 240),
                  AgentCondition("compiled", "compiled_history", 150)]
    tasks = agent_tasks()[:6]
    summary = run_agent_experiment(tmp_path, tasks=tasks, conditions=conditions)
    assert summary.completed == 18 and summary.skipped == 0
    trials = read_trials([tmp_path / "cef-trials.jsonl"], baseline="full_history")
    assert {t.condition for t in trials} == {"full_history", "last_k", "compiled"}
    base = [t for t in trials if t.condition == "full_history"]
    assert all(t.context_commit_id is None for t in base)
    assert all(str(t.context_commit_id).startswith("ctx_") for t in trials
               if t.condition != "full_history")
    agent = {(r["task_id"], r["condition"]): r
             for r in (i.value for i in iter_jsonl(tmp_path / "agent-trials.jsonl"))}
    for t in trials:
        record = agent[(t.task_id, t.condition)]
        assert t.context_tokens == sum(x["input_tokens"] for x in record["turns"])
    # compiled at 150 tokens cannot keep the newest step: those trials are failures.
    assert any(t.outcome == "error" and "over_budget" in str(t.error_type) for t in trials
               if t.condition == "compiled")
    rows = [i.value for i in iter_jsonl(tmp_path / "public-eval" / "last_k.jsonl")]
    assert len(rows) == 6 and all(r["tool_calls"] >= 1 for r in rows)
    for name in ("cef-report.json", "cef-report.md", "public-eval-last_k.json",
                 "public-eval-compiled.md"):
        assert (tmp_path / name).stat().st_size > 0
    assert len(summary.verdicts) == 6
    # Neither budget keeps the newest step (head and step are ~250 tokens): no B*.
    assert summary.verdicts[4:] == ("ECEB last_k_turns: 0/6 tasks qualified",
                                    "ECEB compiled_history: 0/6 tasks qualified")
    assert (tmp_path / "eceb-report.json").is_file()
    assert (tmp_path / "eceb-compiled_history" / "eceb-report.json").is_file()
    report = (tmp_path / "cef-report.json").read_bytes()
    again = run_agent_experiment(tmp_path, tasks=tasks, conditions=conditions)
    assert again.completed == 0 and again.skipped == 18
    assert (tmp_path / "cef-report.json").read_bytes() == report


def test_openai_compatible_server_gets_native_tool_calls(tmp_path: Path) -> None:
    with AgentServer() as server:
        summary = run_agent_experiment(
            tmp_path, tasks=agent_tasks()[:2], provider="openai", self_hosted=True,
            provider_options={"model": "agent-loopback", "base_url": server.base_url},
            conditions=[AgentCondition("full_history", "full_history"),
                        AgentCondition("elide", "elide_tool_outputs", 400)])
    assert summary.completed == 4
    assert server.problems == []
    second = server.bodies[1]
    assert second["tools"][0]["function"]["name"] == "get_price"
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "get_price"
    records = [i.value for i in iter_jsonl(tmp_path / "agent-trials.jsonl")]
    assert all(r["stop_reason"] == "final_answer" and r["task_score"] == 1.0 for r in records)
    assert records[0]["provider_request_id"] == "req-2"


def test_native_context_management_is_sent_or_refused() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "m1", "content": [{"type": "text",
                                                                  "text": "14"}],
                                         "usage": {"input_tokens": 9, "output_tokens": 1}})

    provider = AnthropicProvider(model="claude-x", api_key="k",
                                 transport=httpx.MockTransport(handler))
    extra = native_context(provider, "native_compaction")
    outcome = asyncio.run(run_agent(provider, _task(), get_context_manager("full_history"),
                                    budget=None, tokenizer=TOKENIZER, extra=extra))
    assert outcome.stop_reason == "final_answer" and outcome.final_answer == "14"
    body = json.loads(seen[0].content)
    assert body["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}
    assert seen[0].headers["anthropic-beta"] == CONTEXT_MANAGEMENT_BETA
    with pytest.raises(InputError, match="native_context: provider fixture has no context "
                       "management"):
        native_context(FixtureProvider(), "native_compaction")


def test_a_manager_past_its_deadline_is_the_trials_timeout() -> None:
    import threading

    release = threading.Event()

    class Hangs:
        name = "hangs"
        budgeted = False
        summarizes = False
        summary = "never answers"

        def manage(self, request: object) -> object:
            release.wait(30)
            return ()

    try:
        outcome = asyncio.run(run_agent(Scripted([]), _task(), Hangs(),  # type: ignore[arg-type]
                                        budget=None, tokenizer=TOKENIZER,
                                        limits=AgentLimits(manager_timeout_s=0.2)))
    finally:
        release.set()
    assert outcome.stop_reason == "error"
    assert outcome.error_type == "context_manager_failed:timeout: no decision within 0.2 s"


def test_anthropic_gets_the_history_as_tool_use_and_tool_result_blocks() -> None:
    from ctxbench.runner.providers.base import Message

    provider = AnthropicProvider(model="claude-x", api_key="k")
    body = provider.body(ProviderRequest((
        Message("system", "sys"), Message("user", "task"),
        Message("assistant", "[get_price(item='x')]",
                (("c1", "get_price", '{"item": "x"}'),)),
        Message("tool", "The price of the x is 3 dollars.", tool_call_id="c1")),
        max_output_tokens=8, temperature=0.0, tools=_task().offered))
    assert body["system"] == "sys"
    assert body["messages"][1] == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "get_price", "input": {"item": "x"}}]}
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1",
         "content": "The price of the x is 3 dollars."}]}
    asyncio.run(provider.aclose())
