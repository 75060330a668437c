"""In an agent experiment, a third-party manager's crash in its worker process is that
trial's failure; the run goes on and the other conditions' trials are unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

from ctxbench.core import iter_jsonl
from ctxbench.runner.agent_run import AgentCondition, run_agent_experiment
from ctxbench.workloads.agent_tasks import agent_tasks

sys.path.insert(0, str(Path(__file__).parents[1] / "compiler"))  # manager_plugins


def test_a_crashing_worker_fails_its_trials_and_the_run_goes_on(tmp_path: Path) -> None:
    conditions = [AgentCondition("full_history", "full_history"),
                  AgentCondition("crash", "manager_plugins:CRASH", 400),
                  AgentCondition("where", "manager_plugins:WHERE", 4000)]
    summary = run_agent_experiment(tmp_path, tasks=agent_tasks()[:2], conditions=conditions)
    assert summary.completed == 6
    records = {(r["task_id"], r["condition"]): r
               for r in (i.value for i in iter_jsonl(tmp_path / "agent-trials.jsonl"))}
    for task in agent_tasks()[:2]:
        crashed = records[(task.task_id, "crash")]
        assert crashed["stop_reason"] == "error" and crashed["turns"] == []
        assert crashed["error_type"].startswith(
            "context_manager_failed:exception: the worker process ended (exit code 3)")
        where = records[(task.task_id, "where")]
        assert where["stop_reason"] == "final_answer"
        assert where["manager_source"] == {"origin": "module:attr",
                                           "target": "manager_plugins:WHERE"}
        assert records[(task.task_id, "full_history")]["stop_reason"] == "final_answer"
