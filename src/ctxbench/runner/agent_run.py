"""Run agent tasks under several context managers, then write the CEF and public-eval reports.

    summary = run_agent_experiment("out", tasks=agent_tasks(), provider="fixture",
                                   conditions=[AgentCondition("full_history", "full_history"),
                                               AgentCondition("last_k", "last_k_turns", 400)])

Every trial (task x condition x replicate) is one line of ``agent-trials.jsonl``
(``ctxbench.agent-trial.v1``: the stop reason, the final answer, the score, and every
turn: the context manager's committed decision, the provider-reported usage, latency,
request id and tool calls), fsynced before the next trial starts; a rerun skips what is
recorded. From that log alone:

- ``cef-trials.jsonl``: one ``ctxbench.trial.v1`` record per trial: task score (1 when the
  final answer holds the expected answer), evidence recall (the share of the task's
  evidence in what was sent on the last turn), ``context_tokens`` = the sum of the
  provider-observed input tokens over the turns (a summarizing manager's calls included),
  the summed output tokens, cost and latency; a trial that stopped without an answer
  (``no_action``, ``turn_limit``, ``token_limit``) scores 0 and an error is a failed trial;
  the condition's context commit is the BLAKE3 of its turns' decision commits (none for
  the baseline, the first condition);
- ``cef-report.json`` / ``.md`` against ``cef-prereg.json``, written before the first trial;
- ``public-eval/<condition>.jsonl`` rows (resolved only for a final answer that scores 1;
  tokens, usd, latency_ms, tool_calls) and ``public-eval-<condition>.json`` / ``.md``,
  each treatment against the baseline;
- the ECEB files (:mod:`ctxbench.runner.agent_eceb`) when the tasks declare the artifacts
  their tools read: ``eceb-corpus/``, ``eceb-benchmark.json``, ``eceb-run.json``,
  ``eceb-report.json`` / ``.md``; otherwise one verdict line says why there are none;
- ``report.html``: the run page (the CEF and ECEB reports, then the per-turn context
  curves).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ctxbench.compiler.context_managers import (
    ContextManager,
    get_context_manager,
    manager_source,
)
from ctxbench.compiler.context_managers.params import declared_params, resolve_params
from ctxbench.compiler.tokenizers import DEFAULT_TOKENIZER, Tokenizer, get_tokenizer
from ctxbench.core import (
    InputError,
    TokenUsage,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    blake3_json,
    iter_jsonl,
    sha256_hex,
)
from ctxbench.core.money import micro_to_usd
from ctxbench.runner.agent import AgentLimits, AgentOutcome, native_context, run_agent
from ctxbench.runner.agent_eceb import AgentEceb, EcebCondition, write_agent_eceb
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.providers.base import Provider, get_provider
from ctxbench.runner.reports import declare_preregistration, run_preregistration
from ctxbench.runner.trial_log import TrialLog
from ctxbench.workloads.agent import AgentTask

__all__ = ["AGENT_TRIAL_SCHEMA", "SCORER", "AgentCondition", "AgentRun",
           "AgentRunInterrupted", "AgentRunSummary",
           "cef_record", "check_conditions", "condition_params", "cost_source",
           "expected_answers",
           "open_agent_run",
           "public_eval_row", "run_agent_experiment", "run_agent_matrix",
           "turns_cost_micro", "write_agent_reports"]

U = TypeVar("U")

AGENT_TRIAL_SCHEMA = "ctxbench.agent-trial.v1"
SCORER = "agent-final-answer-v1"


@dataclass(frozen=True, slots=True)
class AgentCondition:
    """One condition: a context manager, its budget, whether the provider's own context
    management is turned on (``native_compaction`` / ``combined`` in CEF terms), and the
    manager's parameters (:mod:`ctxbench.compiler.context_managers.params`; the declared
    defaults fill in the rest)."""

    name: str
    manager: str
    budget: int | None = None
    native_context: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)


class AgentRunInterrupted(KeyboardInterrupt):
    """Ctrl-C during an agent run's trials: ``completed`` trials were recorded (fsynced)
    by this run before it stopped, ``skipped`` were found recorded; ``--resume`` goes on."""

    def __init__(self, completed: int, skipped: int) -> None:
        super().__init__(f"interrupted after {completed} trial(s)")
        self.completed = completed
        self.skipped = skipped


@dataclass(frozen=True, slots=True)
class AgentRunSummary:
    """What a finished run wrote, and one verdict line per compared condition."""

    output: Path
    completed: int
    skipped: int
    verdicts: tuple[str, ...]
    paths: Mapping[str, Path] = field(default_factory=dict)


def cost_source(provider: Provider, pricing: PricingSnapshot | None,
                self_hosted: bool) -> tuple[str, str]:
    """(cost_source, its reference) of a run: the pricing snapshot, the fixture's zero
    cost, or a self-hosted model; InputError for a priced provider without a snapshot."""
    if pricing is not None:
        return "pricing_snapshot", pricing.reference
    if provider.usage_source == "deterministic_fixture":
        return "zero_cost_fixture", "ctxbench fixture provider"
    if self_hosted or provider.name == "llamacpp":
        return "self_hosted_no_api_fee", f"self-hosted {provider.model}"
    raise InputError(f"pricing: expected a pricing snapshot for provider {provider.name} "
                     "(or self_hosted for a local server), got none")


def turns_cost_micro(turns: Sequence[Mapping[str, Any]], pricing: PricingSnapshot) -> int:
    """Micro-USD of a trial's turns, each priced as the one request it was (its reported
    input, cached input, output and reasoning tokens), a summarizing manager's calls
    included."""
    return sum(turns_cost_split(turns, pricing))


def turns_cost_split(turns: Sequence[Mapping[str, Any]], pricing: PricingSnapshot
                     ) -> tuple[int, int]:
    """:func:`turns_cost_micro` as (input, output) micro-USD."""
    usages = [TokenUsage(uncached_input=t.get("input_tokens", 0)
                         - t.get("cached_input_tokens", 0),
                         cached_input=t.get("cached_input_tokens", 0),
                         output=t.get("output_tokens", 0),
                         reasoning=t.get("reasoning_tokens", 0))
              for t in turns]
    usages += [TokenUsage(uncached_input=s["input_tokens"], output=s["output_tokens"])
               for t in turns for s in t.get("summaries", ())]
    costs = [pricing.cost_micro(u) for u in usages]
    return sum(c[0] for c in costs), sum(c[1] for c in costs)


def condition_params(conditions: Sequence[AgentCondition],
                     managers: Mapping[str, ContextManager]) -> dict[str, dict[str, Any]]:
    """Each condition's parameters as its manager receives them (checked against the
    manager's declaration, defaults filled in); InputError naming the condition."""
    out: dict[str, dict[str, Any]] = {}
    for c in conditions:
        try:
            out[c.name] = resolve_params(declared_params(managers[c.manager]), c.params)
        except ValueError as exc:
            raise InputError(f"condition {c.name}: params.{exc}") from None
    return out


