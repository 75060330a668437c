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
@click.option("--sequential", is_flag=True,
              help="Calibrate the sequential designs instead: type-I error under the "
                   "stopping rule (5-10 looks) and tasks saved beside the fixed design.")
def calibrate(replications: int, gates: tuple[str, ...], names: tuple[str, ...],
              sizes: tuple[int, ...],
              kinds: tuple[str, ...], seed: int, json_path: str | None,
              md_path: str | None, worst: bool, worst_max_n: int | None,
              sequential: bool) -> None:
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
                   kinds=kinds, names=names, sequential=sequential)
    except ValueError as exc:
        raise InputError(f"calibrate: {exc}") from exc
    table = markdown_table(rows)
    document = rows_json(rows, seed=seed)
    if sequential:
        from ctxbench.calibration.sequential_verdict import (
            sequential_markdown,
            sequential_rows_json,
        )

        table = sequential_markdown(rows)
        document = sequential_rows_json(rows, seed=seed)
        from ctxbench.calibration.sequential import efficiency_markdown, efficiency_table

        found_rows = efficiency_table(replications=replications, seed=seed)
        table += ("\nExpected tasks beside the fixed design (H1, continuous deltas sd 0.15, "
                  "margin 0.05; one simulation):\n\n" + efficiency_markdown(found_rows))
        document["efficiency"] = [
            {"truth": r.truth, "method": r.method, "futility": r.futility,
             "fixed_tasks": r.fixed_tasks, "max_tasks": r.max_tasks,
             "replications": r.replications, "fixed_claims": r.fixed_claims,
             "sequential_claims": r.sequential_claims,
             "sequential_losses": r.sequential_losses, "mean_tasks": r.mean_tasks,
             "saved": r.saved} for r in found_rows]
    if worst and sequential:
        from ctxbench.calibration.sequential_exact import (
            SEARCH,
            markdown_sequential_worst,
            worst_two_point,
        )

        exact = [worst_two_point(n, looks, method, lattice=lattice)
                 for n, looks, lattice in SEARCH if worst_max_n is None or n <= worst_max_n
                 for method in ("obrien_fleming", "pocock")]
        table += ("\nWorst case over two-point distributions under the stopping rule "
                  "(exact):\n\n" + markdown_sequential_worst(exact))
        document["sequential_worst_case"] = [
            {"method": w.method, "max_tasks": w.max_tasks, "looks": w.looks,
             "distributions": w.distributions, "type_i": w.type_i,
             "support": list(w.support)} for w in exact]
    elif worst:
        found = search(worst_max_n)
        table += "\nWorst case over two- and three-point distributions (exact):\n\n"
        table += markdown_worst(found)
        document["worst_case"] = worst_json(found)
    if json_path:
        atomic_write_bytes(json_path, report_json_bytes(document))
    if md_path:
        atomic_write_bytes(md_path, table.encode("utf-8"))
    click.echo(table, nl=False)
