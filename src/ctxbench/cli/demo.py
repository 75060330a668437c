"""``ctxbench demo``: the whole pipeline on the embedded workload and model; ``demo bfcl``: a
BFCL slice under every context strategy; ``demo agent``: agent tasks under context managers."""

from __future__ import annotations

import sys

import click

from ctxbench.cli.errors import EXIT_INTERRUPTED
from ctxbench.cli.run import print_summary
from ctxbench.runner.demo import DemoResult, run_demo

__all__ = ["demo"]


@click.group("demo", invoke_without_command=True)
@click.option("--output", "output", default="ctxbench-demo", show_default=True,
              type=click.Path(file_okay=False), help="Directory for the demo's files.")
@click.option("--fixture", is_flag=True,
              help="Use the deterministic fixture provider even if the embedded model is here.")
@click.option("--replicates", default=3, show_default=True, type=click.IntRange(1, 20))
@click.option("--tasks", default=None, type=click.IntRange(1, 10_000),
              help="Run only the first N tasks of the handbook (a quick look).")
@click.pass_context
def demo(ctx: click.Context, output: str, fixture: bool, replicates: int,
         tasks: int | None) -> int:
    """Run the demo: demo handbook x embedded model x every strategy, then the reports.

    \b
    Example:
      ctxbench demo --output ctxbench-demo
      ctxbench demo bfcl --output ctxbench-demo-bfcl
    """
    if ctx.invoked_subcommand is not None:
        given = [f"--{name}" for name in ("output", "fixture", "replicates", "tasks")
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if given:  # they would be ignored: the subcommand has its own
            raise click.UsageError(
                f"{', '.join(given)} given before `{ctx.invoked_subcommand}` would not apply; "
                f"give it after: ctxbench demo {ctx.invoked_subcommand} {given[0]} ...")
        return 0
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
    return _finish(result)


@demo.command("bfcl")
@click.option("--output", "output", default="ctxbench-demo-bfcl", show_default=True,
              type=click.Path(file_okay=False), help="Directory for the demo's files.")
@click.option("--fixture", is_flag=True,
              help="Use the deterministic fixture provider even if the embedded model is here.")
@click.option("--replicates", default=3, show_default=True, type=click.IntRange(1, 20))
@click.option("--tasks", default=None, type=click.IntRange(1, 100),
              help="Run only the first N tasks of the demo slice (default: all of it).")
def demo_bfcl(output: str, fixture: bool, replicates: int, tasks: int | None) -> int:
    """Run a BFCL slice under raw, compiled, entroly, naive and truncation contexts.

    \b
    Example:
      ctxbench demo bfcl --output ctxbench-demo-bfcl
    """
    from ctxbench.runner.demo_bfcl import DEMO_TASKS, run_bfcl_demo

    result = run_bfcl_demo(output, provider="fixture" if fixture else None,
                           replicates=replicates, tasks=tasks or DEMO_TASKS,
                           show_progress=sys.stderr.isatty(), say=click.echo)
    summary = result.summary
    if summary.interrupted:
        click.echo(f"interrupted; resume with: ctxbench demo bfcl --output {output}", err=True)
        return EXIT_INTERRUPTED
    print_summary(summary)
    for note in result.notes:
        click.echo(f"NOTE: {note}")
    for page in result.html_pages:
        click.echo(f"HTML page: {page}")
    return _finish(result)


@demo.command("agent")
@click.option("--output", "output", default="ctxbench-demo-agent", show_default=True,
              type=click.Path(file_okay=False), help="Directory for the demo's files.")
@click.option("--fixture", is_flag=True,
              help="Use the deterministic fixture provider even if the embedded model is here.")
@click.option("--tasks", default=None, type=click.IntRange(1, 1000),
              help="Run only the first N agent tasks (default: all 18).")
def demo_agent(output: str, fixture: bool, tasks: int | None) -> int:
    """Run the built-in agent tasks under three context managers, then the reports.

    \b
    Example:
      ctxbench demo agent --output ctxbench-demo-agent
    """
    from ctxbench.runner.demo_agent import run_agent_demo

    result = run_agent_demo(output, provider="fixture" if fixture else None, tasks=tasks,
                            say=click.echo)
    for condition, (won, total) in result.resolved.items():
        click.echo(f"{condition}: {won} of {total} tasks resolved ({won / total:.0%})")
    for verdict in result.summary.verdicts:
        click.echo(f"verdict: {verdict}")
    click.echo(f"demo agent finished in {result.wall_s:.0f} s on {result.provider}; "
               f"the reports are in {output}")
    return 0


def _finish(result: DemoResult) -> int:
    """The closing lines both demos print: time, baseline score, warning, verdicts."""
    summary = result.summary
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