def expected_answers(answers: Sequence[str]) -> dict[str, Any]:
    """A trial's ``expected`` member (``ctxbench.trial.v1``'s shape) for ``answers``."""
    return {"answers": list(answers), "answer_terms": [], "abstention": False}


def _record(task: AgentTask, condition: AgentCondition, replicate: int, outcome: AgentOutcome,
            *, identity: Mapping[str, Any], native: Mapping[str, Any] | None,
            pricing: PricingSnapshot | None, params: Mapping[str, Any]) -> dict[str, Any]:
    split = (0, 0) if pricing is None else turns_cost_split(outcome.turns, pricing)
    cost = sum(split)
    score = task.score(outcome.final_answer) if outcome.stop_reason == "final_answer" else 0.0
    digests = {a.artifact_id: a.blake3 for a in task.artifacts}
    return {
        "schema_version": AGENT_TRIAL_SCHEMA, **identity, "task_id": task.task_id,
        "query": task.prompt, "expected": expected_answers([task.answer]),
        "condition": condition.name, "replicate": replicate, "manager": condition.manager,
        "manager_source": manager_source(condition.manager), "budget": condition.budget,
        "params": dict(params),
        "native_context_management": dict(native) if native else None,
        "stop_reason": outcome.stop_reason, "final_answer": outcome.final_answer,
        "error_type": outcome.error_type, "task_score": score,
        "evidence_recall": task.evidence_recall(outcome.final_sent),
        "turns": list(outcome.turns), "turn_count": len(outcome.turns),
        "tool_calls": outcome.tool_calls, "usage": outcome.usage.as_dict(),
        "context_tokens": outcome.usage.context_tokens,
        "output_tokens": outcome.usage.output, "reasoning_tokens": outcome.usage.reasoning,
        "cost_micro_usd": cost, "latency_ms": round(outcome.latency_ms, 3),
        "provider_request_id": outcome.request_id,
        # What ECEB is shown of the trial (runner.agent_eceb): the answering turn's
        # artifacts with their source digests, that turn's messages' BLAKE3, the largest
        # per-turn count ctxbench made, and the cost's input part.
        "selected_artifacts": [{"artifact_id": a, "blake3": digests[a]}
                               for a in outcome.final_artifacts],
        "context_blake3": outcome.final_context, "prompt_tokens": outcome.prompt_tokens,
        "input_cost_micro_usd": split[0],
    }


