"""Turn a finished run's trials into a ``symgliph.eceb/run-v0.1`` document.

The document is a function of the trials alone: each observation's selected artifacts
(with their source digests) and context digest are the ones its trial line recorded
(``selected_artifacts``, ``rendered_blake3``), read with the typed trial reader; no
context is rebuilt. That the corpus still holds those sources is ECEB's own check
(the corpus verification and the gate comparing each selected digest with the source's
current one). A trial line written before those members stops here with a located
error saying how to record them.

Error trials that the provider answered (with usage) stay in as observations with an
empty answer and quality 0, so retries and failures never disappear from a strategy's
cost. Error trials without any provider-reported usage (no response, or a prompt the
runtime rejected, such as ``context_length_exceeded``) cannot be ECEB observations, which
record provider-reported tokens; they are counted in ``omitted_without_usage``, their
group is short of repetitions (a failed gate), and they stay in trials.jsonl and the CEF
report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbench import __version__
from ctxbench.core import TokenUsage, usd_to_micro
from ctxbench.protocols.cef.records import Trial
from ctxbench.protocols.cef.trial_format import predates_error
from ctxbench.protocols.eceb.records import RUN_SCHEMA, SPEC_URN
from ctxbench.protocols.eceb.records import STRATEGIES as ECEB_STRATEGIES
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.scorers import to_milli
from ctxbench.runner.spec import ConditionSpec, ExperimentSpec
from ctxbench.runner.workload import Workload

__all__ = ["build_eceb_run", "system_key"]


def _split_cost(trial: Trial, pricing: PricingSnapshot | None) -> tuple[int, int]:
    total = usd_to_micro(trial.billed_cost_usd)
    if pricing is None or total == 0:
        return 0, 0
    cached = trial.cached_input_tokens or 0
    write = trial.cache_write_tokens or 0
    usage = TokenUsage(uncached_input=trial.context_tokens - cached - write,
                       cached_input=cached, cache_write=write,
                       output=trial.output_tokens, reasoning=trial.reasoning_tokens)
    input_part, _ = pricing.cost_micro(usage)
    input_part = min(input_part, total)
    return input_part, total - input_part


def system_key(condition: ConditionSpec) -> str:
    """What names a condition's system as ECEB's evaluated one (``eceb-KEY/``): an
    installed strategy's name, else (``external``, or a ``module:attr`` target) the
    condition's name, a slug, since two such conditions may run different systems."""
    from ctxbench.compiler.discovery import is_target

    if condition.strategy == "external" or is_target(condition.strategy):
        return condition.name
    return condition.strategy


def _system(key: str, spec: ExperimentSpec) -> dict[str, str]:
    from ctxbench.compiler.discovery import strategy_source

    condition = next((c for c in spec.conditions if system_key(c) == key), None)
    if condition is not None and condition.strategy == "external":
        # A system behind the JSON protocol: its command names it.
        return {"name": key, "revision": f"external: {condition.command}"[:300]}
    strategy = key if condition is None else condition.strategy
    source = strategy_source(strategy)
    revision = source.get("version") or source.get("target") or "unknown"
    for dist, version in source.get("requires", {}).items():
        revision += f"; {dist} {version}"
    return {"name": key, "revision": revision}


_WHAT = "the ECEB run file"


def build_eceb_run(*, trials: Sequence[Trial], spec: ExperimentSpec, workload: Workload,
                   tokenizer: str, run_id: str, claim_class: str, judge: dict[str, Any],
                   pricing_identity: dict[str, str], pricing: PricingSnapshot | None,
                   evaluated: str = "compiled") -> tuple[dict[str, Any], int]:
    """The ECEB run document and how many usage-less error trials it could not hold.

    ``trials`` are the run's trial log as read by
    :func:`ctxbench.protocols.cef.records.read_trials`; ``tokenizer`` is the run's
    budget tokenizer id. ``evaluated`` names another strategy to stand as ECEB's
    evaluated system (its ``compiled``, spec §7): its trials are written as
    ``compiled``, beside the baseline's and without the other strategies', and
    ``system.name`` is that strategy's :func:`system_key`.
    """
    by_name = {c.name: c for c in spec.conditions}
    tasks = {t.task_id: t for t in workload.tasks}
    observations: list[dict[str, Any]] = []
    omitted = 0
    for trial in trials:
        task = tasks[trial.task_id]
        strategy = trial.strategy
        if strategy is None:
            raise predates_error(trial.path, trial.line, "strategy", _WHAT)
        base_name = trial.condition.split("@", 1)[0]
        if evaluated != "compiled":
            if system_key(by_name[base_name]) == evaluated:
                strategy = "compiled"
            elif strategy != "full_permitted_context":
                continue
        if strategy not in ECEB_STRATEGIES or (
                trial.budget is not None and trial.budget not in task.budget_ladder):
            # External strategies and budgets off this task's own ladder are not ECEB
            # observations of this benchmark; they stay in trials.jsonl and the CEF report.
            continue
        if trial.failed and trial.context_tokens == 0 and \
                trial.output_tokens + trial.reasoning_tokens == 0:
            omitted += 1
            continue
        selected, rendered = trial.packet(_WHAT)
        input_cost, output_cost = _split_cost(trial, pricing)
        observations.append({
            "task_id": trial.task_id,
            "strategy": strategy,
            "budget": trial.budget,
            "repetition": trial.replicate + 1,
            "input_tokens": trial.context_tokens,
            "output_tokens": trial.output_tokens + trial.reasoning_tokens,
            "input_cost_micro_usd": input_cost,
            "output_cost_micro_usd": output_cost,
            "latency_ms": round(trial.latency_ms),
            "quality_milli": to_milli(trial.task_score),
            "answer": trial.response_text or "",
            "selected_artifacts": [a.as_dict() for a in selected],
            "context_blake3": rendered,
        })
    model = spec.model
    document = {
        "schema": RUN_SCHEMA,
        "spec": SPEC_URN,
        "run_id": run_id,
        "benchmark_id": workload.benchmark.benchmark_id,
        "corpus_root": workload.benchmark.root,
        "claim_class": claim_class,
        "system": ({"name": "ctxbench-compiler", "revision": __version__}
                   if evaluated == "compiled" else _system(evaluated, spec)),
        "model": {"provider": model.provider, "name": model.model},
        "judge": judge,
        "tokenizer": {"name": tokenizer},
        "pricing": pricing_identity,
        "decoding": {"temperature_milli": round(model.temperature * 1000),
                     "max_output_tokens": model.max_output_tokens,
                     "stop": "|".join(model.stop)},
        "observations": observations,
    }
    return document, omitted
