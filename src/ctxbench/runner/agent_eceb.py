"""ECEB verdicts for agent runs: the tasks' artifacts as a corpus, each trial one observation.

An agent task that declares the artifacts its tools read
(:class:`~ctxbench.workloads.agent.AgentArtifact`) is an ECEB task; a finished agent run
is written as ordinary ECEB files beside its CEF and public-eval reports and judged by
ctxbench's own evaluator (:func:`ctxbench.protocols.eceb.evaluate`):

- ``eceb-corpus/``: every artifact's text at its corpus-relative path (the bytes the
  registry's BLAKE3 digests are taken of; re-hashed before evaluation, spec §5);
- ``eceb-benchmark.json``: each task's query (its prompt), required, allowed and denied
  artifacts, the ladder (the evaluated manager's budgets), quality floor 1000 milli with
  no regression (a final answer is right or wrong), the expected answer as the answer
  term, ``required_repetitions`` the run's replicates; claim class ``conformance_seed``
  (an agent task file declares none, and the weakest class is the true label);
- ``eceb-run.json``: one observation per trial: the baseline condition (``full_history``)
  as ``full_permitted_context``, each condition of the evaluated manager as ``compiled`` at
  its budget; ``input_tokens`` the provider-reported input summed over the turns
  (summaries included, §8), ``prompt_tokens`` (ctxbench's extension for the budget gate)
  the largest per-turn count ctxbench made, quality the task score in milli, the final
  answer, the artifacts in the answering turn's messages with their source digests, and
  that turn's message BLAKE3 as ``context_blake3``. A trial refused for holding an
  artifact the task may not send lists it: ctxbench never sent it, but the manager chose
  it, and that is what the policy gate judges (fail closed). Every trial is an
  observation, failed ones included (quality 0), so nothing leaves a strategy's cost;
- ``eceb-report.json`` / ``.md`` (and the run page's ECEB section).

The first budgeted manager (in condition order) is written in the run directory; each
further one in ``eceb-<manager>/`` (its first condition's name when the manager is a
``module:attr`` or ``external:`` target). A run that cannot be judged says why in one
verdict line: no task declares artifacts (BFCL multi-turn, recorded traces, a task file
without them), the baseline is not ``full_history``, or no condition has a budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxbench.core import (
    CtxbenchError,
    InputError,
    JsonLine,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    blake3_hex,
    blake3_json,
    iter_jsonl,
)
from ctxbench.protocols.eceb.records import BENCHMARK_SCHEMA, RUN_SCHEMA, SPEC_URN
from ctxbench.runner.scorers import to_milli
from ctxbench.workloads.agent import AgentArtifact, AgentTask

__all__ = ["AGENT_RUBRIC", "NO_ARTIFACTS", "AgentEceb", "EcebCondition", "write_agent_eceb"]

AGENT_RUBRIC = (
    "deterministic scorer ctxbench.workloads.agent (agent-final-answer-v1): quality 1000 "
    "when the final answer holds the task's expected answer as a whole word (case, spacing, "
    "quotes and a trailing period ignored), else 0; a trial that stops without a final "
    "answer, or fails, scores 0.")
NO_ARTIFACTS = ("ECEB: not evaluated: the workload declares no artifacts its tools read "
                "(ECEB scores a corpus of classified artifacts)")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,47}")


@dataclass(frozen=True, slots=True)
class EcebCondition:
    """What ECEB needs of one condition of the run (the first is the baseline)."""

    name: str
    manager: str
    budget: int | None
    native_context: bool


@dataclass(frozen=True, slots=True)
class AgentEceb:
    """An agent run's ECEB inputs that the trial log does not hold: the tasks (with their
    artifacts), the conditions, the replicates, and the pricing and decoding identities."""

    tasks: tuple[AgentTask, ...]
    conditions: tuple[EcebCondition, ...]
    replicates: int
    workload: str
    pricing_source: str
    pricing_date: str | None
    decoding: Mapping[str, int]
    fixture: bool


@dataclass(frozen=True, slots=True)
class _System:
    key: str
    manager: str
    conditions: tuple[EcebCondition, ...]


def _plan(eceb: AgentEceb) -> tuple[list[_System], list[str]]:
    """The managers ECEB judges, and one line for each condition it cannot."""
    base, *rest = eceb.conditions
    if base.manager != "full_history" or base.native_context:
        return [], [f"ECEB: not evaluated: the baseline condition {base.name} is not "
                    "full_history without native context management (ECEB's "
                    "full_permitted_context)"]
    lines: list[str] = []
    by_manager: dict[str, list[EcebCondition]] = {}
    for c in rest:
        if c.native_context:
            lines.append(f"ECEB {c.name}: not evaluated: the provider's own context "
                         "management edits what is sent, so its artifacts are not known")
        elif c.budget is None:
            lines.append(f"ECEB {c.name}: not evaluated: no budget (ECEB judges a compiled "
                         "context at declared budgets)")
        else:
            by_manager.setdefault(c.manager, []).append(c)
    systems = []
    for manager, conds in by_manager.items():
        budgets = [c.budget for c in conds]
        if len(set(budgets)) != len(budgets):
            lines.append(f"ECEB {manager}: not evaluated: two conditions at one budget")
            continue
        key = manager if _SLUG.fullmatch(manager) else conds[0].name
        systems.append(_System(key, manager, tuple(sorted(
            conds, key=lambda c: c.budget or 0))))
    if not systems and not lines:
        lines.append("ECEB: not evaluated: no condition declares a budget")
    return systems, lines


def _corpus(tasks: Sequence[AgentTask]) -> dict[str, AgentArtifact]:
    corpus: dict[str, AgentArtifact] = {}
    for task in tasks:
        for a in task.artifacts:
            known = corpus.setdefault(a.artifact_id, a)
            if known != a:
                raise InputError(f"agent task {task.task_id}: artifacts: expected artifact "
                                 f"{a.artifact_id!r} as the other tasks declare it (one id, "
                                 "one record), got another path, kind, classification or text")
    return corpus


def _benchmark(eceb: AgentEceb, tasks: Sequence[AgentTask], corpus: Mapping[str, AgentArtifact],
               system: _System, benchmark_id: str) -> dict[str, Any]:
    from ctxbench.protocols.eceb.records import Artifact
    from ctxbench.protocols.eceb.root import corpus_root

    records = [{"artifact_id": a.artifact_id, "path": a.path, "kind": a.kind,
                "classification": a.classification, "blake3": a.blake3}
               for a in sorted(corpus.values(), key=lambda a: a.artifact_id)]
    return {
        "schema": BENCHMARK_SCHEMA, "spec": SPEC_URN,
        "benchmark_id": benchmark_id, "claim_class": "conformance_seed",
        "corpus": {"root": corpus_root(Artifact(**r) for r in records), "artifacts": records},
        "tasks": [{
            "task_id": t.task_id, "query": t.prompt,
            "required_artifacts": list(t.required_artifacts),
            "allowed_classifications": list(t.allowed_classifications),
            "denied_artifacts": list(t.denied_artifacts),
            "budget_ladder": [c.budget for c in system.conditions],
            "minimum_quality_milli": 1000, "maximum_quality_regression_milli": 0,
            "answer_terms": [t.answer], "required_repetitions": eceb.replicates,
        } for t in tasks],
    }


_FIELDS = ("selected_artifacts", "context_blake3", "prompt_tokens", "input_cost_micro_usd")


def _observations(trials: Sequence[JsonLine], tasks: Mapping[str, AgentTask], baseline: str,
                  system: _System) -> list[dict[str, Any]]:
    budgets = {c.name: c.budget for c in system.conditions}
    out = []
    for item in trials:
        t = item.value
        if t["task_id"] not in tasks or (t["condition"] != baseline
                                         and t["condition"] not in budgets):
            continue
        missing = [f for f in _FIELDS if f not in t]
        if missing:
            raise InputError(f"{item.path}:{item.line}: {missing[0]}: expected the member an "
                             "agent trial records for ECEB, got a trial line without it "
                             "(recorded by an earlier ctxbench; rerun into a new directory)")
        baseline_trial = t["condition"] == baseline
        cost = int(t["cost_micro_usd"])
        out.append({
            "task_id": t["task_id"],
            "strategy": "full_permitted_context" if baseline_trial else "compiled",
            "budget": None if baseline_trial else budgets[t["condition"]],
            "repetition": int(t["replicate"]) + 1,
            "input_tokens": int(t["context_tokens"]),
            "output_tokens": int(t["output_tokens"]) + int(t["reasoning_tokens"]),
            "input_cost_micro_usd": int(t["input_cost_micro_usd"]),
            "output_cost_micro_usd": cost - int(t["input_cost_micro_usd"]),
            "latency_ms": round(t["latency_ms"]),
            "quality_milli": to_milli(t["task_score"]),
            "answer": t["final_answer"] or "",
            "selected_artifacts": t["selected_artifacts"],
            # Nothing sent (a refusal on the first turn): the digest of no messages.
            "context_blake3": t["context_blake3"] or blake3_json([]),
            "prompt_tokens": int(t["prompt_tokens"]),
        })
    return out


def _run(eceb: AgentEceb, trials_path: Path, tasks: Mapping[str, AgentTask],
         system: _System, benchmark: Mapping[str, Any]) -> dict[str, Any]:
    from ctxbench.compiler.context_managers import manager_source

    trials = list(iter_jsonl(trials_path))  # read once: the first line and every trial
    if not trials:
        raise InputError(f"{trials_path}: expected recorded trials, got none")
    first = trials[0].value
    source = manager_source(system.manager)
    revision = source.get("version") or source.get("target") or source.get("command", "")
    pricing: dict[str, Any] = {"source": eceb.pricing_source,
                               "date": eceb.pricing_date or "1970-01-01"}
    if eceb.pricing_date is None:
        pricing["date_meaning"] = "none: no price list applies (zero cost or self-hosted)"
    return {
        "schema": RUN_SCHEMA, "spec": SPEC_URN,
        "run_id": f"{benchmark['benchmark_id']}-{blake3_json(benchmark)[:12]}",
        "benchmark_id": benchmark["benchmark_id"],
        "corpus_root": benchmark["corpus"]["root"],
        "claim_class": "conformance_seed",
        "system": {"name": system.manager, "revision": str(revision)[:300],
                   "origin": source["origin"]},
        "model": {"provider": first["provider"], "name": first["model"]},
        "judge": {"profile": "deterministic-final-answer", "model": "none",
                  "rubric_blake3": blake3_hex(AGENT_RUBRIC.encode("utf-8")),
                  "human_review": "none"},
        "tokenizer": {"name": first["tokenizer"]},
        "pricing": pricing,
        "decoding": dict(eceb.decoding),
        "observations": _observations(trials, tasks, eceb.conditions[0].name, system),
    }


def _evaluate(out: Path, corpus_dir: Path, eceb: AgentEceb, tasks: Sequence[AgentTask],
              corpus: Mapping[str, AgentArtifact], system: _System, trials_path: Path,
              labels: Sequence[str]) -> tuple[dict[str, Path], list[str]]:
    from ctxbench.protocols.eceb import evaluate, parse_benchmark, parse_run, verify_corpus
    from ctxbench.render.eceb import render_markdown
    from ctxbench.render.markdown import with_notes
    from ctxbench.runner.reports import eceb_verdicts

    name = re.sub(r"[^A-Za-z0-9._:-]", "-", eceb.workload).strip("-._:") or "agent-tasks"
    document = _benchmark(eceb, tasks, corpus, system, f"{name}-{system.key}"[:128])
    out.mkdir(parents=True, exist_ok=True)
    benchmark = parse_benchmark(document, path=str(out / "eceb-benchmark.json"))
    atomic_write_json(out / "eceb-benchmark.json", document)
    by_id = {t.task_id: t for t in tasks}
    run = parse_run(_run(eceb, trials_path, by_id, system, document),
                    path=str(out / "eceb-run.json"))
    atomic_write_json(out / "eceb-run.json", run.to_json())
    report = evaluate(benchmark, run, verify_corpus(benchmark, corpus_dir))
    notes = [*labels, *(["conformance fixture: the deterministic fixture provider; the "
                         "figures prove the evaluator, not any model"] if eceb.fixture else [])]
    if notes:
        report = replace(report, notes=tuple(notes))
    data = report.to_json()
    atomic_write_json(out / "eceb-report.json", data)
    atomic_write_text(out / "eceb-report.md", with_notes(data, render_markdown(report)))
    prefix = "" if out == trials_path.parent else f"{out.name}/"
    paths = {f"{prefix}{n}": out / n for n in ("eceb-benchmark.json", "eceb-run.json",
                                               "eceb-report.json", "eceb-report.md")}
    lines = eceb_verdicts(report, {"compiled"}, shown_as={"compiled": system.key})
    return paths, lines


def write_agent_eceb(trials_path: Path, eceb: AgentEceb | None, *,
                     labels: Sequence[str] = ()) -> tuple[dict[str, Path], list[str]]:
    """Write the ECEB files of a finished agent run (see the module); return their paths
    and the verdict lines (one saying why, when the run cannot be judged)."""
    tasks = [] if eceb is None else [t for t in eceb.tasks if t.artifacts]
    if eceb is None or not tasks:
        return {}, [NO_ARTIFACTS]
    systems, lines = _plan(eceb)
    if not systems:
        return {}, lines
    for t in tasks:
        if not _ID.fullmatch(t.task_id):
            return {}, [*lines, f"ECEB: not evaluated: task id {t.task_id[:60]!r} is not "
                        "an ECEB id ([A-Za-z0-9._:-], at most 128 characters)"]
    left = len(eceb.tasks) - len(tasks)
    if left:
        lines.append(f"ECEB: {left} task(s) without artifacts are not ECEB tasks")
    out = trials_path.parent
    paths: dict[str, Path] = {}
    try:
        corpus = _corpus(tasks)
        corpus_dir = out / "eceb-corpus"
        for a in corpus.values():
            atomic_write_bytes(corpus_dir / a.path, a.text.encode("utf-8"))
        for n, system in enumerate(systems):
            where = out if n == 0 else out / f"eceb-{system.key}"
            more, verdicts = _evaluate(where, corpus_dir, eceb, tasks, corpus, system,
                                       trials_path, labels)
            paths.update(more)
            lines.extend(verdicts)
    except CtxbenchError as exc:
        lines.append(f"ECEB: not evaluated: {str(exc)[:300]}")
    return paths, lines
