"""``ctxbench run EXP.toml [--resume]``: run a paired experiment and write its reports."""

from __future__ import annotations

import sys

import click

from ctxbench.cli.errors import EXIT_INTERRUPTED
from ctxbench.runner.experiment import RunSummary, StartInterrupted, run_experiment

__all__ = ["print_summary", "run"]


def print_summary(summary: RunSummary) -> None:
    """Print where the run went, its labels and its verdicts."""
    for label in summary.labels:
        click.echo(f"NOTE: {label}")
    if summary.torn_line is not None:
        click.echo(f"trials.jsonl:{summary.torn_line}: a torn last line (interrupted write) was "
                   "moved to trials.jsonl.torn; that trial ran again", err=True)
    click.echo(f"run {summary.run_id}: {summary.completed} trial(s) run, {summary.skipped} "
               f"already recorded, {summary.planned} planned")
    for line in summary.budgets:
        click.echo(line)
    for verdict in summary.verdicts:
        click.echo(verdict)
    for name, path in summary.reports.items():
        click.echo(f"{name}: {path}")


@click.command("run")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True,
              help="Continue a run in the spec's output directory; recorded trials are skipped.")
@click.option("--no-progress", is_flag=True, help="Do not draw the progress bar.")
def run(spec: str, resume: bool, no_progress: bool) -> int:
    """Run the paired experiment in SPEC (TOML) and write trials and reports.

    \b
    Example:
      ctxbench run experiments/support-qa.toml
      ctxbench run experiments/support-qa.toml --resume
    """
    try:
        summary = run_experiment(spec, resume=resume,
                                 show_progress=not no_progress and sys.stderr.isatty())
    except StartInterrupted:
        click.echo("ctxbench: interrupted while starting; nothing was run or written", err=True)
        return EXIT_INTERRUPTED
    if summary.interrupted:
        click.echo(f"interrupted after {summary.completed} trial(s); every finished trial is "
                   f"recorded in {summary.output / 'trials.jsonl'}", err=True)
        click.echo(f"resume with: {summary.resume_command}", err=True)
        return EXIT_INTERRUPTED
    print_summary(summary)
    return 0