def cef_record(trial: Mapping[str, Any], baseline: str) -> dict[str, Any]:
    """The ``ctxbench.trial.v1`` record of one agent trial (see the module docstring)."""
    failed = trial["stop_reason"] == "error"
    used = trial["context_tokens"] + trial["output_tokens"] + trial["reasoning_tokens"]
    usage_source = trial["usage_source"] if used or not failed else "runner_error"
    answer = trial["final_answer"]
    response = None if failed else (answer if answer is not None else "")
    commits = [t["decision"] for t in trial["turns"]]
    out: dict[str, Any] = {
        "schema_version": "ctxbench.trial.v1",
        **{k: trial[k] for k in ("workload", "workload_version", "task_id", "provider",
                                 "model", "scorer", "cost_source", "cost_source_reference",
                                 "replicate", "condition", "task_score", "evidence_recall",
                                 "context_tokens", "reasoning_tokens", "output_tokens",
                                 "latency_ms")},
        "provider_request_id": trial["provider_request_id"] or "none",
        "usage_source": usage_source, "outcome": "error" if failed else "success",
        "error_type": trial["error_type"] if failed else None,
        "context_sha256": sha256_hex(json.dumps(commits, sort_keys=True).encode("utf-8")),
        "response_text": response,
        "response_sha256": None if response is None else sha256_hex(response.encode("utf-8")),
        "unsupported_claim_rate": 0.0,
        "billed_cost_usd": micro_to_usd(trial["cost_micro_usd"]),
        "context_commit_id": None if trial["condition"] == baseline
        else "ctx_" + blake3_json(commits)[:32],
        "strategy": trial["manager"],
        "cached_input_tokens": trial["usage"]["cached_input_tokens"],
    }
    if trial["budget"] is not None:
        out["budget"] = trial["budget"]
    for key in ("query", "expected"):  # absent from logs written before they were recorded
        if key in trial:
            out[key] = trial[key]
    return out


def public_eval_row(trial: Mapping[str, Any]) -> dict[str, Any]:
    """The public-eval row of one agent trial: a premature stop or error is unresolved."""
    tokens = trial["context_tokens"] + trial["output_tokens"] + trial["reasoning_tokens"]
    return {"instance_id": trial["task_id"], "run": trial["replicate"],
            "resolved": trial["stop_reason"] == "final_answer" and trial["task_score"] >= 1.0,
            "tokens": tokens, "usd": micro_to_usd(trial["cost_micro_usd"]),
            "usd_measured": trial["cost_source"] != "zero_cost_fixture",
            "latency_ms": round(trial["latency_ms"]), "tool_calls": trial["tool_calls"],
            "output_tokens": trial["output_tokens"],
            "reasoning_tokens": trial["reasoning_tokens"]}


