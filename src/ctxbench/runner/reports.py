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

from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.core import (
    CtxbenchError,
    InputError,
    atomic_write_json,
    atomic_write_text,
    blake3_hex,
)
from ctxbench.runner.eceb_run import build_eceb_run, system_key
from ctxbench.runner.judge import Judge
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.providers.registry import provider_factory
from ctxbench.runner.spec import ExperimentSpec
from ctxbench.runner.workload import Workload
from ctxbench.runner.workload_formats import EcebRegistry, eceb_registry

if TYPE_CHECKING:
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.protocols.cef.prereg import Preregistration
    from ctxbench.protocols.cef.records import Trial
    from ctxbench.protocols.eceb.model import Report as EcebReport

__all__ = ["SCORER_RUBRIC", "cef_verdicts", "declare_preregistration", "eceb_verdicts",
           "run_preregistration", "run_preregistration_file", "write_reports"]

SCORER_RUBRIC = (
    "deterministic scorer ctxbench.runner.scorers: quality = share of the task's required "
    "answer terms found case-insensitively in the answer; abstention tasks score 1 when the "
    "answer abstains. The scorer sees only the task, the answer and the context text, never "
    "the condition name or budget.")


def run_preregistration(*, baseline: str, conditions: list[str], replicates: int,
                        seed: int, claims: list[str] | None = None,
                        conformance_workloads: list[str] | None = None) -> Preregistration:
    """The CEF preregistration a run declares before its first trial (a model: the run
    writes it with :func:`~ctxbench.protocols.cef.prereg.write_preregistration` and hands
    it to the analysis in memory).

    Every other setting is the protocol's default; ``source`` is "file", since the run
    writes it to its preregistration file before any trial.
    """
    from ctxbench.protocols.cef.prereg import Preregistration

    return Preregistration(
        baseline=baseline, conditions=tuple(conditions),
        claims=None if claims is None else tuple(claims), replicates=replicates, seed=seed,
        conformance_workloads=tuple(conformance_workloads or ()), source="file")


def declare_preregistration(path: Path, prereg: Preregistration) -> Preregistration:
    """Write ``prereg`` to ``path`` before the first trial; on a resumed run the file is
    already there and must hold this same preregistration (else a located error)."""
    from ctxbench.protocols.cef.prereg import load_preregistration, write_preregistration

    if not path.exists():
        write_preregistration(path, prereg)
        return prereg
    written = load_preregistration(path)
    if written != prereg:
        raise InputError(f"{path}: expected the preregistration this run declares "
                         f"(digest {prereg.digest()}), got another one (digest "
                         f"{written.digest()}); a preregistration is never changed after "
                         "trials ran: run again into another output directory")
    return written


def run_preregistration_file(spec: ExperimentSpec, workload: Workload, conditions: list[str],
                             given: Preregistration | None) -> tuple[Path, Preregistration]:
    """The run's preregistration file and model, settled before the first trial: the
    spec's file (checked against ``given`` when a caller built it, else read once), or
    the run's own, declared in ``cef-prereg.json``."""
    if spec.preregistration is not None:
        if given is not None:
            return spec.preregistration, declare_preregistration(spec.preregistration, given)
        from ctxbench.protocols.cef.prereg import load_preregistration

        return spec.preregistration, load_preregistration(spec.preregistration)
    baseline = next(c.name for c in spec.conditions if c.strategy == "full_permitted_context")
    # A synthetic seed is declared before any trial, so it can never headline.
    declared = given or run_preregistration(
        baseline=baseline, conditions=conditions, replicates=spec.replicates, seed=spec.seed,
        conformance_workloads=[workload.name] if workload.synthetic else None)
    path = spec.output / "cef-prereg.json"
    return path, declare_preregistration(path, declared)


def cef_verdicts(report: CefReport) -> list[str]:
    """One line per compared condition: its claim, with the context-reduction estimate."""
    lines = []
    for comp in report.aggregate.comparisons:
        reduction = comp.context_reduction.estimate
        shown = f" (context reduction {reduction:.1%})" if reduction is not None else ""
        lines.append(f"CEF {comp.condition} vs {comp.baseline}: {comp.claim}{shown}")
    return lines


