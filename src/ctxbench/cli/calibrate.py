"""``ctxbench calibrate``: simulate studies with a known truth and measure every gate."""

from __future__ import annotations

import click

from ctxbench.core.atomic import atomic_write_bytes, report_json_bytes

__all__ = ["calibrate"]


@click.command("calibrate")
@click.option("--replications", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Simulated studies per scenario.")
@click.option("--gate", "gates", multiple=True,
              help="Only scenarios whose gate starts with this (repeatable), e.g. cef.H1.")
@click.option("--scenario", "names", multiple=True,
              help="Only scenarios whose name contains this (repeatable).")
@click.option("--n", "sizes", type=int, multiple=True, help="Only these study sizes.")
@click.option("--kind", "kinds", type=click.Choice(["type_i", "power", "coverage"]),
              multiple=True, help="Only these kinds of row.")
@click.option("--seed", type=click.IntRange(min=0), default=20261201, show_default=True,
              help="Seed of every scenario's named random stream.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Also write the rows as JSON here.")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False),
              help="Also write the Markdown table here.")
@click.option("--worst-case", "worst", is_flag=True,
              help="Also search two- and three-point score distributions at the margin for "
                   "the largest exact type-I of the bounded-score gates.")
@click.option("--worst-case-max-n", "worst_max_n", type=click.IntRange(min=10),
              help="Leave study sizes above this out of the worst-case search.")
def calibrate(replications: int, gates: tuple[str, ...], names: tuple[str, ...],
              sizes: tuple[int, ...],
              kinds: tuple[str, ...], seed: int, json_path: str | None,
              md_path: str | None, worst: bool, worst_max_n: int | None) -> None:
    """Measure type-I error, power and coverage of every gate by simulation.

    \b
    Example:
      ctxbench calibrate --replications 1000 --gate cef --markdown calibration.md
    """
    from ctxbench.calibration.runner import calibrate as run
    from ctxbench.calibration.runner import markdown_table, rows_json
    from ctxbench.calibration.worst_case import markdown_worst, search, worst_json
    from ctxbench.core.errors import InputError

    try:
        rows = run(replications=replications, seed=seed, gates=gates, sizes=sizes,
                   kinds=kinds, names=names)
    except ValueError as exc:
        raise InputError(f"calibrate: {exc}") from exc
    table = markdown_table(rows)
    document = rows_json(rows, seed=seed)
    if worst:
        found = search(worst_max_n)
        table += "\nWorst case over two- and three-point distributions (exact):\n\n"
        table += markdown_worst(found)
        document["worst_case"] = worst_json(found)
    if json_path:
        atomic_write_bytes(json_path, report_json_bytes(document))
    if md_path:
        atomic_write_bytes(md_path, table.encode("utf-8"))
    click.echo(table, nl=False)
