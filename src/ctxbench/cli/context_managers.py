"""``ctxbench context-managers``: list the installed context managers and their source."""

from __future__ import annotations

import click


@click.command("context-managers")
def context_managers() -> None:
    """List every installed context manager: name, origin, distribution, target.

    A spec may also name a manager as module:attr or external:COMMAND (not listed).

    \b
    Example:
      ctxbench context-managers
    """
    from ctxbench.compiler.context_managers.discovery import context_manager_table

    click.echo(context_manager_table())
