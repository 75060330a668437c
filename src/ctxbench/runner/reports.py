"""Hand a finished run to the analyzers: CEF always, ECEB for ECEB workloads.

The reports are written by the same library functions as ``ctxbench cef analyze`` and
``ctxbench eceb evaluate``, and are a function of the trial log, the preregistration and
the corpus digests only: the trial log is read once, typed, and no context is rebuilt
(each trial line carries its packet's selected artifacts and digest).

Without a preregistration in the spec, one naming
``full_permitted_context`` as the baseline and the run's condition matrix is written to
``cef-prereg.json`` when the run starts, before any trial, and used here unchanged.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.core import CtxbenchError, atomic_write_json, atomic_write_text, blake3_hex
from ctxbench.runner.eceb_run import build_eceb_run, system_key
from ctxbench.runner.judge import Judge
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.spec import ExperimentSpec
from ctxbench.runner.workload import Workload

if TYPE_CHECKING:
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.protocols.cef.records import Trial
    from ctxbench.protocols.eceb.report import Report as EcebReport

__all__ = ["SCORER_RUBRIC", "cef_verdicts", "eceb_verdicts", "write_prereg", "write_reports"]

SCORER_RUBRIC = (
    "deterministic scorer ctxbench.runner.scorers: quality = share of the task's required "
    "answer terms found case-insensitively in the answer; abstention tasks score 1 when the "
    "answer abstains. The scorer sees only the task, the answer and the context text, never "
    "the condition name or budget.")


def write_prereg(path: Path, *, baseline: str, conditions: list[str], replicates: int,
                 seed: int, claims: list[str] | None = None,
                 conformance_workloads: list[str] | None = None) -> None:
    """A CEF preregistration naming the full-permitted-context baseline (written pre-run).

    ``claims`` and ``conformance_workloads`` are written only when given.
    """
    prereg: dict[str, Any] = {
        "schema_version": "ctxbench.cef-prereg.v1",
        "protocol_version": "entroly-cef-1",
        "baseline": baseline,
        "conditions": conditions,
    }
    if claims is not None:
        prereg["claims"] = claims
    prereg.update(replicates=replicates, seed=seed)
    if conformance_workloads is not None:
        prereg["conformance_workloads"] = conformance_workloads
    atomic_write_json(path, prereg)


def cef_verdicts(report: CefReport) -> list[str]:
    """One line per compared condition: its claim, with the context-reduction estimate."""
    lines = []
    for comp in report.aggregate.comparisons:
        reduction = comp.context_reduction.estimate
        shown = f" (context reduction {reduction:.1%})" if reduction is not None else ""
        lines.append(f"CEF {comp.condition} vs {comp.baseline}: {comp.claim}{shown}")
    return lines


def eceb_verdicts(report: EcebReport, ran: Collection[str] | None = None) -> list[str]:
    """One line per strategy: how many tasks qualified (numerator/denominator).

    ``ran``: only these strategies (the run's conditions; None: all three of ECEB).
    """
    lines = []
    for strategy, agg in report.aggregate.items():
        if ran is not None and strategy not in ran:
            continue
        if agg is None:
            lines.append(f"ECEB {strategy}: not run")
            continue
        qualified = agg.qualified_tasks
        savings = agg.mean_token_savings_bps
        shown = f", mean token savings {savings / 100:.1f}%" if savings is not None else ""
        lines.append(f"ECEB {strategy}: {qualified.numerator}/"
                     f"{qualified.denominator} tasks qualified{shown}")
    return lines


def write_reports(*, spec: ExperimentSpec, workload: Workload, tokenizer: str,
                  run_id: str, snapshot: PricingSnapshot | None, trials_path: Path,
                  labels: list[str], judge: Judge | None = None
                  ) -> tuple[dict[str, Path], list[str]]:
    """Write every report of a finished run; return their paths and the verdict lines.

    ``tokenizer`` is the run's budget tokenizer id (ECEB's run file names it).
    """
    from ctxbench.protocols.cef.api import analyze_files, load_settings

    out = trials_path.parent
    prereg_path = spec.preregistration or out / "cef-prereg.json"
    prereg = load_settings(prereg_path)
    paths = {"cef-report.json": out / "cef-report.json", "cef-report.md": out / "cef-report.md"}
    cef_report = analyze_files([trials_path], prereg_path, preregistration=prereg,
                               output=paths["cef-report.json"])
    _write_pair(paths["cef-report.json"], paths["cef-report.md"],
                _noted(cef_report.to_json(), labels))
    verdicts = cef_verdicts(cef_report)
    if workload.format == "bfcl":  # every schema a public artifact (bfcl_registry)
        workload, note = _bfcl_registry(spec, workload, out)
        verdicts.extend(note)
    if workload.format == "eceb" or workload.benchmark is not None:
        from ctxbench.protocols.cef.records import read_trials

        trials = read_trials([trials_path], baseline=prereg.baseline)
        eceb_paths, eceb_lines = _eceb(spec, workload, tokenizer, run_id, snapshot,
                                       trials, trials_path, labels, judge)
        paths.update(eceb_paths)
        verdicts.extend(eceb_lines)
        # Each plugin strategy, and each external or module:attr condition (by its
        # name), as ECEB's evaluated system beside the baseline.
        for strategy in dict.fromkeys(system_key(c) for c in spec.conditions):
            if strategy in ("full_permitted_context", "naive_top_k", "compiled"):
                continue
            try:
                more, lines = _eceb(spec, workload, tokenizer, run_id, snapshot, trials,
                                    trials_path, labels, judge, evaluated=strategy)
            except CtxbenchError as exc:
                verdicts.append(f"ECEB {strategy}: not evaluated: {str(exc)[:300]}")
                continue
            paths.update(more)
            verdicts.extend(line.replace("ECEB compiled:", f"ECEB {strategy}:")
                            for line in lines if line.startswith("ECEB compiled:"))
    return paths, verdicts


def _bfcl_registry(spec: ExperimentSpec, workload: Workload, out: Path
                   ) -> tuple[Workload, list[str]]:
    """The BFCL workload with its ECEB registry under ``out/bfcl-registry``."""
    from ctxbench.runner.workload import bfcl_registry_workload

    budgets = tuple(sorted({b for c in spec.conditions for b in c.budgets}))
    if not budgets:
        return workload, ["ECEB: not evaluated: the experiment declares no budget"]
    return bfcl_registry_workload(workload, out / "bfcl-registry", budgets=budgets,
                                  repetitions=spec.replicates), []


def _noted(report: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The report with the run's notes in its top-level ``notes`` (none: left out)."""
    return {**report, "notes": list(notes)} if notes else report


