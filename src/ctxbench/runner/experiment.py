"""Run an experiment end to end: manifest, trials, ECEB run file, then the reports.

    summary = run_experiment("exp.toml")              # a new run
    summary = run_experiment("exp.toml", resume=True) # continue after a crash or Ctrl-C

The run directory then holds ``manifest.json``, ``trials.jsonl`` (ctxbench.trial.v1),
``eceb-run.json`` (ECEB workloads), ``cef-prereg.json`` (unless the spec names one) and
the analyzers' reports, written by the same library functions as ``ctxbench cef
analyze`` and ``ctxbench eceb evaluate``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.core import (
    CtxbenchError,
    InputError,
    IntegrityError,
    RuntimeFailure,
    atomic_write_json,
    blake3_hex,
    load_json_document,
)
from ctxbench.protocols.cef.rules import condition_order_key
from ctxbench.protocols.cef.trial_format import TrialLogPredates
from ctxbench.runner.assembly import (
    build_judge,
    build_provider,
    build_redactor,
    tokenizer_name,
)
from ctxbench.runner.contexts import ContextBuilder
from ctxbench.runner.execute import TrialResult, TrialRunner
from ctxbench.runner.judge import Judge
from ctxbench.runner.manifest import build_manifest, check_resumable
from ctxbench.runner.packets import PacketStore
from ctxbench.runner.pricing import SELF_HOSTED_REFERENCE, PricingSnapshot, load_pricing_snapshot
from ctxbench.runner.progress import progress_display
from ctxbench.runner.providers.registry import provider_factory
from ctxbench.runner.ratelimit import RateLimiter
from ctxbench.runner.record import CostSource, TrialIdentity
from ctxbench.runner.recorder import TrialRecorder
from ctxbench.runner.reports import run_preregistration_file, write_reports
from ctxbench.runner.runlock import RunLock
from ctxbench.runner.scheduler import execute_plan, plan_trials, run_then_close
from ctxbench.runner.sequential import sequential_run
from ctxbench.runner.spec import ExperimentSpec, load_spec
from ctxbench.runner.trial_log import GroupCommit, TrialLog
from ctxbench.runner.workload import Workload, load_workload

if TYPE_CHECKING:
    from ctxbench.protocols.cef.prereg import Preregistration
    from ctxbench.runner.ray_backend import RayExecutor

__all__ = ["RunStopped", "RunSummary", "StartInterrupted", "run_experiment", "run_loaded"]

FIXTURE_LABEL = ("conformance fixture: answers from the deterministic extractive reader, "
                 "word counts as tokens, zero cost; not a measurement of any model")


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Where everything went and how the run ended."""

    output: Path
    run_id: str
    planned: int
    completed: int
    skipped: int
    interrupted: bool
    resume_command: str
    torn_line: int | None
    trial_phase_s: float = 0.0
    trial_phase_cpu_s: float = 0.0
    reports: dict[str, Path] = field(default_factory=dict)
    verdicts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    # Per budgeted condition: its prompt budget beside the packet's room and the overhead.
    budgets: list[str] = field(default_factory=list)


