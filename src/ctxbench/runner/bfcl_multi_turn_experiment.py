"""BFCL multi-turn tasks under several context managers, with the agent run's reports.

    summary = run_multi_turn_experiment("out", tasks=load_multi_turn("multi_turn_base",
                                        limit=10), provider="openai", conditions=[...])

Each (task, condition, replicate) is run by :func:`ctxbench.runner.bfcl_multi_turn_run.
run_multi_turn` and recorded as one ``ctxbench.agent-trial.v1`` line of
``agent-trials.jsonl`` (fsynced; a rerun skips what is recorded), so the agent run's
reports are written from it unchanged (:func:`ctxbench.runner.agent_run.
write_agent_reports`: CEF trials and report, public-eval rows and reports, the HTML page
with the per-request context curves). In that log:

- ``task_score`` is BFCL's verdict on the trajectory (1 or 0); ``multi_turn_check`` holds
  its error type and turn, ``trajectory`` the calls made per turn and step;
- ``stop_reason``, in the agent run's terms: ``final_answer`` when every turn ended with a
  reply without calls (the task ran to its end; resolved when BFCL accepts it),
  ``turn_limit`` when a turn passed the step limit (BFCL's force-termination), ``error``;
  ``multi_turn_stop`` keeps the multi-turn name (``completed``, ``force_terminated``,
  ``error``);
- ``evidence_recall`` is 1.0: BFCL's tasks declare no evidence (the verdict is on state and
  results);
- ``turns`` holds one record per model request (its ``decision`` commit and usage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxbench.compiler.context_managers import get_context_manager, manager_source
from ctxbench.compiler.tokenizers import DEFAULT_TOKENIZER
from ctxbench.core import InputError
from ctxbench.runner.agent_run import (
    AGENT_TRIAL_SCHEMA,
    AgentCondition,
    AgentRunSummary,
    check_conditions,
    condition_params,
    expected_answers,
    open_agent_run,
    run_agent_matrix,
    turns_cost_micro,
)
from ctxbench.runner.bfcl_multi_turn_run import BFCL_MAX_STEPS, MultiTurnOutcome, run_multi_turn
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.providers.base import get_provider
from ctxbench.workloads.bfcl_multi_turn import MultiTurnTask, trajectory_json

__all__ = ["MULTI_TURN_SCORER", "run_multi_turn_experiment"]

MULTI_TURN_SCORER = "bfcl-multi-turn-state-response-v1"
_STOPS = {"completed": "final_answer", "force_terminated": "turn_limit", "error": "error"}


def _record(task: MultiTurnTask, condition: AgentCondition, replicate: int,
            outcome: MultiTurnOutcome, identity: Mapping[str, Any],
            pricing: PricingSnapshot | None = None,
            params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "schema_version": AGENT_TRIAL_SCHEMA, **identity, "task_id": task.task_id,
        # The user's turns; expected: each turn's ground-truth calls, as BFCL writes them.
        "query": "\n\n".join("\n".join(turn) for turn in task.turns),
        "expected": expected_answers(["[" + ", ".join(c.render() for c in turn) + "]"
                                      for turn in task.ground_truth]),
        "condition": condition.name, "replicate": replicate, "manager": condition.manager,
        "manager_source": manager_source(condition.manager), "budget": condition.budget,
        "params": dict(params or {}),
        "native_context_management": None, "stop_reason": _STOPS[outcome.stop_reason],
        "multi_turn_stop": outcome.stop_reason, "final_answer": None,
        "error_type": outcome.error_type, "task_score": outcome.score,
        "multi_turn_check": {"valid": outcome.check.valid,
                             "error_type": outcome.check.error_type,
                             "turn": outcome.check.turn},
        "trajectory": trajectory_json(outcome.trajectory), "evidence_recall": 1.0,
        "turns": list(outcome.requests), "turn_count": len(outcome.requests),
        "tool_calls": outcome.tool_calls, "usage": outcome.usage.as_dict(),
        "context_tokens": outcome.usage.context_tokens,
        "output_tokens": outcome.usage.output, "reasoning_tokens": outcome.usage.reasoning,
        "cost_micro_usd": 0 if pricing is None else turns_cost_micro(outcome.requests,
                                                                      pricing),
        "latency_ms": round(outcome.latency_ms, 3),
        "provider_request_id": next((r.get("request_id") for r in reversed(outcome.requests)
                                     if r.get("request_id")), None),
    }


def run_multi_turn_experiment(
    output: str | Path, *, tasks: Sequence[MultiTurnTask],
    conditions: Sequence[AgentCondition], provider: str = "fixture",
    provider_options: Mapping[str, Any] | None = None, replicates: int = 1, seed: int = 0,
    max_steps: int = BFCL_MAX_STEPS, max_output_tokens: int = 256,
    workload: str = "bfcl-multi-turn", workload_version: str = "bfcl-eval-2026.3.23",
    tokenizer: str = DEFAULT_TOKENIZER, self_hosted: bool = False,
    pricing: PricingSnapshot | None = None,
) -> AgentRunSummary:
    """Run every (task, condition, replicate) not yet recorded, then write the reports.

    A priced provider needs ``pricing``: each model request is priced as one request from
    the usage it reported (:func:`~ctxbench.runner.agent_run.turns_cost_micro`).
    """
    names = check_conditions(conditions)
    if any(c.native_context for c in conditions):
        raise InputError("conditions: native_context is not supported on the multi-turn "
                         "suites yet")
    managers = {c.manager: get_context_manager(c.manager) for c in conditions}
    params = condition_params(conditions, managers)
    instance = get_provider(provider, **dict(provider_options or {}))
    run = open_agent_run(output, instance, scorer=MULTI_TURN_SCORER, workload=workload,
                         workload_version=workload_version, tokenizer=tokenizer,
                         pricing=pricing, self_hosted=self_hosted, names=names,
                         replicates=replicates, seed=seed)

    async def trial(task: MultiTurnTask, c: AgentCondition, replicate: int) -> dict[str, Any]:
        outcome = await run_multi_turn(
            run.provider, task, managers[c.manager], budget=c.budget,
            tokenizer=run.tokenizer, max_steps=max_steps,
            max_output_tokens=max_output_tokens, seed=seed + replicate, params=params[c.name])
        return _record(task, c, replicate, outcome, run.identity, pricing, params[c.name])

    return run_agent_matrix(run, [(t.task_id, t) for t in tasks], conditions, replicates,
                            trial)
