"""``ctxbench plan``: how many tasks a CEF quality gate needs for a target power."""

from __future__ import annotations

import click

from ctxbench.core.errors import InputError

__all__ = ["plan"]


@click.command("plan")
@click.option("--scores", type=click.Choice(["binary", "continuous"]), required=True,
              help="Binary (0/1) task scores, or continuous scores in [0, 1].")
@click.option("--margin", type=float, default=0.01, show_default=True,
              help="The quality tolerance: the change must be shown above -margin.")
@click.option("--difference", type=float, default=0.0, show_default=True,
              help="The expected true mean change per pair (candidate - baseline).")
@click.option("--discordance", type=float,
              help="Binary: the expected share of pairs whose scores differ.")
@click.option("--fragile-share", type=float, default=1.0, show_default=True,
              help="Binary: the share of tasks whose pairs can differ at all (replicates of "
                   "a task then move together; 1: every pair alike).")
@click.option("--sd", type=float, help="Continuous: the spread of one task's mean change.")
@click.option("--replicate-sd", type=float, default=0.0, show_default=True,
              help="Continuous: the spread of one replicate's change about its task's.")
@click.option("--replicates", type=int, default=1, show_default=True,
              help="Replicates per task.")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Two-sided interval level (the gate is one-sided at (1 - level) / 2).")
@click.option("--power", "powers", type=float, multiple=True,
              help="Target power (repeatable; default 0.8 and 0.9).")
@click.option("--replications", type=int, default=2000, show_default=True,
              help="Simulated studies per size (designs without an exact power).")
@click.option("--seed", type=click.IntRange(min=0), default=20261201, show_default=True,
              help="Seed of the simulation's named random streams.")
@click.option("--max-tasks", type=int, default=5000, show_default=True,
              help="Search no further than this many tasks.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the ctxbench.plan.v1 JSON instead of text.")
@click.option("--sequential-looks", type=click.IntRange(min=2),
              help="Also plan a sequential design of this many equally spaced looks: its "
                   "maximum and expected tasks beside the fixed design, at the same power.")
@click.option("--sequential-method", type=click.Choice(["obrien_fleming", "pocock", "betting"]),
              default="obrien_fleming", show_default=True,
              help="The sequential design's method (docs/statistics.md).")
@click.option("--futility/--no-futility", default=True, show_default=True,
              help="The sequential design stops for futility (non-binding).")
def plan(scores: str, margin: float, difference: float, discordance: float | None,
         fragile_share: float, sd: float | None, replicate_sd: float, replicates: int, level: float,
         powers: tuple[float, ...], replications: int, seed: int, max_tasks: int,
         as_json: bool, sequential_looks: int | None, sequential_method: str,
         futility: bool) -> None:
    """Tasks for 80% and 90% power of the H1-H3 gate: exact for binary pairs, else simulated.

    \b
    Example:
      ctxbench plan --scores binary --margin 0.05 --discordance 0.2
    """
    from ctxbench.core.atomic import report_json_bytes
    from ctxbench.protocols.cef.planning import StudyDesign, plan_study
    from ctxbench.render.plan import plan_text, prereg_table

    try:
        design = StudyDesign(scores="binary" if scores == "binary" else "continuous",
                        margin=margin, difference=difference, level=level,
                        replicates=replicates, discordance=discordance, sd=sd,
                        replicate_sd=replicate_sd if scores == "continuous" else 0.0,
                        fragile_share=fragile_share)
        result = plan_study(design, powers=powers or (0.8, 0.9), replications=replications,
                            seed=seed, max_tasks=max_tasks)
        sequential = None
        if sequential_looks is not None:
            from ctxbench.protocols.cef.planning_sequential import plan_sequential

            sequential = plan_sequential(result, looks=sequential_looks,
                                         method=sequential_method, futility=futility,
                                         replications=replications, seed=seed)
    except ValueError as exc:
        raise InputError(f"plan: {exc}") from exc
    if as_json:
        document = result.to_json()
        if sequential is not None:
            document["sequential"] = [s.to_json() for s in sequential]
        click.echo(report_json_bytes(document).decode("utf-8"), nl=False)
        return
    click.echo(plan_text(result), nl=False)
    if sequential is not None:
        from ctxbench.render.plan import sequential_text

        click.echo(sequential_text(sequential), nl=False)
    table = prereg_table(result, result.targets[0].target)
    if table is not None:
        click.echo("\nto record the first target in a CEF preregistration:\n" + table, nl=False)
