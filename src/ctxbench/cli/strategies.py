"""``ctxbench strategies``: list the installed context strategies and where each came from."""

from __future__ import annotations

import click


@click.command("strategies")
def strategies() -> None:
    """List every installed context strategy: name, origin, distribution, entry point.

    \b
    Example:
      ctxbench strategies
    """
    from ctxbench.compiler.discovery import strategy_table

    click.echo(strategy_table())