def _write_pair(json_path: Path, md_path: Path, report: dict[str, Any]) -> None:
    """The report and its Markdown, rendered from that same JSON (notes included)."""
    from ctxbench.render.markdown import render_markdown

    atomic_write_json(json_path, report)
    atomic_write_text(md_path, render_markdown(report, where=str(json_path)))


def _eceb(spec: ExperimentSpec, workload: Workload, tokenizer: str, run_id: str,
          snapshot: PricingSnapshot | None, trials: list[Trial], trials_path: Path,
          labels: list[str], judge_used: Judge | None, evaluated: str = "compiled",
          ) -> tuple[dict[str, Path], list[str]]:
    """ECEB run and report; for a plugin strategy (``evaluated``) under ``eceb-NAME/``."""
    from ctxbench.protocols.eceb import evaluate, parse_run, verify_corpus

    out = trials_path.parent
    if evaluated != "compiled":
        out = out / f"eceb-{evaluated}"
        out.mkdir(exist_ok=True)
    fixture = spec.model.provider == "fixture"
    judge: dict[str, Any] = {"profile": "deterministic-answer-terms", "model": "none",
             "rubric_blake3": blake3_hex(SCORER_RUBRIC.encode("utf-8")),
             "human_review": "none"}
    if judge_used is not None:
        judge = {"profile": "model-judge",
                 "model": f"{judge_used.provider.name}/{judge_used.provider.model}",
                 "rubric_blake3": judge_used.rubric_blake3, "human_review": "none",
                 "unparsed_or_failed": judge_used.failures}
    if snapshot is not None:
        pricing = {"source": snapshot.source_reference, "date": snapshot.effective_date}
    else:
        manifest_date = _manifest_date(trials_path.parent / "manifest.json")
        pricing = {"source": "zero_cost_fixture" if fixture else "self_hosted_no_api_fee",
                   "date": manifest_date}
    claim_class = "conformance_seed" if fixture else workload.benchmark.claim_class
    document, omitted = build_eceb_run(trials=trials, spec=spec, workload=workload,
                                       tokenizer=tokenizer, run_id=run_id,
                                       claim_class=claim_class, judge=judge,
                                       pricing_identity=pricing, pricing=snapshot,
                                       evaluated=evaluated)
    run_path = out / "eceb-run.json"
    run = parse_run(document, path=str(run_path))  # validated, then written from the record
    atomic_write_json(run_path, run.to_json())
    assert workload.corpus_dir is not None
    check = verify_corpus(workload.benchmark, workload.corpus_dir)
    report = evaluate(workload.benchmark, run, check)
    prefix = "" if evaluated == "compiled" else f"eceb-{evaluated}/"
    paths = {f"{prefix}eceb-run.json": run_path,
             f"{prefix}eceb-report.json": out / "eceb-report.json",
             f"{prefix}eceb-report.md": out / "eceb-report.md"}
    notes = list(labels)
    if omitted:
        notes.append(f"{omitted} error trial(s) without any provider-reported usage (no "
                     "response, or a prompt the runtime rejected) are not ECEB observations; "
                     "their groups fail the repetitions gate; they remain in trials.jsonl and "
                     "count as failures in the CEF report")
    report = replace(report, notes=tuple(notes))
    _write_pair(out / "eceb-report.json", out / "eceb-report.md", report.to_json())
    lines = eceb_verdicts(report, {c.strategy for c in spec.conditions}
                          if evaluated == "compiled" else {"compiled"})
    if omitted:
        lines.append(f"ECEB: {omitted} error trial(s) without provider usage are not "
                     "observations (see eceb-report.md)")
    return paths, lines


def _manifest_date(path: Path) -> str:
    from ctxbench.core import load_json_document

    manifest = load_json_document(path)
    started = manifest.get("started_at", "") if isinstance(manifest, dict) else ""
    return str(started)[:10] or "1970-01-01"
