"""``ctxbench demo bfcl``: a BFCL slice under every context strategy on the embedded model.

The slice is BFCL's ``multiple`` category (each task offers two to four function
schemas and its ground truth calls one of them, so pruning schemas can lose the one
needed): :data:`DEMO_TASKS` tasks starting at :data:`DEMO_OFFSET` in file order. Its
conditions are the raw baseline (``full_permitted_context``: every schema of the task),
``compiled``, ``entroly`` (when it is installed), ``naive_top_k`` and the truncation
baseline ``truncate-tail``, each budgeted at :data:`DEMO_BUDGETS` prompt tokens, with the
main demo's replicates (sampled at a small temperature, one seed per trial).

Development slice (docs/workloads.md): tasks 0-9 of ``simple``, ``multiple`` and
``live_multiple`` were used to choose the category, the budgets, the output length and
the grammar; the demo slice (``multiple`` from task 20) was used to choose nothing.

The embedded model answers under grammar-constrained decoding
(:mod:`ctxbench.workloads.call_grammar`): only calls to the schemas sent in that trial, or
``[]``. The run is written and analyzed like the main demo (CEF report, ECEB report over
the slice's registry of public schemas, HTML pages).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Callable
from pathlib import Path

from ctxbench.runner.demo import (
    DEMO_TEMPERATURE,
    DemoResult,
    baseline_summary,
    choose_provider,
    plan_demo,
)
from ctxbench.runner.experiment import run_loaded

__all__ = ["DEMO_BUDGETS", "DEMO_CATEGORY", "DEMO_OFFSET", "DEMO_TASKS", "DEV_SLICE",
           "bfcl_demo_spec_text", "run_bfcl_demo"]

DEMO_CATEGORY = "multiple"
DEMO_OFFSET = 20
DEMO_TASKS = 8
# Every (category, first task, tasks) looked at while choosing the settings above.
DEV_SLICE = (("simple", 0, 10), ("multiple", 0, 10), ("live_multiple", 0, 10))
# A multiple task's prompt around the schemas is 128-174 SmolLM2 tokens (dev slice): 320
# leaves room for about one schema, 448 for about two, of the two to four offered.
DEMO_BUDGETS = (320, 448)
DEMO_MAX_OUTPUT = 64
DEMO_N_CTX = 2048
_PRUNING = ("compiled", "entroly", "naive_top_k", "truncate-tail")


def entroly_status() -> str | None:
    """None when the ``entroly`` strategy can run; otherwise why it is skipped."""
    if importlib.util.find_spec("entroly") is None:
        return "entroly is not installed (pip install 'ctxbench[entroly]')"
    return None


def bfcl_demo_spec_text(provider: str, replicates: int, *, tasks: int = DEMO_TASKS,
                        entroly: bool = True, concurrency: int = 1) -> str:
    """The BFCL demo's experiment spec (TOML) for ``provider`` ("llamacpp" or "fixture")."""
    threads = max(1, min(os.cpu_count() or 1, 16))
    model = ('provider = "llamacpp"\nmodel = "SmolLM2-135M-Instruct.Q4_1"\n'
             f"n_ctx = {DEMO_N_CTX}\nprompt_cache_mb = 256\nn_threads = {threads}\n"
             if provider == "llamacpp" else 'provider = "fixture"\n')
    budgets = ", ".join(map(str, DEMO_BUDGETS))
    conditions = "".join(f'[[conditions]]\nstrategy = "{s}"\nbudgets = [{budgets}]\n\n'
                         for s in _PRUNING if entroly or s != "entroly")
    return (
        'name = "demo-bfcl"\n'
        'description = "ctxbench demo: a BFCL slice, embedded model, grammar-constrained '
        'tool calls"\n'
        f"seed = 20260801\nreplicates = {replicates}\noutput = \"run\"\n"
        + ('pricing = "self_hosted"\n' if provider == "llamacpp" else "") + "\n"
        f'[workload]\nsource = "bfcl:{DEMO_CATEGORY}"\noffset = {DEMO_OFFSET}\n'
        f"limit = {tasks}\n\n"
        f"[model]\n{model}temperature = {DEMO_TEMPERATURE}\n"
        f"max_output_tokens = {DEMO_MAX_OUTPUT}\n\n"
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        f"{conditions}"
        f"[limits]\nconcurrency = {concurrency}\nretries = 0\n"
        + ("timeout_s = 900\n" if provider == "llamacpp" else "") + "\n"
        '[cef]\npreregistration = "demo-prereg.json"\n')


def run_bfcl_demo(output: str | Path, *, provider: str | None = None, replicates: int = 3,
                  tasks: int = DEMO_TASKS, show_progress: bool = False,
                  say: Callable[[str], None] = print) -> DemoResult:
    """Run (or finish, if interrupted before) the BFCL demo in ``output``."""
    started = time.perf_counter()
    out = Path(output)
    provider, reason = choose_provider(provider, say)
    skipped = entroly_status()
    if skipped:
        say(f"NOTE: the entroly condition is skipped: {skipped}")
    plan = plan_demo(out, "demo-bfcl.toml",
                     bfcl_demo_spec_text(provider, replicates, tasks=tasks,
                                         entroly=skipped is None),
                     provider=provider, reason=reason, replicates=replicates)
    spec_path, spec, workload, names = plan.spec_path, plan.spec, plan.workload, plan.names
    ids = [t.task_id for t in workload.tasks]
    say(f"demo bfcl: {len(ids)} tasks of bfcl:{DEMO_CATEGORY} ({ids[0]} to {ids[-1]}; the "
        f"development slice was tasks 0-9, never these) x {len(names)} conditions x "
        f"{replicates} replicates on {provider}; writing to {out}")
    if provider != "fixture":
        say("demo bfcl: tool calls are grammar-constrained to the schemas sent in each "
            f"trial; replicates sample at temperature {DEMO_TEMPERATURE:g}, each trial with "
            "its own seed")
    summary = run_loaded(spec, resume=plan.resume, show_progress=show_progress,
                         spec_arg=str(spec_path), labels=list(plan.labels),
                         preregistration=plan.prereg)
    pages = () if summary.interrupted else tuple(_html_pages(out / summary.output.name))
    trials = summary.output / "trials.jsonl"
    return DemoResult(summary=summary, provider=provider, fallback_reason=reason,
                      spec_path=spec_path, wall_s=time.perf_counter() - started,
                      notes=((f"entroly skipped: {skipped}",) if skipped else ()),
                      html_pages=pages,
                      baseline=baseline_summary(trials) if trials.exists() else None)


def _html_pages(run_dir: Path) -> list[Path]:
    """Each report's HTML page beside its JSON (each strategy's ECEB too), the run's page."""
    from ctxbench.render.html import write_html

    reports = [run_dir / "cef-report.json", run_dir / "eceb-report.json",
               *sorted(run_dir.glob("eceb-*/eceb-report.json"))]
    pages = [write_html([r], r.with_suffix(".html")) for r in reports if r.exists()]
    pages.append(write_html([run_dir], run_dir / "index.html"))
    return pages
