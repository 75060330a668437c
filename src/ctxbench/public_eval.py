"""The public-eval protocol as a library: pair two runs, compare, read back, render.

    import ctxbench.public_eval as public_eval

    cells = public_eval.read_inputs("baseline.jsonl", "treatment.jsonl")   # validated, paired
    report = public_eval.analyze("baseline.jsonl", "treatment.jsonl",
                                 public_eval.Settings(quality_margin_pp=1.0))
    report.status, report.quality.resolved_delta_pp
    public_eval.write_report("report.json", report)
    again = public_eval.read_report("report.json")   # a path, bytes or a decoded dict
    markdown = public_eval.render_markdown(again)
    page = public_eval.render_html(again)

:mod:`ctxbench.cef` and :mod:`ctxbench.eceb` have the same verbs. This module holds no
logic of its own, and imports the analysis (numpy) on the first call, not on import.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from pathlib import Path

    from ctxbench.protocols.public_eval.model import PublicEvalReport
    from ctxbench.protocols.public_eval.pairing import PairedCells
    from ctxbench.protocols.public_eval.settings import Settings
    from ctxbench.report_reader import ReportSource

__all__ = [
    "PairedCells",
    "PublicEvalReport",
    "Settings",
    "analyze",
    "convert_cef",
    "read_inputs",
    "read_report",
    "render_html",
    "render_markdown",
    "write_report",
]

_WHERE = {
    "PairedCells": "ctxbench.protocols.public_eval.pairing",
    "PublicEvalReport": "ctxbench.protocols.public_eval.model",
    "Settings": "ctxbench.protocols.public_eval.settings",
}
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

PathLike = str | os.PathLike[str]


def read_inputs(baseline: PathLike, treatment: PathLike) -> PairedCells:
    """Read, validate and pair the two row files cell by cell; the first broken rule
    raises a located error (``file:line: field: ...``)."""
    from ctxbench.protocols.public_eval.pairing import pair_rows
    from ctxbench.protocols.public_eval.rows import read_rows

    return pair_rows(read_rows(baseline), read_rows(treatment))


def analyze(baseline: PathLike, treatment: PathLike,
            settings: Settings | None = None) -> PublicEvalReport:
    """Compare the two row files under ``settings`` (default: :class:`Settings`()); the
    report names each input by file name and BLAKE3."""
    from ctxbench.protocols.public_eval.api import compare_files

    return compare_files(baseline, treatment, settings)


def convert_cef(trials: Sequence[PathLike], *, baseline: str = "raw", treatment: str,
                output_dir: PathLike, resolved_threshold: float = 1.0) -> tuple[Path, Path]:
    """Write CEF trials of two conditions as ``<baseline>.jsonl`` and ``<treatment>.jsonl``
    row files in ``output_dir``; returns their paths."""
    from ctxbench.protocols.public_eval.convert import convert_cef as convert

    return convert(trials, baseline=baseline, treatment=treatment, output_dir=output_dir,
                   resolved_threshold=resolved_threshold)


def read_report(source: ReportSource, *, display: str | None = None) -> PublicEvalReport:
    """A public-eval report read back from a path, bytes or a decoded dict; any other
    report, and any missing, mistyped or unknown member, is a located error."""
    from ctxbench.report_reader import read_report_of

    report: PublicEvalReport = read_report_of("public_eval", source, display=display)
    return report


def write_report(path: PathLike, report: PublicEvalReport) -> None:
    """Write ``report`` as JSON atomically (byte-identical for the same inputs)."""
    from ctxbench.core.atomic import atomic_write_json

    atomic_write_json(path, report.to_json())


def render_markdown(report: PublicEvalReport) -> str:
    """The report as Markdown (its notes first), as ``ctxbench public-eval`` prints it."""
    from ctxbench.render.markdown import with_notes
    from ctxbench.render.public_eval import render_markdown as render

    return with_notes(report.to_json(), render(report))


def render_html(report: PublicEvalReport, *, report_name: str = "report.json") -> str:
    """The report as one self-contained HTML page, the same bytes as
    ``ctxbench report REPORT_NAME --html`` writes for the report's file."""
    from ctxbench.core.node import Node
    from ctxbench.render.html import render_report_html

    return render_report_html("public_eval", Node(report_name, "", report.to_json()))