def _lines(rows: Sequence[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
                   for r in rows).encode("utf-8")


@dataclass(frozen=True, slots=True)
class AgentRun:
    """What an agent experiment holds from its preregistration to its reports."""

    out: Path
    provider: Provider
    identity: dict[str, Any]
    log: TrialLog
    tokenizer: Tokenizer


def check_conditions(conditions: Sequence[AgentCondition]) -> list[str]:
    """The conditions' names: a baseline first and at least one other, each distinct."""
    if len(conditions) < 2:
        raise InputError("conditions: expected a baseline and at least one other, got "
                         f"{len(conditions)}")
    names = [c.name for c in conditions]
    if len(set(names)) != len(names):
        raise InputError(f"conditions: expected distinct names, got {names}")
    return names


def open_agent_run(output: str | Path, instance: Provider, *, scorer: str, workload: str,
                   workload_version: str, tokenizer: str, pricing: PricingSnapshot | None,
                   self_hosted: bool, names: Sequence[str], replicates: int,
                   seed: int) -> AgentRun:
    """Declare the preregistration (a resumed run must find the same one) and open the
    trial log of an agent experiment on ``instance``, before its first trial."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    source, reference = cost_source(instance, pricing, self_hosted)
    identity = {"workload": workload, "workload_version": workload_version,
                "provider": instance.name, "model": instance.model, "scorer": scorer,
                "usage_source": instance.usage_source, "cost_source": source,
                "cost_source_reference": reference, "tokenizer": tokenizer}
    api = getattr(instance, "api", None)
    if isinstance(api, str):
        # The wire API of a provider that speaks several (openai: chat_completions or
        # responses): the same model answers differently through them.
        identity["provider_api"] = api
    declare_preregistration(out / "cef-prereg.json", run_preregistration(
        baseline=names[0], conditions=list(names), replicates=replicates, seed=seed))
    return AgentRun(out, instance, identity, TrialLog(out / "agent-trials.jsonl", resume=True),
                    get_tokenizer(tokenizer))


def run_agent_matrix(run: AgentRun, units: Sequence[tuple[str, U]],
                     conditions: Sequence[AgentCondition], replicates: int,
                     trial: Callable[[U, AgentCondition, int], Awaitable[dict[str, Any]]], *,
                     say: Callable[[str], None] | None = None,
                     eceb: AgentEceb | None = None) -> AgentRunSummary:
    """Run every (unit, condition, replicate) not yet in the log (``units``: id and unit),
    one fsynced line each, in one event loop; then write the reports (ECEB's from
    ``eceb``: without it, a line says why there is none)."""
    counts = [0, 0]  # done, skipped
    started = time.perf_counter()

    async def run_all() -> None:
        # One event loop for the whole run: an HTTP provider's connections live in it.
        try:
            for replicate in range(replicates):
                for key, unit in units:
                    for c in conditions:
                        if (key, c.name, replicate) in run.log.recorded:
                            counts[1] += 1
                            continue
                        record = await trial(unit, c, replicate)
                        run.log.append(record)
                        counts[0] += 1
                        if say is not None:
                            say(f"{key} {c.name} r{replicate}: {record['stop_reason']} "
                                f"({len(record['turns'])} turns, "
                                f"{time.perf_counter() - started:.0f} s)")
        finally:
            await run.provider.aclose()

    before = len(run.log.recorded)
    names = [c.name for c in conditions]
    try:
        try:
            asyncio.run(run_all())
        finally:
            run.log.close()
        paths, verdicts = write_agent_reports(run.out, baseline=names[0],
                                              conditions=names, eceb=eceb)
    except KeyboardInterrupt:
        # What the log holds is what was done: a trial whose line is written counts (the
        # reports, if that is where it stopped, are written by the --resume).
        raise AgentRunInterrupted(len(run.log.recorded) - before, counts[1]) from None
    return AgentRunSummary(run.out, counts[0], counts[1], tuple(verdicts), paths)


def run_agent_experiment(
    output: str | Path, *, tasks: Sequence[AgentTask], conditions: Sequence[AgentCondition],
    provider: str = "fixture", provider_options: Mapping[str, Any] | None = None,
    replicates: int = 1, seed: int = 0, limits: AgentLimits | None = None,
    workload: str = "ctxbench-agent-tasks", workload_version: str = "1",
    tokenizer: str = DEFAULT_TOKENIZER, pricing: PricingSnapshot | None = None,
    self_hosted: bool = False, say: Callable[[str], None] | None = None,
) -> AgentRunSummary:
    """Run every (task, condition, replicate) not yet recorded, then write the reports."""
    names = check_conditions(conditions)
    limits = limits or AgentLimits()
    managers = {c.manager: get_context_manager(c.manager) for c in conditions}
    for c in conditions:
        if managers[c.manager].budgeted != (c.budget is not None) and c.budget is not None:
            raise InputError(f"condition {c.name}: {c.manager} takes no budget")
    params = condition_params(conditions, managers)
    instance = get_provider(provider, **dict(provider_options or {}))
    natives = {c.name: native_context(instance, c.name, c.budget) for c in conditions
               if c.native_context}
    run = open_agent_run(output, instance, scorer=SCORER, workload=workload,
                         workload_version=workload_version, tokenizer=tokenizer,
                         pricing=pricing, self_hosted=self_hosted, names=names,
                         replicates=replicates, seed=seed)

    async def trial(task: AgentTask, c: AgentCondition, replicate: int) -> dict[str, Any]:
        outcome = await run_agent(
            run.provider, task, managers[c.manager], budget=c.budget,
            tokenizer=run.tokenizer, limits=limits, seed=seed + replicate,
            extra=natives.get(c.name), params=params[c.name])
        return _record(task, c, replicate, outcome, identity=run.identity,
                       native=natives.get(c.name), pricing=pricing, params=params[c.name])

    eceb = AgentEceb(
        tuple(tasks), tuple(EcebCondition(c.name, c.manager, c.budget, c.native_context)
                            for c in conditions), replicates, workload,
        pricing.source_reference if pricing is not None
        else str(run.identity["cost_source_reference"]),
        None if pricing is None else pricing.effective_date,
        {"temperature_milli": 0, "max_output_tokens": limits.max_output_tokens,
         "max_turns": limits.max_turns},
        instance.usage_source == "deterministic_fixture")
    return run_agent_matrix(run, [(t.task_id, t) for t in tasks], conditions, replicates,
                            trial, say=say, eceb=eceb)


def write_agent_reports(out: Path, *, baseline: str, conditions: Sequence[str],
                        eceb: AgentEceb | None = None) -> tuple[dict[str, Path], list[str]]:
    """The CEF, public-eval and ECEB reports of ``out/agent-trials.jsonl`` (see the
    module)."""
    from ctxbench.protocols.cef.api import analyze_files
    from ctxbench.protocols.public_eval.api import compare_files
    from ctxbench.protocols.public_eval.settings import Settings
    from ctxbench.render.markdown import render_markdown
    from ctxbench.render.public_eval import claim_sentence
    from ctxbench.runner.reports import cef_verdicts

    trials = [item.value for item in iter_jsonl(out / "agent-trials.jsonl")]
    order = {name: n for n, name in enumerate(conditions)}
    trials.sort(key=lambda t: (order.get(t["condition"], len(order)), t["task_id"],
                               t["replicate"]))
    paths = {"agent-trials.jsonl": out / "agent-trials.jsonl",
             "cef-trials.jsonl": out / "cef-trials.jsonl",
             "cef-report.json": out / "cef-report.json", "cef-report.md": out / "cef-report.md"}
    atomic_write_bytes(paths["cef-trials.jsonl"],
                       _lines([cef_record(t, baseline) for t in trials]))
    cef = analyze_files([paths["cef-trials.jsonl"]], out / "cef-prereg.json",
                        output=paths["cef-report.json"])
    atomic_write_json(paths["cef-report.json"], cef.to_json())
    atomic_write_text(paths["cef-report.md"],
                      render_markdown(cef.to_json(), where=str(paths["cef-report.json"])))
    verdicts = cef_verdicts(cef)
    rows_dir = out / "public-eval"
    rows_dir.mkdir(exist_ok=True)
    for name in conditions:
        paths[f"public-eval/{name}.jsonl"] = rows_dir / f"{name}.jsonl"
        atomic_write_bytes(rows_dir / f"{name}.jsonl", _lines(
            [public_eval_row(t) for t in trials if t["condition"] == name]))
    for name in conditions[1:]:
        report = compare_files(rows_dir / f"{baseline}.jsonl", rows_dir / f"{name}.jsonl",
                               Settings(baseline_name=baseline, treatment_name=name))
        target = out / f"public-eval-{name}.json"
        atomic_write_json(target, report.to_json())
        atomic_write_text(target.with_suffix(".md"),
                          render_markdown(report.to_json(), where=str(target)))
        paths[target.name] = target
        verdicts.append(f"public-eval {name} vs {baseline}: {claim_sentence(report)}")
    more, lines = write_agent_eceb(out / "agent-trials.jsonl", eceb)
    paths.update(more)
    verdicts.extend(lines)
    from ctxbench.render.html.report import write_html

    paths["report.html"] = write_html([out], out / "report.html")
    return paths, verdicts
