"""``ctxbench report PATH... --html OUT``: one self-contained HTML page of reports or runs."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["report"]


@click.command("report")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--html", "html_out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page (one file; opens from file:// without network).")
def report(paths: tuple[Path, ...], html_out: Path) -> int:
    """Render report JSON files or run directories as one self-contained HTML page.

    \b
    Several paths give one page that compares them side by side; two run
    directories add a diff of the same tasks across the runs.
    Example:
      ctxbench report ctxbench-demo/run --html ctxbench-demo/run/report.html
      ctxbench report old-run new-run --html diff.html
    """
    import ctxbench

    click.echo(ctxbench.write_html(list(paths), html_out))
    return 0
