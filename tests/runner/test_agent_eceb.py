"""ECEB verdicts of agent runs: the built-in store tasks on the fixture provider under
``full_history`` and ``compiled_history`` at a ladder of budgets, a task whose tool returns
an artifact it may not send, and workloads without artifacts."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import atomic_write_bytes, iter_jsonl, load_json_document
from ctxbench.protocols.eceb.api import evaluate_files
from ctxbench.render.eceb import render_markdown
from ctxbench.runner.agent import run_agent
from ctxbench.runner.agent_eceb import NO_ARTIFACTS
from ctxbench.runner.agent_run import AgentCondition, run_agent_experiment
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.runner.providers.fixture import FixtureProvider
from ctxbench.schemas import validator
from ctxbench.workloads.agent import AgentArtifact, AgentTask
from ctxbench.workloads.agent_tasks import agent_tasks, load_agent_tasks

GOLDEN = Path(__file__).parents[1] / "golden" / "eceb-agent"
UPDATE = os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1"
LADDER = (AgentCondition("full_history", "full_history"),
          AgentCondition("compiled@150", "compiled_history", 150),
          AgentCondition("compiled@250", "compiled_history", 250),
          AgentCondition("compiled@300", "compiled_history", 300))
# One lookup that needs 251 tokens on its answering turn, one that needs 250, and a
# chained task the fixture cannot do (it never reads the aisle record).
TASKS = ("price-blue-kettle", "aisle-red-lamp", "aisle7-price")
SECRET = ("Supplier contract NS-2291: Norden Supply is paid 9.10 dollars a unit, net 60 "
          "days; this contract is not to be disclosed outside purchasing.")


def _tasks(*ids: str) -> list[AgentTask]:
    return [t for t in agent_tasks() if t.task_id in ids]


def _report(out: Path) -> dict[str, Any]:
    document = load_json_document(out / "eceb-report.json")
    assert isinstance(document, dict)
    return document


def _task(report: dict[str, Any], task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(t for t in report["tasks"] if t["task_id"] == task_id)
    return found


def test_builtin_tasks_get_their_minimum_viable_budget_and_gates(tmp_path: Path) -> None:
    summary = run_agent_experiment(tmp_path, tasks=_tasks(*TASKS), conditions=LADDER)
    assert summary.verdicts[-1] == "ECEB compiled_history: 2/3 tasks qualified, mean token " \
                                   "savings 0.0%"
    report = _report(tmp_path)
    assert list(validator("symgliph.eceb/report-v0.1").iter_errors(report)) == []
    kettle, lamp, chained = (_task(report, t) for t in TASKS)
    assert (kettle["minimum_viable_budget"], lamp["minimum_viable_budget"]) == (300, 250)
    # At 150 the newest step does not fit: the decision is refused over budget, the tool
    # result is never sent, and the required record is missing (gate 5) with the answer.
    low = kettle["budgets"][0]
    assert low["budget"] == 150 and not low["passed"]
    assert low["gates"] == {"repetitions": "pass", "budget": "pass", "quality": "fail",
                            "answer_terms": "fail", "provenance": "fail", "policy": "pass",
                            "repeatability": "pass"}
    missing = [f for f in kettle["failures"] if f["code"] == "required_not_selected"]
    assert [(f["budget"], f["artifact_ids"]) for f in missing] == [
        (150, ["catalog:blue-kettle:get_price"]), (250, ["catalog:blue-kettle:get_price"])]
    assert lamp["budgets"][1]["passed"] and lamp["budgets"][1]["gates"]["provenance"] == "pass"
    # The baseline never read the aisle record the chained task needs: it cannot qualify.
    assert not chained["qualified"] and chained["baseline"]["gates"]["provenance"] == "fail"
    assert chained["baseline_quality_milli"] == 0
    # Savings are real figures: compiled_history sends the whole history when it fits.
    assert kettle["baseline_input_tokens"] == kettle["compiled_input_tokens"] > 0
    # The run file is an ordinary ECEB run: evaluating the files gives the same report.
    again = evaluate_files(tmp_path / "eceb-benchmark.json", tmp_path / "eceb-run.json",
                           tmp_path / "eceb-corpus")
    assert [t.minimum_viable_budget for t in again.tasks] == [300, 250, None]
    run = load_json_document(tmp_path / "eceb-run.json")
    assert isinstance(run, dict)
    assert list(validator("symgliph.eceb/run-v0.1").iter_errors(run)) == []
    bench = load_json_document(tmp_path / "eceb-benchmark.json")
    assert list(validator("symgliph.eceb/benchmark-v0.1").iter_errors(bench)) == []
    base = next(o for o in run["observations"] if o["strategy"] == "full_permitted_context"
                and o["task_id"] == "price-blue-kettle")
    trial = next(i.value for i in iter_jsonl(tmp_path / "agent-trials.jsonl")
                 if i.value["task_id"] == "price-blue-kettle"
                 and i.value["condition"] == "full_history")
    assert base["input_tokens"] == sum(t["input_tokens"] for t in trial["turns"])
    assert base["prompt_tokens"] == max(t["decision"]["tokens"] for t in trial["turns"])
    assert base["context_blake3"] == trial["turns"][-1]["decision"]["messages_blake3"]
    kettle_record = next(a for a in _tasks("price-blue-kettle")[0].artifacts
                         if a.artifact_id == "catalog:blue-kettle:get_price")
    assert base["selected_artifacts"] == [{"artifact_id": kettle_record.artifact_id,
                                           "blake3": kettle_record.blake3}]
    assert 'id="eceb-grid-h"' in (tmp_path / "report.html").read_text(encoding="utf-8")
    markdown = (tmp_path / "eceb-report.md").read_text(encoding="utf-8")
    if UPDATE:
        atomic_write_bytes(GOLDEN / "eceb-report.json",
                           (tmp_path / "eceb-report.json").read_bytes())
        atomic_write_bytes(GOLDEN / "eceb-report.md", markdown.encode("utf-8"))
    assert (tmp_path / "eceb-report.json").read_bytes() == \
        (GOLDEN / "eceb-report.json").read_bytes()
    assert markdown == (GOLDEN / "eceb-report.md").read_text(encoding="utf-8")
    assert render_markdown(again) in markdown


def test_a_changed_record_is_a_stale_digest(tmp_path: Path) -> None:
    tasks = _tasks("price-blue-kettle")
    run_agent_experiment(tmp_path, tasks=tasks, conditions=LADDER[:2])
    # The catalog changed after the trials ran: the recorded digest is stale now.
    changed = replace(tasks[0], artifacts=tuple(
        replace(a, text=a.text.replace("Norden Supply", "Norden Supplies"))
        for a in tasks[0].artifacts))
    summary = run_agent_experiment(tmp_path, tasks=[changed], conditions=LADDER[:2])
    assert summary.completed == 0
    codes = {f["code"] for f in _task(_report(tmp_path), "price-blue-kettle")["failures"]}
    assert "stale_digest" in codes


def _leaky(task: AgentTask, classification: str = "restricted", *,
           denied: bool = False) -> AgentTask:
    """The kettle task whose price tool also prints a supplier contract."""
    price = task.functions["get_price"]
    contract = AgentArtifact("contract:norden-supply", "contracts/norden-supply.txt",
                             "policy", classification, SECRET)
    return replace(task, functions={**task.functions,
                                    "get_price": lambda item: price(item) + "\n" + SECRET},
                   artifacts=(*task.artifacts, contract),
                   denied_artifacts=("contract:norden-supply",) if denied else ())


class Recording(FixtureProvider):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        return await super().complete(request)


def test_a_disallowed_artifact_is_never_sent_and_fails_the_policy_gate(tmp_path: Path) -> None:
    task = _leaky(_tasks("price-blue-kettle")[0])
    provider = Recording()
    outcome = asyncio.run(run_agent(provider, task, get_context_manager("full_history"),
                                    budget=None, tokenizer=get_tokenizer()))
    assert outcome.stop_reason == "error"
    assert outcome.error_type is not None and outcome.error_type.startswith(
        "context_manager_failed:forbidden_text: the messages or details hold text of "
        "artifact(s) contract:norden-supply")
    assert outcome.final_artifacts == ("catalog:blue-kettle:get_price",
                                       "contract:norden-supply")
    assert len(provider.requests) == 1  # the turn holding the contract was never sent
    assert not any("NS-2291" in m.content for r in provider.requests for m in r.messages)

    summary = run_agent_experiment(tmp_path, tasks=[task], conditions=(
        LADDER[0], LADDER[1], LADDER[3]))
    assert summary.verdicts[-1] == "ECEB compiled_history: 0/1 tasks qualified"
    result = _task(_report(tmp_path), "price-blue-kettle")
    assert result["baseline"]["gates"]["policy"] == "fail"
    assert result["budgets"][1]["gates"]["policy"] == "fail"
    policy = [f for f in result["failures"] if f["gate"] == "policy"]
    assert {(f["strategy"], f["code"], tuple(f["artifact_ids"])) for f in policy} == {
        ("full_permitted_context", "disallowed_classification", ("contract:norden-supply",)),
        ("compiled", "disallowed_classification", ("contract:norden-supply",))}
    # The text check comes before the budget: at 150 the contract is refused as well.
    assert result["policy_violations"] == 3
    assert [b["policy_violations"] for b in result["budgets"]] == [1, 1]
    for item in iter_jsonl(tmp_path / "agent-trials.jsonl"):
        assert "NS-2291" not in json.dumps(item.value)


def test_an_artifact_also_refused_for_restricted_text_still_fails_the_policy_gate(
        tmp_path: Path) -> None:
    # The task restricts a phrase of the contract too: the text check refuses the turn
    # first, and its failure must still name the artifact it held (fail closed).
    task = replace(_leaky(_tasks("price-blue-kettle")[0]), restricted=("NS-2291",))
    outcome = asyncio.run(run_agent(Recording(), task, get_context_manager("full_history"),
                                    budget=None, tokenizer=get_tokenizer()))
    assert outcome.error_type is not None and outcome.error_type.startswith(
        "context_manager_failed:forbidden_text: the messages or details hold text the task "
        "restricts")
    assert "contract:norden-supply" in outcome.final_artifacts
    run_agent_experiment(tmp_path, tasks=[task], conditions=LADDER[:2])
    result = _task(_report(tmp_path), "price-blue-kettle")
    assert {(f["strategy"], f["code"]) for f in result["failures"] if f["gate"] == "policy"} \
        == {("full_permitted_context", "disallowed_classification"),
            ("compiled", "disallowed_classification")}


def test_a_denied_artifact_fails_the_policy_gate_as_denied(tmp_path: Path) -> None:
    task = _leaky(_tasks("price-blue-kettle")[0], "internal", denied=True)
    run_agent_experiment(tmp_path, tasks=[task], conditions=LADDER[:2])
    result = _task(_report(tmp_path), "price-blue-kettle")
    codes = {(f["strategy"], f["code"]) for f in result["failures"] if f["gate"] == "policy"}
    assert codes == {("full_permitted_context", "denied_artifact"),
                     ("compiled", "denied_artifact")}
    assert not result["qualified"]


def test_tasks_without_artifacts_say_why_there_is_no_eceb_report(tmp_path: Path) -> None:
    document = json.loads((Path(__file__).parents[2] / "src" / "ctxbench" / "data" /
                           "agent-tasks" / "tasks.json").read_text(encoding="utf-8"))
    del document["catalog_artifacts"]
    for task in document["tasks"]:
        del task["required_artifacts"], task["allowed_classifications"]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    _, tasks = load_agent_tasks(path)
    summary = run_agent_experiment(tmp_path / "out", tasks=tasks[:1], conditions=LADDER[:2])
    assert summary.verdicts[-1] == NO_ARTIFACTS
    assert not (tmp_path / "out" / "eceb-report.json").exists()


@pytest.mark.parametrize(("conditions", "line"), [
    ((AgentCondition("last_k", "last_k_turns", 400), LADDER[1]),
     "ECEB: not evaluated: the baseline condition last_k is not full_history without "
     "native context management (ECEB's full_permitted_context)"),
    ((LADDER[0], AgentCondition("elide", "elide_tool_outputs")),
     "ECEB elide: not evaluated: no budget (ECEB judges a compiled context at declared "
     "budgets)"),
])
def test_a_run_ecebs_cannot_judge_says_why(tmp_path: Path, conditions: tuple[
        AgentCondition, ...], line: str) -> None:
    summary = run_agent_experiment(tmp_path, tasks=_tasks("price-blue-kettle"),
                                   conditions=conditions)
    assert line in summary.verdicts
    assert not (tmp_path / "eceb-report.json").exists()
