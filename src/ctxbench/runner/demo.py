"""The end-to-end demo: the built-in enterprise seed, the embedded model, every strategy.

``run_demo(output)`` writes ``demo.toml`` (the experiment, re-runnable with ``ctxbench run``)
and ``demo-prereg.json`` (the CEF preregistration naming ``full_permitted_context`` as the
baseline, written before any trial), runs full_permitted_context, naive_top_k and compiled
at every ladder budget with 3 replicates, then writes the CEF and ECEB reports.

Where the embedded model cannot be loaded, it says why and runs the deterministic fixture
provider instead; every artifact is then labeled a conformance fixture.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import InputError, atomic_write_json, atomic_write_text, iter_jsonl
from ctxbench.runner.experiment import RunSummary, run_loaded, tokenizer_name
from ctxbench.runner.reports import eceb_verdicts, write_prereg
from ctxbench.runner.scheduler import condition_names, run_ladder
from ctxbench.runner.spec import load_spec
from ctxbench.runner.workload import load_workload

__all__ = ["DemoResult", "embedded_model_status", "run_demo"]

DEMO_NAME = "enterprise-seed-demo"


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


def _spec_text(provider: str, replicates: int, max_output_tokens: int, concurrency: int) -> str:
    # Every core this machine offers: the demo is meant to have the machine to itself.
    threads = max(1, min(os.cpu_count() or 1, 16))
    # SmolLM2 was trained on 8192 positions and the seed's full permitted context is up
    # to ~10.5k of its tokens: linear RoPE scaling x1.5 gives every condition the same
    # 12288-token window, so the baseline runs rather than failing on length. The state
    # cache lets tasks that share a full context (most of them) skip recomputing it.
    model = ('provider = "llamacpp"\nmodel = "SmolLM2-135M-Instruct.Q4_1"\nn_ctx = 12288\n'
             "rope_freq_scale = 0.6666666666666666\nprompt_cache_mb = 1536\n"
             f"n_threads = {threads}\n" if provider == "llamacpp" else 'provider = "fixture"\n')
    pricing = 'pricing = "self_hosted"\n' if provider == "llamacpp" else ""
    return (
        f'name = "{DEMO_NAME}"\n'
        'description = "ctxbench demo: built-in enterprise seed, embedded model"\n'
        f"seed = 20260801\nreplicates = {replicates}\noutput = \"run\"\n{pricing}\n"
        '[workload]\nsource = "builtin:enterprise-seed"\n\n'
        f"[model]\n{model}temperature = 0.0\nmax_output_tokens = {max_output_tokens}\n\n"
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = "ladder"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n\n'
        '[scoring]\ntask_score = "answer_terms"\n\n'
        f"[limits]\nconcurrency = {concurrency}\nretries = 0\n\n"
        '[cef]\npreregistration = "demo-prereg.json"\n')


def run_demo(output: str | Path, *, provider: str | None = None, replicates: int = 3,
             max_output_tokens: int = 32, concurrency: int = 2, show_progress: bool = False,
             say: Callable[[str], None] = print) -> DemoResult:
    """Run (or finish, if interrupted before) the demo in ``output``."""
    started = time.perf_counter()
    out = Path(output)
    reason = None
    if provider is None:
        reason = embedded_model_status()
        provider = "fixture" if reason else "llamacpp"
    if reason:
        say(f"NOTE: the embedded model cannot run here: {reason}.")
        say("NOTE: running the deterministic fixture provider instead; every artifact is "
            "labeled a conformance fixture and supports no claim about any model.")
    spec_path = out / "demo.toml"
    text = _spec_text(provider, replicates, max_output_tokens, concurrency)
    resume = spec_path.exists() and spec_path.read_text(encoding="utf-8") == text
    if not resume and (out / "run" / "trials.jsonl").exists():
        raise InputError(f"{out}: holds a demo run made with other settings; choose another "
                         "output directory")
    if not resume:
        atomic_write_text(spec_path, text)
    spec = load_spec(spec_path)
    workload = load_workload(spec.workload)
    names = condition_names(spec, run_ladder(workload))
    prereg_path = out / "demo-prereg.json"
    if not prereg_path.exists():
        # The seed corpus is synthetic: its results show the pipeline, not a product
        # claim, so the preregistration says so before any trial is run.
        write_prereg(prereg_path, baseline="full_permitted_context", conditions=names,
                     claims=[n for n in names if n.startswith("compiled@")],
                     replicates=replicates, seed=spec.seed,
                     conformance_workloads=[workload.name] if workload.synthetic else [])
    labels = [] if provider != "fixture" else [
        f"conformance fixture: the embedded model was not available ({reason})" if reason
        else "conformance fixture: the fixture provider was requested"]
    say(f"demo: {len(workload.tasks)} tasks x {len(names)} conditions x {replicates} "
        f"replicates on {provider}; writing to {out}")
    summary = run_loaded(spec, resume=resume, show_progress=show_progress,
                         spec_arg=str(spec_path), labels=labels)
    seed_conformance = tuple(_seed_conformance(out))
    # The spec names the run folder "run" under the demo folder; the pages name their
    # inputs as the user named the demo folder.
    pages = () if summary.interrupted else tuple(_html_pages(out, out / summary.output.name))
    return DemoResult(summary=summary, provider=provider, fallback_reason=reason,
                      spec_path=spec_path, wall_s=time.perf_counter() - started,
                      seed_quality_table=_seed_quality(out, tokenizer_name(spec)),
                      seed_conformance=seed_conformance,
                      notes=tuple(_baseline_notes(summary.output / "trials.jsonl")),
                      html_pages=pages)


def _baseline_notes(trials_path: Path) -> list[str]:
    """Say plainly when the baseline failed, because every comparison depends on it."""
    if not trials_path.exists():
        return []
    baseline = [item.value for item in iter_jsonl(trials_path)
                if item.value.get("strategy") == "full_permitted_context"]
    errors = Counter(str(r["error_type"]) for r in baseline if r["outcome"] == "error")
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
    atomic_write_json(target / "eceb-report.json", report)
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
