"""The end-to-end demo: the built-in demo handbook, the embedded model, every strategy.

``run_demo(output)`` writes ``demo.toml`` (the experiment, re-runnable with ``ctxbench run``)
and ``demo-prereg.json`` (the CEF preregistration naming ``full_permitted_context`` as the
baseline, written before any trial), runs full_permitted_context, naive_top_k and compiled
at every ladder budget with 3 replicates (sampled at a small temperature, one seed per
trial), then writes the CEF and ECEB reports and summarizes the baseline's task score.

The workload is the demo handbook (``data/demo-handbook``): short synthetic company
documents and 24 single-fact questions, each asked by a member of one department who may
read that department's documents only, so each full permitted context (180-350 tokens)
fits the embedded model's native window. The enterprise seed stays the ECEB conformance corpus:
the demo evaluates its shipped conformance run and prints the compiler's table on it.

Where the embedded model cannot be loaded, it says why and runs the deterministic fixture
provider instead; every artifact is then labeled a conformance fixture.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ctxbench.core import InputError, atomic_write_json, atomic_write_text
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.runner.assembly import tokenizer_name
from ctxbench.runner.experiment import RunSummary, run_loaded
from ctxbench.runner.reports import eceb_verdicts, run_preregistration
from ctxbench.runner.scheduler import condition_names, run_ladder
from ctxbench.runner.spec import ExperimentSpec, load_spec
from ctxbench.runner.workload import Workload, load_workload

__all__ = ["LOW_BASELINE", "BaselineSummary", "DemoPlan", "DemoResult", "HandbookPaths",
           "baseline_summary", "demo_spec_text", "embedded_model_status", "handbook_paths",
           "plan_demo", "run_demo"]

DEMO_NAME = "demo-handbook"
# Replicates sample at this temperature, each trial with its own seed (derived from the
# spec's seed and the trial's key), so that they measure answer variability; at 0 they
# would repeat one greedy answer.
DEMO_TEMPERATURE = 0.2
DEMO_N_CTX = 4096
# Below this mean task score the baseline hardly answers, and every comparison against
# it measures a floor, not a loss or a gain.
LOW_BASELINE = 0.2


@dataclass(frozen=True, slots=True)
class HandbookPaths:
    """Where the demo handbook workload's files live on disk."""

    root: Path
    benchmark: Path
    corpus: Path


def handbook_paths() -> HandbookPaths:
    """Paths of the demo handbook (an ECEB benchmark and its corpus) shipped in the package."""
    root = Path(str(resources.files("ctxbench").joinpath("data", "demo-handbook")))
    return HandbookPaths(root=root, benchmark=root / "benchmark.json", corpus=root / "corpus")


@dataclass(frozen=True, slots=True)
class DemoResult:
    summary: RunSummary
    provider: str
    fallback_reason: str | None
    spec_path: Path
    wall_s: float
    seed_quality_table: str | None = None
    notes: tuple[str, ...] = ()
    seed_conformance: tuple[str, ...] = ()
    html_pages: tuple[Path, ...] = ()
    baseline: BaselineSummary | None = None


@dataclass(frozen=True, slots=True)
class BaselineSummary:
    """The full-permitted-context baseline's mean task score, and a warning when it is low."""

    task_score: float
    trials: int
    tasks_answered: int  # tasks whose baseline scored above 0 in at least one replicate
    tasks: int
    warning: str | None


def baseline_summary(trials_path: Path, *, baseline: str = "full_permitted_context"
                     ) -> BaselineSummary:
    """Mean task score of the baseline's trials (failed trials score 0, as in the reports).

    Below :data:`LOW_BASELINE` the warning says that the comparisons are uninformative.
    """
    from ctxbench.protocols.cef.records import iter_trials

    scores: dict[str, list[float]] = {}
    for trial in iter_trials([trials_path], baseline=baseline):
        if trial.condition == baseline:
            scores.setdefault(trial.task_id, []).append(trial.task_score)
    flat = [score for values in scores.values() for score in values]
    if not flat:
        raise InputError(f"{trials_path}: expected trials of the baseline {baseline}, "
                         "got none")
    mean = sum(flat) / len(flat)
    warning = None
    if mean < LOW_BASELINE:
        warning = (f"the baseline ({baseline}) scores {mean:.2f}, below {LOW_BASELINE:.2f}: "
                   "it hardly answers at all, so every comparison against it measures that "
                   "floor and says nothing about losing or keeping quality")
    return BaselineSummary(task_score=mean, trials=len(flat),
                           tasks_answered=sum(1 for v in scores.values() if max(v) > 0),
                           tasks=len(scores), warning=warning)


