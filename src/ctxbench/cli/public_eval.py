"""``ctxbench public-eval``: compare baseline and treatment agent runs, judged on intervals."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

import ctxbench.public_eval
from ctxbench.cli import blas  # noqa: F401  (before numpy loads)
from ctxbench.cli.errors import fail_check
from ctxbench.core.atomic import atomic_write_bytes, report_json_bytes
from ctxbench.core.errors import InputError, SettingError

__all__ = ["public_eval"]

_COMPARE_ONLY = ("confidence_level", "quality_margin_pp", "bootstrap_samples", "seed",
                 "min_savings_percent", "max_false_stop_rate", "treatment_name",
                 "baseline_name", "as_json", "output", "check", "sequential",
                 "sequential_output")
_CONVERT_ONLY = ("baseline_condition", "treatment_condition", "output_dir",
                 "resolved_threshold")
# A library setting -> the option that sets it here (the library names only the setting).
_OPTIONS = {"confidence_level": "--confidence-level", "quality_margin_pp": "--quality-margin-pp",
            "bootstrap_samples": "--bootstrap-samples", "seed": "--seed",
            "min_savings_percent": "--min-savings-percent",
            "max_false_stop_rate": "--max-false-stop-rate", "baseline_name": "--baseline-name",
            "treatment_name": "--treatment-name", "baseline": "--baseline",
            "treatment": "--treatment", "resolved_threshold": "--resolved-threshold"}


@contextlib.contextmanager
def _as_options() -> Iterator[None]:
    """A setting the library refused, named by the option the user typed."""
    try:
        yield
    except SettingError as exc:
        raise InputError(f"{_OPTIONS[exc.setting]}: {exc.detail}") from None


def _reject(ctx: click.Context, names: tuple[str, ...], mode: str) -> None:
    """A located usage error for the first option given that does not apply to ``mode``."""
    for param in ctx.command.params:
        if param.name in names and ctx.get_parameter_source(param.name) \
                not in (click.core.ParameterSource.DEFAULT, None):
            where = "without" if mode == "--from-cef" else "with"
            raise InputError(f"{max(param.opts, key=len)}: expected only {where} --from-cef, "
                             f"got it with {mode}")


@click.command("public-eval")
@click.argument("files", nargs=-1, metavar="BASELINE.jsonl TREATMENT.jsonl",
                type=click.Path(dir_okay=False))
@click.option("--confidence-level", type=float, default=0.95, show_default=True,
              help="Two-sided level of every interval.")
@click.option("--quality-margin-pp", type=float, default=1.0, show_default=True,
              help="Preregistered non-inferiority margin, in percentage points.")
@click.option("--bootstrap-samples", type=int, default=2000, show_default=True,
              help="Paired bootstrap resamples.")
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed.")
@click.option("--min-savings-percent", type=float, default=0.0, show_default=True,
              help="The token-savings lower bound must be above this.")
@click.option("--max-false-stop-rate", type=float, default=0.0, show_default=True,
              help="Highest share of reviewed stops judged false (false_stops / "
                   "reviewed_stops) before the status is false_stop_risk.")
@click.option("--treatment-name", default="treatment", show_default=True,
              help="Name of the treatment in the report.")
@click.option("--baseline-name", default="baseline", show_default=True,
              help="Name of the baseline in the report.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the ctxbench.public-eval-report.v1 JSON instead of Markdown.")
@click.option("--output", type=click.Path(dir_okay=False),
              help="Write the report here instead of standard output.")
@click.option("--check", is_flag=True, help="Exit 1 unless the status is supported.")
@click.option("--from-cef", "from_cef", type=click.Path(dir_okay=False), multiple=True,
              help="Convert these CEF trial files into row files instead of comparing.")
@click.option("--baseline", "baseline_condition",
              help="With --from-cef: the baseline condition (default raw).")
@click.option("--treatment", "treatment_condition",
              help="With --from-cef: the treatment condition.")
@click.option("--output-dir", type=click.Path(file_okay=False),
              help="With --from-cef: where to write <baseline>.jsonl and <treatment>.jsonl.")
@click.option("--resolved-threshold", type=float,
              help="With --from-cef: a trial is resolved when task_score >= this (default 1).")
@click.pass_context
@click.option("--sequential", "sequential", type=click.Path(dir_okay=False),
              help="Also read the rows, in the baseline file's order, under the [sequential] "
                   "design of this .toml/.json: at which look the comparison would have "
                   "been decided.")
@click.option("--sequential-output", type=click.Path(dir_okay=False),
              help="Write the looks (ctxbench.public-eval-sequential.v1 JSON) here.")
def public_eval(ctx: click.Context, files: tuple[str, ...], confidence_level: float,
                quality_margin_pp: float, bootstrap_samples: int, seed: int,
                min_savings_percent: float, max_false_stop_rate: float, treatment_name: str,
                baseline_name: str, as_json: bool, output: str | None, check: bool,
                from_cef: tuple[str, ...], baseline_condition: str | None,
                treatment_condition: str | None, output_dir: str | None,
                resolved_threshold: float | None, sequential: str | None,
                sequential_output: str | None) -> None:
    """Compare baseline and treatment runs: savings with intervals, quality by interval bound.

    \b
    Example:
      ctxbench public-eval baseline.jsonl treatment.jsonl --quality-margin-pp 1.0 --check
      ctxbench public-eval --from-cef trials.jsonl --baseline raw \\
          --treatment compiled@800 --output-dir rows/
    """
    if from_cef:
        if files:
            raise InputError("public-eval: expected either BASELINE.jsonl TREATMENT.jsonl or "
                             "--from-cef, got both")
        _reject(ctx, _COMPARE_ONLY, "--from-cef")
        if treatment_condition is None or output_dir is None:
            raise InputError("--from-cef: expected --treatment NAME and --output-dir DIR")
        with _as_options():
            written = ctxbench.public_eval.convert_cef(
                from_cef, baseline=baseline_condition or "raw", treatment=treatment_condition,
                output_dir=output_dir,
                resolved_threshold=1.0 if resolved_threshold is None else resolved_threshold)
        for path in written:
            click.echo(str(path))
        return
    _reject(ctx, _CONVERT_ONLY, "BASELINE.jsonl TREATMENT.jsonl")
    if len(files) != 2:
        raise InputError(f"public-eval: expected BASELINE.jsonl TREATMENT.jsonl, got "
                         f"{len(files)} file(s)")
    with _as_options():
        settings = ctxbench.public_eval.Settings(
            confidence_level=confidence_level, quality_margin_pp=quality_margin_pp,
            bootstrap_samples=bootstrap_samples, seed=seed,
            min_savings_percent=min_savings_percent, max_false_stop_rate=max_false_stop_rate,
            baseline_name=baseline_name, treatment_name=treatment_name)
    report = ctxbench.public_eval.analyze(files[0], files[1], settings)
    if sequential is not None:
        from ctxbench.protocols.cef.sequential_io import load_design
        from ctxbench.protocols.public_eval.sequential import sequential_files

        looks = sequential_files(files[0], files[1], settings, load_design(sequential))
        for line in looks.summary_lines():
            click.echo(line, err=True)
        if sequential_output is not None:
            atomic_write_bytes(sequential_output, report_json_bytes(looks.as_json()))
    data = (report_json_bytes(report.to_json()) if as_json
            else ctxbench.public_eval.render_markdown(report).encode("utf-8"))
    if output is None:
        click.echo(data.decode("utf-8"), nl=False)
    else:
        atomic_write_bytes(output, data)
    if check and not report.supported:
        ctx.exit(fail_check(f"status is {report.status}: " + "; ".join(report.reasons)))
