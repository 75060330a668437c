"""Recorded agent traces replayed under several context managers, with the agent run's reports.

    points = [p for t in traces for p in decision_points(t)]
    summary = run_trace_experiment("out", points=points, provider="fixture",
                                   conditions=[AgentCondition("full", "full_history"),
                                               AgentCondition("elided", "elide_tool_outputs",
                                                              4000)])

Each (decision point, condition, replicate) is replayed once by
:func:`ctxbench.runner.trace_replay.replay_point` and recorded as one
``ctxbench.agent-trial.v1`` line of ``agent-trials.jsonl`` (fsynced; a rerun skips what is
recorded), so the CEF, public-eval and HTML reports are written by
:func:`ctxbench.runner.agent_run.write_agent_reports` unchanged. In that log, per point:

- ``task_id`` is the point's id (``TRACE@INDEX``), ``point_kind`` ``action`` or ``answer``;
- ``task_score`` is the next-move score (:meth:`DecisionPoint.score`: 1 for the recorded
  calls, the answer's token F1 against the recorded answer); ``evidence_recall`` is the
  share of the point's evidence (the tool results since the last user message) in what was
  sent, as trace_replay computes it;
- ``context_tokens`` is the provider-observed input tokens of the request (a summarizing
  manager's calls included), ``cost_micro_usd`` that usage priced when a snapshot is given;
- ``stop_reason`` is ``final_answer`` when the model replied (resolved in public-eval only
  at score 1), ``error`` when the decision was refused or the request failed (its
  ``error_type``; task score and evidence recall 0: nothing was scored);
- ``turns`` holds the one request (its ``decision`` commit and usage), for the curves.
"""

from __future__ import annotations

import dataclasses
import json
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
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.providers.base import get_provider
from ctxbench.runner.trace_replay import TraceOutcome, replay_point
from ctxbench.workloads.agent_traces import DecisionPoint
from ctxbench.workloads.calls import ToolCall, render_calls

__all__ = ["TRACE_SCORER", "recorded_move", "run_trace_experiment"]

TRACE_SCORER = "trace-next-move-v1"


def recorded_move(point: DecisionPoint) -> str:
    """The trace's move at ``point``: its calls' canonical text (``[f(a=1)]``; a call whose
    arguments are not a JSON object as ``f(<arguments>)``), or the answer it gave."""
    refs = point.expected.tool_calls
    if not refs:
        return point.expected.content
    parts = []
    for ref in refs:
        try:
            arguments = json.loads(ref.arguments)
        except (ValueError, RecursionError):
            arguments = None
        parts.append(render_calls([ToolCall(ref.name, arguments)])[1:-1]
                     if isinstance(arguments, dict) else f"{ref.name}({ref.arguments})")
    return "[" + ", ".join(parts) + "]"


def _record(point: DecisionPoint, condition: AgentCondition, replicate: int,
            outcome: TraceOutcome, identity: Mapping[str, Any],
            pricing: PricingSnapshot | None,
            params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    usage = outcome.usage
    turn: dict[str, Any] = {"turn": 0, "decision": outcome.decision,
                            "input_tokens": usage.context_tokens,
                            "cached_input_tokens": usage.cached_input,
                            "output_tokens": usage.output, "reasoning_tokens": usage.reasoning,
                            "latency_ms": round(outcome.latency_ms, 3),
                            "request_id": outcome.request_id}
    failed = outcome.error_type is not None
    return {
        "schema_version": AGENT_TRIAL_SCHEMA, **identity, "task_id": point.point_id,
        # The user's last message before the point; expected: the recorded move there.
        "query": next((m.content for m in reversed(point.history) if m.role == "user"), ""),
        "expected": expected_answers([recorded_move(point)]),
        "point_kind": point.kind, "trace_agent": point.trace.agent,
        "trace_source": point.trace.source, "condition": condition.name,
        "replicate": replicate, "manager": condition.manager,
        "manager_source": manager_source(condition.manager), "budget": condition.budget,
        "params": dict(params or {}),
        "native_context_management": None,
        "stop_reason": "error" if failed else "final_answer",
        "final_answer": outcome.response_text, "error_type": outcome.error_type,
        "task_score": outcome.score or 0.0,
        "evidence_recall": outcome.evidence_recall or 0.0,
        "turns": [turn] if outcome.decision is not None else [],
        "turn_count": 1 if outcome.decision is not None else 0, "tool_calls": 0,
        "usage": usage.as_dict(), "context_tokens": usage.context_tokens,
        "output_tokens": usage.output, "reasoning_tokens": usage.reasoning,
        # The usage already holds a summarizing manager's calls: priced as one request.
        "cost_micro_usd": 0 if pricing is None else turns_cost_micro([turn], pricing),
        "latency_ms": round(outcome.latency_ms, 3),
        "provider_request_id": outcome.request_id,
    }


def run_trace_experiment(
    output: str | Path, *, points: Sequence[DecisionPoint],
    conditions: Sequence[AgentCondition], provider: str = "fixture",
    provider_options: Mapping[str, Any] | None = None, replicates: int = 1, seed: int = 0,
    max_output_tokens: int = 256, temperature: float = 0.0,
    workload: str = "agent-traces", workload_version: str = "1",
    tokenizer: str = DEFAULT_TOKENIZER, pricing: PricingSnapshot | None = None,
    self_hosted: bool = False, notes: Sequence[str] = (),
) -> AgentRunSummary:
    """Replay every (point, condition, replicate) not yet recorded, then write the reports;
    ``notes`` (what the trace readers set aside) open the summary's lines."""
    names = check_conditions(conditions)
    if not points:
        raise InputError("points: expected at least one decision point (a completed trace "
                         "with an assistant move), got none")
    if any(c.native_context for c in conditions):
        raise InputError("conditions: native_context is not supported on trace replay")
    managers = {c.manager: get_context_manager(c.manager) for c in conditions}
    params = condition_params(conditions, managers)
    instance = get_provider(provider, **dict(provider_options or {}))
    run = open_agent_run(output, instance, scorer=TRACE_SCORER, workload=workload,
                         workload_version=workload_version, tokenizer=tokenizer,
                         pricing=pricing, self_hosted=self_hosted, names=names,
                         replicates=replicates, seed=seed)

    async def trial(point: DecisionPoint, c: AgentCondition, replicate: int
                    ) -> dict[str, Any]:
        outcome = await replay_point(
            run.provider, point, managers[c.manager], budget=c.budget,
            tokenizer=run.tokenizer, max_output_tokens=max_output_tokens,
            temperature=temperature, seed=seed + replicate, params=params[c.name])
        return _record(point, c, replicate, outcome, run.identity, pricing, params[c.name])

    summary = run_agent_matrix(run, [(p.point_id, p) for p in points], conditions,
                               replicates, trial)
    return dataclasses.replace(summary, verdicts=(*notes, *summary.verdicts))
