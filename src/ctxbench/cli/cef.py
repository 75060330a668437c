"""``ctxbench cef``: analyze, render and validate Context Efficiency Frontier trials."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.cli import blas  # noqa: F401  (before numpy loads)
from ctxbench.cli.errors import fail_check
from ctxbench.core.atomic import atomic_write_text, report_json_bytes
from ctxbench.core.errors import InputError, InputErrors
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.node import Node
from ctxbench.protocols.cef.api import analyze_files, write_report
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.prereg import OverrideError
from ctxbench.protocols.cef.records import scan_trials
from ctxbench.render.cef import render_markdown
from ctxbench.render.markdown import with_notes

__all__ = ["cef"]

_FLAGS = {"bootstrap_samples": "--bootstrap-samples", "seed": "--seed",
          "quality_tolerance": "--quality-tolerance", "confidence_level": "--confidence-level",
          "resampling_unit": "--unit"}


@click.group("cef")
def cef() -> None:
    """Analyze paired context-efficiency trials under the CEF protocol.

    \b
    Example:
      ctxbench cef analyze trials.jsonl --prereg prereg.toml --output report.json
      ctxbench cef render report.json --output report.md
    """


@cef.command("analyze")
@click.argument("trials", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--prereg", type=click.Path(dir_okay=False),
              help="Preregistration (.toml or .json); its settings cannot be overridden.")
@click.option("--bootstrap-samples", type=int, help="Resamples (default 2000).")
@click.option("--seed", type=int, help="Seed of every random stream (default 42).")
@click.option("--quality-tolerance", type=float, help="Non-inferiority tolerance (0.01).")
@click.option("--confidence-level", type=float, help="Interval level (default 0.95).")
@click.option("--unit", "unit", type=click.Choice(["task-replicate", "task"]),
              help="Resampling unit (default task-replicate).")
@click.option("--output", type=click.Path(dir_okay=False),
              help="Write the report JSON here (default: standard output).")
@click.option("--check", is_flag=True, help="Exit 1 when any claimed condition fails.")
@click.pass_context
def analyze(ctx: click.Context, trials: tuple[str, ...], prereg: str | None,
            bootstrap_samples: int | None, seed: int | None, quality_tolerance: float | None,
            confidence_level: float | None, unit: str | None, output: str | None,
            check: bool) -> None:
    """Analyze trial JSONL files into a ctxbench.cef-report.v1 JSON report.

    \b
    Example:
      ctxbench cef analyze trials.jsonl --prereg prereg.toml --output report.json --check
    """
    overrides = {"bootstrap_samples": bootstrap_samples, "seed": seed,
                 "quality_tolerance": quality_tolerance, "confidence_level": confidence_level,
                 "resampling_unit": unit}
    try:
        report = analyze_files(trials, prereg, overrides, output=output, check=check)
    except OverrideError as exc:
        # The library names settings; here they are the options the user typed.
        flags = ", ".join(_FLAGS[name] for name in exc.settings)
        raise InputError(f"{flags}: a supplied preregistration may not be overridden "
                         "from the command line; changing a setting after seeing "
                         "results requires a new preregistration version") from None
    if output is None:
        click.echo(report_json_bytes(report.to_json()).decode("utf-8"), nl=False)
    else:
        write_report(output, report)
        for line in _summary(report):
            click.echo(line)
    summary = report.summary
    if check and not summary.check_passed:
        failed = [c.condition for c in summary.claims if c.claimed and not c.holds]
        ctx.exit(fail_check("NO CLAIM for " + ", ".join(failed)))


def _summary(report: CefReport) -> list[str]:
    lines = []
    for claim in report.summary.claims:
        state = "quality_preserving_context_win" if claim.holds else "NO CLAIM"
        lines.append(f"{claim.condition}: {state}")
    lines.extend(report.headlines)
    return lines


@cef.command("render")
@click.argument("report_path", metavar="REPORT", type=click.Path(dir_okay=False))
@click.option("--output", type=click.Path(dir_okay=False),
              help="Write the Markdown here (default: standard output).")
def render(report_path: str, output: str | None) -> None:
    """Render a CEF report JSON as Markdown (numbers only from the JSON).

    \b
    Example:
      ctxbench cef render report.json --output report.md
    """
    document = load_json_document(report_path)
    report = CefReport.from_json(Node(report_path, "", document))
    text = with_notes(document, render_markdown(report, report_name=report_path))
    if output is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(Path(output), text)


@cef.command("validate")
@click.argument("trials", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--max-errors", type=click.IntRange(min=1), default=50, show_default=True,
              help="List at most this many errors.")
@click.option("--baseline", default="raw", show_default=True,
              help="The baseline condition (its trials must carry no commit id).")
def validate(trials: tuple[str, ...], max_errors: int, baseline: str) -> None:
    """Validate trial JSONL files, listing every error (up to --max-errors).

    \b
    Example:
      ctxbench cef validate trials.jsonl
    """
    errors, total, records = scan_trials(trials, max_errors=max_errors, baseline=baseline)
    if errors:
        raise InputErrors(errors, total=total)
    click.echo(f"{records} trial record(s) valid in {len(trials)} file(s)")
