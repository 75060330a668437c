"""``ctxbench cef``: analyze, render and validate Context Efficiency Frontier trials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

import ctxbench.cef
from ctxbench.cli import blas  # noqa: F401  (before numpy loads)
from ctxbench.cli.errors import fail_check
from ctxbench.core.atomic import atomic_write_text, path_from, report_json_bytes
from ctxbench.core.errors import InputError, InputErrors
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.prereg import OverrideError
from ctxbench.protocols.cef.records import scan_trials
from ctxbench.runner.commands import CEF_SETTING_FLAGS, cef_analyze_command

__all__ = ["cef"]


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
@click.option("--sequential", "sequential", type=click.Path(dir_okay=False),
              help="Also read the trials, in file order, under the [sequential] design of "
                   "this .toml/.json (e.g. the preregistration): at which look each claim "
                   "would have been decided.")
@click.option("--sequential-output", type=click.Path(dir_okay=False),
              help="Write the looks (ctxbench.cef-sequential.v1 JSON) here (default: "
                   "sequential.json beside --output).")
@click.pass_context
def analyze(ctx: click.Context, trials: tuple[str, ...], prereg: str | None,
            bootstrap_samples: int | None, seed: int | None, quality_tolerance: float | None,
            confidence_level: float | None, unit: str | None, output: str | None,
            check: bool, sequential: str | None, sequential_output: str | None) -> None:
    """Analyze trial JSONL files into a ctxbench.cef-report.v1 JSON report.

    \b
    Example:
      ctxbench cef analyze trials.jsonl --prereg prereg.toml --output report.json --check
    """
    overrides = {"bootstrap_samples": bootstrap_samples, "seed": seed,
                 "quality_tolerance": quality_tolerance, "confidence_level": confidence_level,
                 "resampling_unit": unit}
    try:
        settings = ctxbench.cef.read_preregistration(prereg, overrides)
    except OverrideError as exc:
        # The library names settings; here they are the options the user typed.
        flags = ", ".join(CEF_SETTING_FLAGS[name] for name in exc.settings)
        raise InputError(f"{flags}: a supplied preregistration may not be overridden "
                         "from the command line; changing a setting after seeing "
                         "results requires a new preregistration version") from None
    if sequential is not None and sequential_output is None and output is None:
        raise InputError("--sequential-output: expected a path for the looks when the report "
                         "goes to standard output (or give --output)")
    # The command that reproduces the report, its paths as the report records them:
    # relative to the report's folder (the current directory on standard output).
    here = None if output is None else Path(output).parent
    command = cef_analyze_command(
        [path_from(here, p) for p in trials], None if prereg is None else path_from(here, prereg),
        settings, output=None if output is None else Path(output).name, check=check)
    report = ctxbench.cef.analyze(trials, prereg, overrides, command=command, output=output)
    if output is None:
        click.echo(report_json_bytes(report.to_json()).decode("utf-8"), nl=False)
    else:
        ctxbench.cef.write_report(output, report)
        for line in _summary(report):
            click.echo(line)
    if sequential is not None:
        _sequential(trials, prereg, sequential, overrides,
                    sequential_output or str(Path(output or ".").parent / "sequential.json"),
                    to_stderr=output is None)
    summary = report.summary
    if check and not summary.check_passed:
        failed = [c.condition for c in summary.claims if c.claimed and not c.holds]
        ctx.exit(fail_check("NO CLAIM for " + ", ".join(failed)))


def _sequential(trials: tuple[str, ...], prereg: str | None, design: str,
                overrides: dict[str, Any], path: str, *, to_stderr: bool) -> None:
    from ctxbench.core.atomic import atomic_write_bytes
    from ctxbench.protocols.cef.sequential_io import sequential_files, summary_lines

    result = sequential_files(trials, prereg, design, overrides)
    atomic_write_bytes(path, report_json_bytes(result.as_json()))
    for line in summary_lines(result):
        click.echo(line, err=to_stderr)
    click.echo(f"wrote {path}", err=to_stderr)


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
    report = ctxbench.cef.read_report(report_path)
    text = ctxbench.cef.render_markdown(report, report_name=report_path)
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
