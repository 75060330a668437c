"""``ctxbench import``: turn Inspect AI, SWE-bench and lm-eval logs into protocol records."""

from __future__ import annotations

import click

from ctxbench.importers import TrialSettings, import_inspect, import_lm_eval, import_swebench

__all__ = ["import_group"]

_FILE = click.Path(dir_okay=False)


@click.group("import")
def import_group() -> None:
    """Convert existing evaluation logs into CEF trials and public-eval rows.

    \b
    Example:
      ctxbench import inspect base.eval treat.eval --rows base.jsonl treat.jsonl
    """


def _trial_options(f: click.decorators.FC) -> click.decorators.FC:
    for option in reversed((
        click.option("--trials", type=_FILE, help="Write ctxbench.trial.v1 trials here."),
        click.option("--baseline-condition", default="raw", show_default=True,
                     help="Condition name of the baseline trials."),
        click.option("--treatment-condition", default="treatment", show_default=True,
                     help="Condition name of the treatment trials."),
        click.option("--cost-source", help="Cost source of the trials, when the log has none."),
        click.option("--cost-reference", help="What the cost source refers to."),
    )):
        f = option(f)
    return f


_ROWS = click.option("--rows", type=_FILE, nargs=2, metavar="BASELINE.jsonl TREATMENT.jsonl",
                     help="Write public-eval row files for the two arms here.")


@import_group.command("inspect")
@click.argument("baseline", type=_FILE)
@click.argument("treatment", type=_FILE)
@_ROWS
@_trial_options
@click.option("--scorer", help="The task scorer (default: the log's only scorer).")
@click.option("--evidence-scorer", help="Scorer of evidence recall (needed for --trials).")
@click.option("--grounding-scorer",
              help="Scorer of the unsupported-claim rate (needed for --trials).")
def inspect_command(baseline: str, treatment: str, rows: tuple[str, str] | None,
                    trials: str | None, baseline_condition: str, treatment_condition: str,
                    cost_source: str | None, cost_reference: str | None, scorer: str | None,
                    evidence_scorer: str | None, grounding_scorer: str | None) -> None:
    """Import two Inspect AI logs (.eval/.json), paired by sample id and epoch.

    \b
    Example:
      ctxbench import inspect base.eval treat.eval --rows base.jsonl treat.jsonl \\
        --trials trials.jsonl --evidence-scorer recall --grounding-scorer grounding
    """
    settings = TrialSettings(baseline_condition, treatment_condition, cost_source,
                             cost_reference)
    summary = import_inspect(baseline, treatment, trials=trials, rows=rows or None,
                             scorer=scorer, evidence_scorer=evidence_scorer,
                             grounding_scorer=grounding_scorer, settings=settings)
    click.echo(summary.line())


@import_group.command("swebench")
@click.argument("baseline_report", type=_FILE)
@click.argument("treatment_report", type=_FILE)
@click.option("--usage", type=_FILE, nargs=2, required=True,
              metavar="BASELINE.jsonl TREATMENT.jsonl",
              help="Per-instance usage JSONL of each arm (docs/importers.md).")
@click.option("--rows", type=_FILE, nargs=2, required=True,
              metavar="BASELINE.jsonl TREATMENT.jsonl", help="Where to write the row files.")
def swebench_command(baseline_report: str, treatment_report: str, usage: tuple[str, str],
                     rows: tuple[str, str]) -> None:
    """Import two SWE-bench harness run reports with per-instance usage.

    \b
    Example:
      ctxbench import swebench base.run1.json treat.run1.json \\
        --usage base-usage.jsonl treat-usage.jsonl --rows base.jsonl treat.jsonl
    """
    summary = import_swebench((baseline_report, treatment_report), usage, rows=rows)
    click.echo(summary.line())


@import_group.command("lm-eval")
@click.argument("baseline_samples", type=_FILE)
@click.argument("treatment_samples", type=_FILE)
@click.option("--usage", type=_FILE, nargs=2, required=True,
              metavar="BASELINE.jsonl TREATMENT.jsonl",
              help="Provider usage JSONL of each arm, keyed by doc_id (docs/importers.md).")
@click.option("--metric", required=True, help="The sample metric that is the task score.")
@click.option("--filter", "filter_name", help="lm-eval filter (default: the file's only one).")
@_ROWS
@_trial_options
@click.option("--model", help="PROVIDER/MODEL of the run (needed for --trials).")
@click.option("--evidence-metric", help="Metric of evidence recall (needed for --trials).")
@click.option("--grounding-metric",
              help="Metric of the unsupported-claim rate (needed for --trials).")
def lm_eval_command(baseline_samples: str, treatment_samples: str, usage: tuple[str, str],
                    metric: str, filter_name: str | None, rows: tuple[str, str] | None,
                    trials: str | None, baseline_condition: str, treatment_condition: str,
                    cost_source: str | None, cost_reference: str | None, model: str | None,
                    evidence_metric: str | None, grounding_metric: str | None) -> None:
    """Import two lm-eval samples_<task>_<date>.jsonl files with provider usage.

    \b
    Example:
      ctxbench import lm-eval base/samples_gsm8k_2026-01-01T00-00-00.jsonl \\
        treat/samples_gsm8k_2026-01-01T01-00-00.jsonl --usage bu.jsonl tu.jsonl \\
        --metric exact_match --rows base.jsonl treat.jsonl
    """
    settings = TrialSettings(baseline_condition, treatment_condition, cost_source,
                             cost_reference)
    summary = import_lm_eval((baseline_samples, treatment_samples), usage, metric=metric,
                             trials=trials, rows=rows or None, filter_name=filter_name,
                             model=model, evidence_metric=evidence_metric,
                             grounding_metric=grounding_metric, settings=settings)
    click.echo(summary.line())
