"""``ctxbench demo --output DIR``: the whole pipeline on the embedded workload and model."""

from __future__ import annotations

import sys

import click

from ctxbench.cli.errors import EXIT_INTERRUPTED
from ctxbench.cli.run import print_summary
from ctxbench.runner.demo import run_demo

__all__ = ["demo"]


@click.command("demo")
@click.option("--output", "output", default="ctxbench-demo", show_default=True,
              type=click.Path(file_okay=False), help="Directory for the demo's files.")
@click.option("--fixture", is_flag=True,
              help="Use the deterministic fixture provider even if the embedded model is here.")
@click.option("--replicates", default=3, show_default=True, type=click.IntRange(1, 20))
@click.option("--tasks", default=None, type=click.IntRange(1, 10_000),
              help="Run only the first N tasks of the handbook (a quick look).")
def demo(output: str, fixture: bool, replicates: int, tasks: int | None) -> int:
    """Run the demo: demo handbook x embedded model x every strategy, then the reports.

    \b
    Example:
      ctxbench demo --output ctxbench-demo
    """
    result = run_demo(output, provider="fixture" if fixture else None, replicates=replicates,
                      show_progress=sys.stderr.isatty(), say=click.echo, tasks=tasks)
    summary = result.summary
    if summary.interrupted:
        click.echo(f"interrupted; resume with: ctxbench demo --output {output}", err=True)
        return EXIT_INTERRUPTED
    print_summary(summary)
    for note in result.notes:
        click.echo(f"NOTE: {note}")
    for line in result.seed_conformance:
        click.echo(line)
    for page in result.html_pages:
        click.echo(f"HTML page: {page}")
    if result.seed_quality_table:
        click.echo("compiler evidence coverage on the seed, every ladder budget "
                   "(also in compiler-seed-table.md):")
        click.echo(result.seed_quality_table)
    click.echo(f"demo finished in {result.wall_s:.0f} s on {result.provider}; the experiment "
               f"is {result.spec_path} (re-run it with `ctxbench run {result.spec_path}`)")
    baseline = result.baseline
    if baseline is not None:
        click.echo(f"baseline full_permitted_context: mean task score {baseline.task_score:.2f} "
                   f"over {baseline.trials} trials ({baseline.tasks_answered} of "
                   f"{baseline.tasks} tasks answered correctly at least once)")
        if baseline.warning:
            click.echo(f"WARNING: {baseline.warning}")
    for verdict in summary.verdicts:
        click.echo(f"verdict: {verdict}")
    return 0