def embedded_model_status() -> str | None:
    """None when the embedded model can run here; otherwise the reason it cannot."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        return f"llama-cpp-python is not installed ({exc}); install ctxbench[local]"
    from ctxbench.runner.providers.llamacpp import embedded_model_path

    try:
        embedded_model_path()
    except InputError as exc:
        return str(exc)
    return None


def demo_spec_text(provider: str, replicates: int, max_output_tokens: int, concurrency: int,
                   tasks: int | None = None) -> str:
    """The demo's experiment spec (TOML) for ``provider`` ("llamacpp" or "fixture")."""
    # Every core this machine offers: the demo is meant to have the machine to itself.
    threads = max(1, min(os.cpu_count() or 1, 16))
    # A handbook task's full permitted context is 180-350 SmolLM2 tokens: it fits the
    # model's native 8192-token window with no RoPE scaling. The state cache lets prompts that
    # share a prefix (the system prompt) skip recomputing it; it changes latency only.
    model = ('provider = "llamacpp"\nmodel = "SmolLM2-135M-Instruct.Q4_1"\n'
             f"n_ctx = {DEMO_N_CTX}\nprompt_cache_mb = 256\nn_threads = {threads}\n"
             if provider == "llamacpp" else 'provider = "fixture"\n')
    pricing = 'pricing = "self_hosted"\n' if provider == "llamacpp" else ""
    return (
        f'name = "{DEMO_NAME}"\n'
        'description = "ctxbench demo: built-in demo handbook, embedded model"\n'
        f"seed = 20260801\nreplicates = {replicates}\noutput = \"run\"\n{pricing}\n"
        f'[workload]\nsource = "{_toml_string(str(handbook_paths().benchmark))}"\n'
        + (f"limit = {tasks}\n" if tasks is not None else "") + "\n"
        f"[model]\n{model}temperature = {DEMO_TEMPERATURE}\n"
        f"max_output_tokens = {max_output_tokens}\n\n"
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = "ladder"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n\n'
        '[scoring]\ntask_score = "answer_terms"\n\n'
        f"[limits]\nconcurrency = {concurrency}\nretries = 0\n"
        # A request waits for the one before it (one model instance), and a shared
        # machine can be slow: the deadline is generous so that load is not a failure.
        + ("timeout_s = 900\n" if provider == "llamacpp" else "") + "\n"
        '[cef]\npreregistration = "demo-prereg.json"\n')


def _toml_string(text: str) -> str:
    """``text`` escaped for a TOML basic string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def choose_provider(provider: str | None, say: Callable[[str], None]
                    ) -> tuple[str, str | None]:
    """The demo's provider: the one asked for, else the embedded model when it can run,
    else the fixture (said, with the reason); and that reason, if any."""
    if provider is not None:
        return provider, None
    reason = embedded_model_status()
    if reason:
        say(f"NOTE: the embedded model cannot run here: {reason}.")
        say("NOTE: running the deterministic fixture provider instead; every artifact is "
            "labeled a conformance fixture and supports no claim about any model.")
    return ("fixture" if reason else "llamacpp"), reason


def write_demo_spec(out: Path, name: str, text: str) -> tuple[Path, bool]:
    """Write a demo's spec into ``out``, or keep it when it is the same (a resumed demo:
    the second value); a run made with other settings is refused, not mixed with it."""
    spec_path = out / name
    resume = spec_path.exists() and spec_path.read_text(encoding="utf-8") == text
    if not resume and (out / "run" / "trials.jsonl").exists():
        raise InputError(f"{out}: holds a demo run made with other settings; choose another "
                         "output directory")
    if not resume:
        atomic_write_text(spec_path, text)
    return spec_path, resume


@dataclass(frozen=True, slots=True)
class DemoPlan:
    """A demo's spec (written, or kept when resuming), workload, conditions and labels."""

    spec_path: Path
    resume: bool
    spec: ExperimentSpec
    workload: Workload
    names: list[str]
    labels: tuple[str, ...]
    prereg: Preregistration
    """What ``demo-prereg.json`` declares; the run writes it there and analyzes it."""


def plan_demo(out: Path, spec_name: str, spec_text: str, *, provider: str,
              reason: str | None, replicates: int) -> DemoPlan:
    """Write (or keep) a demo's spec and its preregistration; the fixture labels."""
    spec_path, resume = write_demo_spec(out, spec_name, spec_text)
    spec = load_spec(spec_path)
    workload = load_workload(spec.workload)
    names = condition_names(spec, run_ladder(workload))
    # A synthetic workload (the handbook) shows the pipeline, not a product claim, so
    # the preregistration says so before any trial is run (the run writes it to
    # demo-prereg.json, the file the spec names, and analyzes this model as given).
    prereg = run_preregistration(
        baseline="full_permitted_context", conditions=names,
        claims=[n for n in names if n.startswith("compiled@")], replicates=replicates,
        seed=spec.seed, conformance_workloads=[workload.name] if workload.synthetic else [])
    labels = () if provider != "fixture" else (
        f"conformance fixture: the embedded model was not available ({reason})" if reason
        else "conformance fixture: the fixture provider was requested",)
    return DemoPlan(spec_path, resume, spec, workload, names, labels, prereg)