class RunStopped(RuntimeFailure):
    """The trial phase stopped on an error; every finished trial is recorded and the run
    continues with the resume command. ``exit_code`` is the original error's."""

    def __init__(self, message: str, *, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _pricing(spec: ExperimentSpec) -> tuple[CostSource, PricingSnapshot | None, dict[str, Any]]:
    if provider_factory(spec.model.provider).fixture:
        return (CostSource("zero_cost_fixture", "deterministic_fixture: no provider was called"),
                None, {"kind": "zero_cost_fixture"})
    if spec.pricing == "self_hosted":
        return (CostSource("self_hosted_no_api_fee", SELF_HOSTED_REFERENCE), None,
                {"kind": "self_hosted_no_api_fee", "caveat": SELF_HOSTED_REFERENCE})
    snapshot = load_pricing_snapshot(spec.pricing)
    if snapshot.model != spec.model.model or snapshot.provider != spec.model.provider:
        raise InputError(f"{snapshot.path}: model: expected the spec's model "
                         f"{spec.model.provider}/{spec.model.model}, got "
                         f"{snapshot.provider}/{snapshot.model}")
    return (CostSource("pricing_snapshot", snapshot.reference), snapshot,
            {"kind": "pricing_snapshot", "path": snapshot.path, "blake3": snapshot.digest,
             "effective_date": snapshot.effective_date,
             "source_reference": snapshot.source_reference})


class StartInterrupted(KeyboardInterrupt):
    """Ctrl-C while the spec was still being read, before the run took its output
    directory: nothing was run or written (the command line says so)."""


def run_experiment(spec_path: str | os.PathLike[str], *, resume: bool = False,
                   show_progress: bool = False, provider_options: dict[str, Any] | None = None,
                   ) -> RunSummary:
    """Load ``spec_path`` and run it (see :func:`run_loaded`); an agent-run spec
    (``[workload] format`` agent, bfcl_multi_turn or agent_traces) runs through
    :func:`ctxbench.runner.agent_experiment.run_agent_spec`. Ctrl-C while the spec is
    read raises :class:`StartInterrupted`; from then on it is the run's (an interrupted
    summary)."""
    try:
        from ctxbench.runner.agent_experiment import agent_spec_format, run_agent_spec

        agent = agent_spec_format(spec_path) is not None
        spec = None if agent else load_spec(spec_path)
    except KeyboardInterrupt:
        raise StartInterrupted from None
    if spec is None:
        done = run_agent_spec(spec_path, resume=resume, provider_options=provider_options,
                              spec_arg=str(spec_path))
        return RunSummary(output=done.output, run_id=done.run_id,
                          planned=done.completed + done.skipped, completed=done.completed,
                          skipped=done.skipped, interrupted=done.interrupted,
                          resume_command=done.resume_command, torn_line=None,
                          reports=dict(done.reports), verdicts=list(done.verdicts),
                          labels=list(done.labels))
    return run_loaded(spec, resume=resume, show_progress=show_progress,
                      provider_options=provider_options, spec_arg=str(spec_path))


def run_loaded(spec: ExperimentSpec, *, resume: bool = False, show_progress: bool = False,
               provider_options: dict[str, Any] | None = None, spec_arg: str | None = None,
               labels: list[str] | None = None,
               on_result: Callable[[TrialResult], None] | None = None,
               preregistration: Preregistration | None = None) -> RunSummary:
    """Run a loaded spec; raises InputError if the output already holds an unrelated run
    or another run is writing into it now (see :mod:`ctxbench.runner.runlock`).

    Ctrl-C at any point (start-up included) returns an ``interrupted`` summary with the
    resume command; an error after the first trial raises :class:`RunStopped`, whose
    message says that the finished trials are recorded and how to resume.

    ``preregistration`` is the model of the preregistration file the spec names, built by
    the caller (a demo): it is checked against that file (written when missing) and
    analyzed as given. Without it the spec's file is read once, before any trial, or the
    run declares its own (:func:`~ctxbench.runner.reports.run_preregistration_file`).
    """
    run_id = f"{spec.name}-{spec.digest[:12] or blake3_hex(spec.name.encode())[:12]}"
    resume_command = f"ctxbench run {shlex.quote(spec_arg or str(spec.path))} --resume"
    recorder = TrialRecorder()
    try:
        # Held from before the log is read until the reports are written: a second run
        # into this directory stops here, before it sends anything.
        with RunLock(spec.output):
            return _run(spec, run_id=run_id, resume_command=resume_command, resume=resume,
                        show_progress=show_progress, provider_options=provider_options or {},
                        labels=list(labels or []), on_result=on_result, recorder=recorder,
                        preregistration=preregistration)
    except KeyboardInterrupt:
        return RunSummary(output=spec.output, run_id=run_id, planned=0,
                          completed=recorder.recorded,
                          skipped=0, interrupted=True, resume_command=resume_command,
                          torn_line=None)
    except OSError as exc:  # the output directory, the disk, a file that is not one
        raise _stopped(exc, trials=spec.output / "trials.jsonl",
                       resume_command=resume_command, phase="the run stopped") from exc


def _stopped(exc: BaseException, *, trials: Path, resume_command: str,
             phase: str) -> RunStopped:
    text = str(exc)
    text = text if len(text) <= 400 else text[:400] + "..."
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    elif not isinstance(exc, CtxbenchError):
        text = f"unexpected {type(exc).__name__}: {text}"
    if isinstance(exc, TrialLogPredates):
        advice = (f"the trials recorded in {trials} predate what this ctxbench records; "
                  "run again into another output directory")
    elif isinstance(exc, IntegrityError):
        # Recorded trials that this corpus or compiler no longer reproduces: resuming
        # would stop here again.
        advice = (f"the trials recorded in {trials} do not match this corpus and compiler; "
                  "run again into another output directory")
    else:
        advice = f"every finished trial is recorded in {trials}; resume with: {resume_command}"
    return RunStopped(f"{text} ({phase}; {advice})",
                      exit_code=exc.exit_code if isinstance(exc, CtxbenchError) else 3)


def _run(spec: ExperimentSpec, *, run_id: str, resume_command: str, resume: bool,
         show_progress: bool, provider_options: dict[str, Any], labels: list[str],
         on_result: Callable[[TrialResult], None] | None, recorder: TrialRecorder,
         preregistration: Preregistration | None) -> RunSummary:
    out = spec.output
    trials_path, manifest_path = out / "trials.jsonl", out / "manifest.json"
    if not resume and trials_path.exists() and trials_path.stat().st_size > 0:
        raise InputError(f"{out}: already holds a run; continue it with `{resume_command}` or "
                         "choose another output directory")
    if resume and manifest_path.exists():
        check_resumable(manifest_path, spec)
    # Everything a later writer needs is checked here, before any trial is sent.
    redactor = build_redactor(spec)
    cost, snapshot, pricing_info = _pricing(spec)
    workload = load_workload(spec.workload)
    plan = plan_trials(spec, workload)
    # A preregistered sequential design orders the tasks and runs them look by look.
    seq = sequential_run(spec, plan, resume=resume, preregistration=preregistration)
    plan = plan if seq is None else seq.plan
    all_labels = labels
    if provider_factory(spec.model.provider).fixture and FIXTURE_LABEL not in all_labels:
        all_labels.append(FIXTURE_LABEL)
    contexts = ContextBuilder(workload, tokenizer_name(spec))
    cells = [(p.task, p.condition, p.budget) for p in plan]
    executor: RayExecutor | None = None
    try:
        contexts.check_budgets(cells)
        judge = build_judge(spec, provider_options)
        executor = _executor(spec, workload, run_id, cost, snapshot, judge, provider_options)
        provider = (executor.start() if executor is not None
                    else build_provider(spec, provider_options))
        mode = getattr(provider, "tool_call_mode", None)
        if contexts.format.context == "tool_schemas" and isinstance(mode, str) \
                and mode not in all_labels:
            all_labels.append(mode)  # how the tool calls were decoded (the manifest says)
        # Budgets in numeric order (compiled@256 before compiled@1024).
        conditions = sorted({p.condition for p in plan}, key=condition_order_key)
        if not (resume and manifest_path.exists()):
            atomic_write_json(manifest_path, build_manifest(
                spec=spec, run_id=run_id, workload=_workload_info(workload),
                provider={"name": provider.name, "model": provider.model,
                          "usage_source": provider.usage_source,
                          "base_url": spec.model.base_url,
                          "api_key_env": spec.model.api_key_env},
                pricing=pricing_info, tokenizer=contexts.tokenizer.id, conditions=conditions,
                trials_planned=len(plan), labels=all_labels,
                execution=_execution_info(spec), strategies=_strategy_sources(spec),
                judge=None if judge is None else {
                    "provider": judge.provider.name, "model": judge.provider.model,
                    "rubric_blake3": judge.rubric_blake3, "scorer": judge.name}))
        prereg_path, prereg = run_preregistration_file(spec, workload, conditions,
                                                       preregistration)
        ident = TrialIdentity(run_id=run_id, workload=workload.name,
                              workload_version=workload.version, provider=provider.name,
                              model=provider.model,
                              scorer=judge.name if judge else spec.task_scorer,
                              usage_source=provider.usage_source)
        runner = TrialRunner(spec=spec, provider=provider, contexts=contexts, ident=ident,
                             cost=cost, pricing=snapshot, limiter=RateLimiter(
                                 spec.limits.requests_per_minute, spec.limits.tokens_per_minute),
                             judge=judge, redactor=redactor)
        if executor is not None:
            executor.attach(runner)
        log = TrialLog(trials_path, resume=resume,
                       planned={p.key for p in plan}, run_id=run_id)
        torn = log.torn.line if log.torn else None
        recorder.attach(PacketStore(out), GroupCommit(log), on_result)
        closers = [provider.aclose] + ([] if judge is None else [judge.provider.aclose])

        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            with progress_display(enabled=show_progress) as update:
                # One segment (or, sequential, each look's) goes straight to the scheduler.
                part = partial(execute_plan, skip=log.recorded,  # as each look starts
                               run=runner.run if executor is None else executor.run,
                               record=recorder, concurrency=spec.limits.concurrency,
                               on_progress=update)
                outcome = asyncio.run(run_then_close(
                    part(plan) if seq is None else seq.execute(part), closers))
        except Exception as exc:
            raise _stopped(exc, trials=trials_path, resume_command=resume_command,
                           phase="the run stopped") from exc
        finally:
            log.close()
            if executor is not None:
                _record_execution(manifest_path, executor.summary())
                executor.close()
        phase_s, phase_cpu_s = time.perf_counter() - wall0, time.process_time() - cpu0
        summary = RunSummary(output=out, run_id=run_id, planned=len(plan),
                             completed=outcome.completed, skipped=outcome.skipped,
                             interrupted=outcome.interrupted, resume_command=resume_command,
                             torn_line=torn, labels=all_labels,
                             trial_phase_s=phase_s, trial_phase_cpu_s=phase_cpu_s,
                             budgets=contexts.budget_lines(cells))
        if outcome.interrupted:
            return summary
        try:
            reports, verdicts = write_reports(spec=spec, workload=workload,
                                              tokenizer=contexts.tokenizer.id,
                                              run_id=run_id, snapshot=snapshot,
                                              trials_path=trials_path, prereg=prereg,
                                              prereg_path=prereg_path, labels=all_labels,
                                              judge=judge)
        except Exception as exc:
            raise _stopped(exc, trials=trials_path, resume_command=resume_command,
                           phase="writing the reports") from exc
        if seq is not None:
            verdicts = [*verdicts, *seq.verdicts()]
        return replace(summary, reports=reports, verdicts=verdicts)
    finally:
        if executor is not None:
            executor.close()
        contexts.close()


def _executor(spec: ExperimentSpec, workload: Workload,
              run_id: str, cost: CostSource, snapshot: PricingSnapshot | None,
              judge: Judge | None, options: dict[str, Any]) -> RayExecutor | None:
    """The Ray executor when the spec asks for it (Ray is imported only then)."""
    if spec.execution.backend != "ray":
        return None
    from ctxbench.runner.ray_backend import RayExecutor, WorkerConfig

    # Each worker fills in its own provider's identity; the driver builds no provider.
    ident = TrialIdentity(run_id=run_id, workload=workload.name,
                          workload_version=workload.version, provider="", model="",
                          scorer=judge.name if judge else spec.task_scorer, usage_source="")
    return RayExecutor(execution=spec.execution, config=WorkerConfig(
        spec=spec, workload=workload, tokenizer=tokenizer_name(spec), ident=ident, cost=cost,
        pricing=snapshot, provider_options=options))


def _strategy_sources(spec: ExperimentSpec) -> dict[str, Any]:
    """Where each condition's strategy came from (distribution, version, entry point)."""
    from ctxbench.compiler.discovery import strategy_source

    return {c.strategy: strategy_source(c.strategy) for c in spec.conditions
            if c.strategy != "external"}


def _execution_info(spec: ExperimentSpec) -> dict[str, Any]:
    ex = spec.execution
    if ex.backend == "local":
        return {"backend": "local", "sessions": []}
    return {"backend": "ray", "address": ex.address, "workers": ex.workers,
            "num_cpus": ex.num_cpus, "num_gpus": ex.num_gpus, "memory_mb": ex.memory_mb,
            "sessions": []}


def _record_execution(manifest_path: Path, session: dict[str, Any]) -> None:
    """Append one session's per-worker counts to the manifest (rewritten atomically)."""
    manifest = load_json_document(manifest_path)
    if isinstance(manifest, dict) and isinstance(manifest.get("execution"), dict):
        manifest["execution"]["sessions"].append(session)
        atomic_write_json(manifest_path, manifest)


def _workload_info(workload: Workload) -> dict[str, Any]:
    return {"name": workload.name, "version": workload.version, "format": workload.format,
            "source": workload.source, "tasks": len(workload.tasks),
            "task_ids": [t.task_id for t in workload.tasks]}
