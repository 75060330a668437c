"""``ctxbench schema NAME``: print a shipped JSON Schema."""

from __future__ import annotations

import click

from ctxbench.schemas import available_schemas, schema_text


@click.command("schema")
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print a JSON Schema that ships with ctxbench (no NAME: list them).

    \b
    Example:
      ctxbench schema ctxbench.trial.v1
    """
    if name is None:
        for known in available_schemas():
            click.echo(known)
        return
    click.echo(schema_text(name), nl=False)