def eceb_verdicts(report: EcebReport, ran: Collection[str] | None = None, *,
                  shown_as: Mapping[str, str] | None = None) -> list[str]:
    """One line per strategy: how many tasks qualified (numerator/denominator).

    ``ran``: only these strategies (the run's conditions; None: all three of ECEB).
    ``shown_as`` names a strategy as the run does: a plugin evaluated in ECEB's
    ``compiled`` slot is reported under its own name.
    """
    lines = []
    names = shown_as or {}
    for strategy, agg in report.aggregate.items():
        if ran is not None and strategy not in ran:
            continue
        label = f"ECEB {names.get(strategy, strategy)}"
        if agg is None:
            lines.append(f"{label}: not run")
            continue
        qualified = agg.qualified_tasks
        savings = agg.mean_token_savings_bps
        shown = f", mean token savings {savings / 100:.1f}%" if savings is not None else ""
        lines.append(f"{label}: {qualified.numerator}/"
                     f"{qualified.denominator} tasks qualified{shown}")
    return lines


def write_reports(*, spec: ExperimentSpec, workload: Workload, tokenizer: str,
                  run_id: str, snapshot: PricingSnapshot | None, trials_path: Path,
                  prereg: Preregistration, prereg_path: Path, labels: list[str],
                  judge: Judge | None = None) -> tuple[dict[str, Path], list[str]]:
    """Write every report of a finished run; return their paths and the verdict lines.

    ``tokenizer`` is the run's budget tokenizer id (ECEB's run file names it);
    ``prereg`` the run's preregistration, in memory, and ``prereg_path`` the file it is
    in (named, with its digest, in the CEF report).
    """
    from ctxbench.core.atomic import path_from
    from ctxbench.protocols.cef.api import analyze_files
    from ctxbench.runner.commands import cef_analyze_command

    out = trials_path.parent
    paths = {"cef-report.json": out / "cef-report.json", "cef-report.md": out / "cef-report.md"}
    command = cef_analyze_command([path_from(out, trials_path)], path_from(out, prereg_path),
                                  prereg, output="cef-report.json")
    cef_report = analyze_files([trials_path], prereg_path, preregistration=prereg,
                               command=command,
                               output=paths["cef-report.json"])
    if labels:
        cef_report = replace(cef_report, notes=tuple(labels))
    _write_pair(paths["cef-report.json"], paths["cef-report.md"], cef_report)
    verdicts = cef_verdicts(cef_report)
    registry = None if workload.benchmark is not None else eceb_registry(workload.format)
    if registry is not None:  # BFCL: every schema a public artifact (bfcl_registry)
        workload, note = _eceb_registry(spec, workload, out, registry)
        verdicts.extend(note)
    if workload.benchmark is not None:
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
            verdicts.extend(line for line in lines if line.startswith(f"ECEB {strategy}:"))
    return paths, verdicts


def _eceb_registry(spec: ExperimentSpec, workload: Workload, out: Path,
                   registry: EcebRegistry) -> tuple[Workload, list[str]]:
    """The workload with the ECEB registry its format builds, under
    ``out/<format>-registry``."""
    budgets = tuple(sorted({b for c in spec.conditions for b in c.budgets}))
    if not budgets:
        return workload, ["ECEB: not evaluated: the experiment declares no budget"]
    return registry(workload, out / f"{workload.format}-registry", budgets,
                    spec.replicates), []


def _write_pair(json_path: Path, md_path: Path, report: CefReport | EcebReport) -> None:
    """The report's JSON and its Markdown, both from the one typed report (its notes, the
    run's labels, quoted first), so the ``.md`` never says more than the ``.json``."""
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.render.markdown import with_notes

    data = report.to_json()
    atomic_write_json(json_path, data)
    if isinstance(report, CefReport):
        from ctxbench.render.cef import render_markdown as cef_markdown

        body = cef_markdown(report)
    else:
        from ctxbench.render.eceb import render_markdown as eceb_markdown

        body = eceb_markdown(report)
    atomic_write_text(md_path, with_notes(data, body))


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
    fixture = provider_factory(spec.model.provider).fixture
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
    _write_pair(out / "eceb-report.json", out / "eceb-report.md", report)
    lines = (eceb_verdicts(report, {c.strategy for c in spec.conditions})
             if evaluated == "compiled"
             else eceb_verdicts(report, {"compiled"}, shown_as={"compiled": evaluated}))
    if omitted:
        lines.append(f"ECEB: {omitted} error trial(s) without provider usage are not "
                     "observations (see eceb-report.md)")
    return paths, lines


def _manifest_date(path: Path) -> str:
    from ctxbench.core import load_json_document

    manifest = load_json_document(path)
    started = manifest.get("started_at", "") if isinstance(manifest, dict) else ""
    return str(started)[:10] or "1970-01-01"
