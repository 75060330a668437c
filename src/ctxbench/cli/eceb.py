"""``ctxbench eceb``: corpus roots, registration, evaluation and rendering for ECEB-0.1."""

from __future__ import annotations

from pathlib import Path

import click

import ctxbench.eceb
from ctxbench.cli.errors import fail_check
from ctxbench.core.atomic import atomic_write_json, atomic_write_text, report_json_bytes
from ctxbench.protocols.eceb.records import CLAIM_CLASSES
from ctxbench.protocols.eceb.register import DEFAULT_CLAIM_CLASS, load_rules, register_directory

_FILE = click.Path(dir_okay=False, path_type=Path)
_DIR = click.Path(file_okay=False, path_type=Path)


@click.group("eceb")
def eceb() -> None:
    """Enterprise Context Efficiency Benchmark (ECEB-0.1): the smallest budget that holds quality.

    \b
    Example:
      ctxbench eceb evaluate benchmark.json run.json --corpus corpus/ --output report.json
    """


@eceb.command("root")
@click.argument("benchmark", type=_FILE)
@click.option("--corpus", "corpus", type=_DIR, default=None,
              help="Also re-hash every registered file under this directory.")
def root(benchmark: Path, corpus: Path | None) -> None:
    """Print a benchmark's corpus root (verified against its artifact records).

    \b
    Example:
      ctxbench eceb root benchmark.json --corpus corpus/
    """
    click.echo(ctxbench.eceb.benchmark_root(benchmark, corpus))


@eceb.command("register")
@click.argument("directory", type=_DIR)
@click.option("--map", "rules", type=_FILE, required=True,
              help="TOML path rules assigning kind and classification.")
@click.option("--output", type=_FILE, required=True, help="Where to write the benchmark.")
@click.option("--claim-class", "claim_class", type=click.Choice(CLAIM_CLASSES), default=None,
              help="The benchmark's claim class (ECEB-0.1 §15); else the rules file's, else "
                   f"{DEFAULT_CLAIM_CLASS} (printed). Your own documents: docs/eceb.md.")
def register(directory: Path, rules: Path, output: Path, claim_class: str | None) -> None:
    """Register every file of a directory as a benchmark skeleton (no tasks yet).

    \b
    Example:
      ctxbench eceb register corpus/ --map rules.toml --output benchmark.json \\
          --claim-class enterprise_validated
    """
    document = register_directory(directory, rules, claim_class)
    atomic_write_json(output, document)
    chosen = document["claim_class"]
    if claim_class is not None:
        source = "from --claim-class"
    elif load_rules(rules)[1] is not None:
        source = f"from {rules}"
    else:
        source = ("the default, the weakest class; declare yours with --claim-class "
                  "(docs/eceb.md)")
    click.echo(f"registered {len(document['corpus']['artifacts'])} artifacts, "
               f"root {document['corpus']['root']}, claim_class {chosen} ({source}) "
               f"-> {output}")


@eceb.command("evaluate")
@click.argument("benchmark", type=_FILE)
@click.argument("run", type=_FILE)
@click.option("--corpus", "corpus", type=_DIR, required=True,
              help="The corpus directory; every registered file is re-hashed first.")
@click.option("--output", type=_FILE, default=None, help="Write report.json here.")
@click.option("--check", is_flag=True, help="Exit 1 when any task fails to qualify.")
@click.pass_context
def evaluate(ctx: click.Context, benchmark: Path, run: Path, corpus: Path,
             output: Path | None, check: bool) -> None:
    """Evaluate a run: gates per budget, minimum viable budget, savings, claim class.

    \b
    Example:
      ctxbench eceb evaluate benchmark.json run.json --corpus corpus/ --check
    """
    report = ctxbench.eceb.analyze(benchmark, run, corpus)
    if output is None:
        click.echo(report_json_bytes(report.to_json()).decode("utf-8"), nl=False)
    else:
        atomic_write_json(output, report.to_json())
        summary = report.summary
        click.echo(f"{summary.qualified}/{summary.tasks} tasks qualified -> {output}")
    if check and not report.summary.all_qualified:
        failed = [t.task_id for t in report.tasks if not t.qualified]
        ctx.exit(fail_check("task(s) did not qualify: " + ", ".join(failed)))


@eceb.command("render")
@click.argument("report", type=_FILE)
@click.option("--output", type=_FILE, default=None, help="Write Markdown here.")
def render(report: Path, output: Path | None) -> None:
    """Render an ECEB report.json as Markdown.

    \b
    Example:
      ctxbench eceb render report.json --output report.md
    """
    text = ctxbench.eceb.render_markdown(ctxbench.eceb.read_report(report))
    if output is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(output, text)
