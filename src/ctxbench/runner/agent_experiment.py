"""``ctxbench run`` on an agent-run spec (:mod:`ctxbench.runner.agent_spec`): the agent
tasks, BFCL multi-turn or recorded traces under the spec's context managers, on its
provider, into its output directory, resumable, with the CEF, public-eval and HTML reports.

    run = run_agent_spec("agent.toml")               # a new run
    run = run_agent_spec("agent.toml", resume=True)  # continue; recorded trials are skipped

The formats run through :func:`~ctxbench.runner.agent_run.run_agent_experiment`,
:func:`~ctxbench.runner.bfcl_multi_turn_experiment.run_multi_turn_experiment` and
:func:`~ctxbench.runner.trace_experiment.run_trace_experiment`; a priced provider is priced
from the spec's pricing snapshot, every request (turn) priced from its reported usage.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ctxbench.core import InputError, blake3_file, blake3_json
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.runner.agent_run import AgentCondition, AgentRunInterrupted, AgentRunSummary
from ctxbench.runner.agent_spec import (
    SESSION_FORMATS,
    AgentConditionSpec,
    AgentSpec,
    agent_format_of,
    load_agent_spec,
)
from ctxbench.runner.pricing import PricingSnapshot, load_pricing_snapshot
from ctxbench.runner.providers.registry import provider_factory
from ctxbench.runner.runlock import RunLock

__all__ = ["AgentSpecRun", "agent_spec_format", "run_agent_spec"]

FIXTURE_LABEL = ("conformance fixture: the deterministic fixture provider, word counts as "
                 "tokens, zero cost; not a measurement of any model")


@dataclass(frozen=True, slots=True)
class AgentSpecRun:
    """What an agent run wrote (the fields of the runner's RunSummary)."""

    output: Path
    run_id: str
    completed: int
    skipped: int
    interrupted: bool
    resume_command: str
    reports: Mapping[str, Path] = field(default_factory=dict)
    verdicts: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()


def agent_spec_format(path: str | os.PathLike[str]) -> str | None:
    """The agent format the spec at ``path`` names, None for an ordinary spec."""
    document, _ = load_toml_lines(Path(path), display=str(path))
    return agent_format_of(document)


def _pricing(spec: AgentSpec) -> tuple[PricingSnapshot | None, bool]:
    if spec.pricing in ("zero_cost_fixture", "self_hosted"):
        return None, spec.pricing == "self_hosted"
    snapshot = load_pricing_snapshot(spec.pricing)
    if snapshot.model != spec.model.model or snapshot.provider != spec.model.provider:
        raise InputError(f"{snapshot.path}: model: expected the spec's model "
                         f"{spec.model.provider}/{spec.model.model}, got "
                         f"{snapshot.provider}/{snapshot.model}")
    return snapshot, False


def _provider_options(spec: AgentSpec, overrides: Mapping[str, Any]) -> dict[str, Any]:
    from ctxbench.runner.assembly import api_key

    factory = provider_factory(spec.model.provider)
    # api_key reads only the spec's path (for its message) and the model's key variable.
    options = factory.options(spec.model, api_key=api_key(cast(Any, spec), spec.model),
                              timeout_s=spec.timeout_s)
    options.update(overrides)
    return options


def _window(items: tuple[Any, ...], spec: AgentSpec) -> tuple[Any, ...]:
    end = None if spec.limit is None else spec.offset + spec.limit
    return items[spec.offset:end]


def _run(spec: AgentSpec, options: dict[str, Any]) -> AgentRunSummary:
    pricing, self_hosted = _pricing(spec)
    conditions = [AgentCondition(c.name, c.manager, c.budget, c.native_context, c.params)
                  for c in spec.conditions]
    common: dict[str, Any] = {"conditions": conditions, "provider": spec.model.provider,
                              "provider_options": options, "replicates": spec.replicates,
                              "seed": spec.seed, "self_hosted": self_hosted}
    if spec.tokenizer is not None:
        common["tokenizer"] = spec.tokenizer
    limits: dict[str, Any] = dict(spec.agent)
    if spec.format not in SESSION_FORMATS:
        from ctxbench.runner.agent import AgentLimits
        from ctxbench.runner.agent_run import run_agent_experiment
        from ctxbench.runner.agent_workloads import load_agent_workload

        (source,) = spec.sources
        loaded = load_agent_workload(
            spec.format, source, None if spec.limit is None else spec.offset + spec.limit,
            spec.path.parent)
        return run_agent_experiment(spec.output, tasks=_window(loaded.tasks, spec),
                                    limits=AgentLimits(**limits), workload=loaded.name,
                                    workload_version=loaded.version, pricing=pricing,
                                    **common)
    if spec.format == "bfcl_multi_turn":
        from ctxbench.runner.bfcl_multi_turn_experiment import run_multi_turn_experiment
        from ctxbench.workloads.bfcl_multi_turn import load_multi_turn

        (category,) = spec.sources
        return run_multi_turn_experiment(
            spec.output, tasks=load_multi_turn(category, limit=spec.limit, offset=spec.offset),
            workload=f"bfcl-{category}", pricing=pricing, **limits, **common)
    from ctxbench.runner.trace_experiment import run_trace_experiment
    from ctxbench.workloads.agent_traces import decision_points, skipped_summary
    from ctxbench.workloads.trace_hermes import read_hermes_trajectories
    from ctxbench.workloads.trace_openclaw import read_openclaw_session

    traces = [t for s in spec.sources for t in (read_hermes_trajectories(s)
              if spec.trace_format == "hermes" else (read_openclaw_session(s),))]
    points = _window(tuple(p for t in traces for p in decision_points(t)), spec)
    note = skipped_summary(traces)
    return run_trace_experiment(
        spec.output, points=points, temperature=spec.model.temperature,
        workload=f"agent-traces-{spec.trace_format}",
        workload_version=blake3_json([blake3_file(s) for s in spec.sources])[:32],
        pricing=pricing, notes=(note,) if note else (), **limits, **common)


def _shown(c: AgentConditionSpec) -> str:
    params = ",".join(f"{k}={v}" for k, v in sorted(c.params.items()))
    return f"{c.name}={c.manager}@{c.budget}" + (f"({params})" if params else "")


def _check_resumable(spec: AgentSpec, log: Path) -> None:
    """Every recorded trial must be one this spec would run: its condition's manager,
    budget and parameters and the model (a torn last line is left to the trial log, which
    sets it aside). A line written before conditions had parameters ran the manager's
    defaults, which are what this spec's resolved parameters are compared with."""
    from ctxbench.compiler.context_managers import get_context_manager
    from ctxbench.compiler.context_managers.params import declared_params, resolve_params

    conditions = {c.name: c for c in spec.conditions}
    # The API the spec's provider speaks (its default when the spec names none); a line
    # without one predates the field and was written through the default.
    apis: tuple[str, ...] = getattr(provider_factory(spec.model.provider), "apis", ())
    default_api = apis[0] if apis else None
    api = spec.model.api or default_api
    defaults = {c.name: resolve_params(declared_params(get_context_manager(c.manager)), {})
                for c in spec.conditions}
    with log.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                trial = json.loads(raw)
            except ValueError:
                continue  # a torn last line: the trial log moves it aside and reruns it
            if not isinstance(trial, dict):
                continue
            name = str(trial.get("condition"))
            cond = conditions.get(name)
            recorded = trial.get("params", defaults.get(name))
            if trial.get("provider_api", default_api) != api:
                raise InputError(
                    f"{log}:{number}: provider_api: expected a trial through this spec's "
                    f"API ({api}), got {str(trial.get('provider_api'))[:60]}; run the "
                    "changed spec into another output directory")
            if cond is None or (trial.get("manager"), trial.get("budget"), recorded,
                                trial.get("model")) != (cond.manager, cond.budget,
                                                        cond.params, spec.model.model):
                got = ",".join(f"{k}={v}" for k, v in sorted(dict(recorded or {}).items()))
                raise InputError(
                    f"{log}:{number}: condition: expected a trial of this spec's conditions "
                    f"({', '.join(_shown(c) for c in spec.conditions)}"
                    f" on {spec.model.model}), got {trial.get('condition')}="
                    f"{trial.get('manager')}@{trial.get('budget')}"
                    f"{f'({got})' if got else ''} on {trial.get('model')}; "
                    "run the changed spec into another output directory")


def run_agent_spec(path: str | os.PathLike[str], *, resume: bool = False,
                   provider_options: Mapping[str, Any] | None = None,
                   spec_arg: str | None = None) -> AgentSpecRun:
    """Run the agent-run spec at ``path`` (see the module); InputError when its output
    already holds a run and ``resume`` is not given, or another run is writing into it."""
    spec = load_agent_spec(path)
    run_id = f"{spec.name}-{spec.digest[:12]}"
    resume_command = f"ctxbench run {shlex.quote(spec_arg or str(path))} --resume"
    log = spec.output / "agent-trials.jsonl"
    labels = (FIXTURE_LABEL,) if provider_factory(spec.model.provider).fixture else ()
    options = _provider_options(spec, provider_options or {})
    try:
        with RunLock(spec.output):
            if not resume and log.exists() and log.stat().st_size > 0:
                raise InputError(f"{spec.output}: already holds a run; continue it with "
                                 f"`{resume_command}` or choose another output directory")
            if log.exists():
                _check_resumable(spec, log)
            done = _run(spec, options)
    except AgentRunInterrupted as stopped:  # during the trials: what was recorded counts
        return AgentSpecRun(spec.output, run_id, stopped.completed, stopped.skipped, True,
                            resume_command, labels=labels)
    except KeyboardInterrupt:  # before the first trial
        return AgentSpecRun(spec.output, run_id, 0, 0, True, resume_command, labels=labels)
    return AgentSpecRun(spec.output, run_id, done.completed, done.skipped, False,
                        resume_command, dict(done.paths), done.verdicts, labels)