def run_demo(output: str | Path, *, provider: str | None = None, replicates: int = 3,
             max_output_tokens: int = 24, concurrency: int = 2, show_progress: bool = False,
             say: Callable[[str], None] = print, tasks: int | None = None) -> DemoResult:
    """Run (or finish, if interrupted before) the demo in ``output``.

    ``tasks`` runs only the handbook's first N tasks (a quick look; the first five are
    the development subset the prompt was chosen on).
    """
    started = time.perf_counter()
    out = Path(output)
    provider, reason = choose_provider(provider, say)
    plan = plan_demo(out, "demo.toml",
                     demo_spec_text(provider, replicates, max_output_tokens, concurrency,
                                    tasks),
                     provider=provider, reason=reason, replicates=replicates)
    spec_path, spec, workload, names = plan.spec_path, plan.spec, plan.workload, plan.names
    say(f"demo: {len(workload.tasks)} tasks x {len(names)} conditions x {replicates} "
        f"replicates on {provider}; writing to {out}")
    if provider != "fixture":
        say(f"demo: replicates sample at temperature {DEMO_TEMPERATURE:g}, each trial with "
            "its own seed, so they measure how much the answers vary")
    summary = run_loaded(spec, resume=plan.resume, show_progress=show_progress,
                         spec_arg=str(spec_path), labels=list(plan.labels),
                         preregistration=plan.prereg)
    seed_conformance = tuple(_seed_conformance(out))
    # The spec names the run folder "run" under the demo folder; the pages name their
    # inputs as the user named the demo folder.
    pages = () if summary.interrupted else tuple(_html_pages(out, out / summary.output.name))
    trials = summary.output / "trials.jsonl"
    return DemoResult(summary=summary, provider=provider, fallback_reason=reason,
                      spec_path=spec_path, wall_s=time.perf_counter() - started,
                      seed_quality_table=_seed_quality(out, tokenizer_name(spec)),
                      seed_conformance=seed_conformance,
                      notes=tuple(_baseline_notes(trials)), html_pages=pages,
                      baseline=baseline_summary(trials) if trials.exists() else None)


def _baseline_notes(trials_path: Path) -> list[str]:
    """Say plainly when the baseline failed, because every comparison depends on it."""
    if not trials_path.exists():
        return []
    from ctxbench.protocols.cef.records import iter_trials

    baseline = [t for t in iter_trials([trials_path], baseline="full_permitted_context")
                if t.strategy == "full_permitted_context"]
    errors = Counter(str(t.error_type) for t in baseline if t.failed)
    if not errors:
        return []
    kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(errors.items()))
    return [f"{sum(errors.values())} of {len(baseline)} full_permitted_context trials failed "
            f"({kinds}). Failures stay in the sample as the protocol requires, so where the "
            "baseline failed the comparisons measure that the smaller context ran where the "
            "full permitted context could not (for example when it exceeds the model's "
            "context window)."]


def _seed_quality(out: Path, tokenizer: str) -> str:
    """The compiler's evidence coverage on the seed at every ladder budget (also written)."""
    from ctxbench.compiler.quality import render_table, seed_table

    table = render_table(seed_table(all_budgets=True, tokenizer=tokenizer))
    atomic_write_text(out / "compiler-seed-table.md", table + "\n")
    return table


def _seed_conformance(out: Path) -> list[str]:
    """Evaluate the shipped ``conformance_seed`` run: the ECEB evaluator's own check."""
    from ctxbench.protocols.eceb.api import evaluate_files
    from ctxbench.protocols.eceb.seed import seed_paths
    from ctxbench.render.eceb import render_markdown

    paths = seed_paths()
    report = evaluate_files(paths.benchmark, paths.run, paths.corpus)
    target = out / "seed-conformance"
    atomic_write_json(target / "eceb-report.json", report.to_json())
    atomic_write_text(target / "eceb-report.md", render_markdown(report))
    return [f"{line} (shipped conformance_seed run)" for line in eceb_verdicts(report)] + [
        f"seed-conformance report: {target / 'eceb-report.md'}"]


def _html_pages(out: Path, run_dir: Path) -> list[Path]:
    """Each report's HTML page beside its JSON, the run's page, and both runs side by side."""
    from ctxbench.render.html import write_html

    seed_dir = out / "seed-conformance"
    pages = [write_html([report], report.with_suffix(".html"))
             for report in (run_dir / "cef-report.json", run_dir / "eceb-report.json",
                            seed_dir / "eceb-report.json") if report.exists()]
    pages.append(write_html([run_dir], run_dir / "index.html"))
    pages.append(write_html([run_dir, seed_dir], out / "index.html"))
    return pages
