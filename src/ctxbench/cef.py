"""The CEF protocol as a library: read trials, analyze, read a report back, render it.

    import ctxbench.cef as cef

    trials, prereg = cef.example_paths()            # the bundled conformance example
    report = cef.analyze([trials], prereg)          # a CefReport, rounded as written
    cef.write_report("report.json", report)
    again = cef.read_report("report.json")          # a path, bytes or a decoded dict
    markdown = cef.render_markdown(again)
    page = cef.render_html(again)                   # one self-contained HTML page

:mod:`ctxbench.public_eval` and :mod:`ctxbench.eceb` have the same verbs. This module
holds no logic of its own: each verb calls the protocol's implementation, and the
analysis (numpy) is imported on the first call, not on import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from pathlib import Path

    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.protocols.cef.prereg import Preregistration
    from ctxbench.protocols.cef.table import TrialTable
    from ctxbench.report_reader import ReportSource

__all__ = [
    "CefReport",
    "Preregistration",
    "TrialTable",
    "analyze",
    "example_paths",
    "read_inputs",
    "read_preregistration",
    "read_report",
    "render_html",
    "render_markdown",
    "write_report",
]

_WHERE = {
    "CefReport": "ctxbench.protocols.cef.model",
    "Preregistration": "ctxbench.protocols.cef.prereg",
    "TrialTable": "ctxbench.protocols.cef.table",
}
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

PathLike = str | os.PathLike[str]


def example_paths() -> tuple[Path, Path]:
    """The bundled example's (trials.jsonl, prereg.toml): a synthetic conformance fixture."""
    from ctxbench.protocols.cef.api import example_paths as paths

    return paths()


def read_inputs(trials: Sequence[PathLike], *, baseline: str = "raw") -> TrialTable:
    """Read and validate trial JSONL files into columns; the first bad record raises a
    located :class:`~ctxbench.core.errors.FieldError` (``file:line: field: ...``)."""
    from ctxbench.protocols.cef.api import read_table

    return read_table(trials, baseline=baseline)


def read_preregistration(path: PathLike | None = None,
                         overrides: Mapping[str, Any] | None = None) -> Preregistration:
    """The preregistration in ``path`` (.toml or .json), or the protocol defaults with
    ``overrides`` (bootstrap_samples, seed, quality_tolerance, confidence_level,
    resampling_unit); overriding a supplied file raises ``OverrideError``."""
    from ctxbench.protocols.cef.api import load_settings

    return load_settings(path, overrides)


def analyze(trials: Sequence[PathLike], prereg: PathLike | None = None,
            overrides: Mapping[str, Any] | None = None, *,
            command: Sequence[str] | None = None,
            output: PathLike | None = None) -> CefReport:
    """Analyze trial files under a preregistration (or the defaults plus ``overrides``).

    The report records each input file's BLAKE3; ``command`` (an argv, if the caller has
    one that reproduces the analysis) is recorded as given, and file paths are written
    relative to ``output``'s folder when the report will be written there.
    """
    from ctxbench.protocols.cef.api import analyze_files

    return analyze_files(trials, prereg, overrides, command=command, output=output)


def read_report(source: ReportSource, *, display: str | None = None) -> CefReport:
    """A CEF report read back from a path, bytes or a decoded dict; any other report, and
    any missing, mistyped or unknown member, is a located error naming its JSON pointer."""
    from ctxbench.report_reader import read_report_of

    report: CefReport = read_report_of("cef", source, display=display)
    return report


def write_report(path: PathLike, report: CefReport) -> None:
    """Write ``report`` as JSON atomically (byte-identical for the same inputs)."""
    from ctxbench.protocols.cef.api import write_report as write

    write(path, report)


def render_markdown(report: CefReport, *, report_name: str = "report.json") -> str:
    """The report as Markdown (its notes first); ``report_name`` is the file its
    reproduce line names."""
    from ctxbench.render.cef import render_markdown as render
    from ctxbench.render.markdown import with_notes

    return with_notes(report.to_json(), render(report, report_name=report_name))


def render_html(report: CefReport, *, report_name: str = "report.json") -> str:
    """The report as one self-contained HTML page, the same bytes as
    ``ctxbench report REPORT_NAME --html`` writes for the report's file."""
    from ctxbench.core.node import Node
    from ctxbench.render.html import render_report_html

    return render_report_html("cef", Node(report_name, "", report.to_json()))
