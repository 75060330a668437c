"""The ECEB-0.1 protocol as a library: read a benchmark, run and corpus, evaluate, render.

    import ctxbench.eceb as eceb

    seed = eceb.seed_paths()                         # the embedded synthetic seed
    report = eceb.analyze(seed.benchmark, seed.run, seed.corpus)   # an ECEB Report
    report.summary.qualified, report.claim_class.reported
    eceb.write_report("report.json", report)
    again = eceb.read_report("report.json")          # a path, bytes or a decoded dict
    markdown = eceb.render_markdown(again)
    page = eceb.render_html(again)

:mod:`ctxbench.cef` and :mod:`ctxbench.public_eval` have the same verbs. This module
holds no logic of its own; each verb calls the protocol's implementation.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.protocols.eceb.api import Inputs
    from ctxbench.protocols.eceb.model import Report
    from ctxbench.protocols.eceb.seed import SeedPaths
    from ctxbench.report_reader import ReportSource

__all__ = [
    "Inputs",
    "Report",
    "SeedPaths",
    "analyze",
    "benchmark_root",
    "read_inputs",
    "read_report",
    "render_html",
    "render_markdown",
    "seed_paths",
    "write_report",
]

_WHERE = {
    "Inputs": "ctxbench.protocols.eceb.api",
    "Report": "ctxbench.protocols.eceb.model",
    "SeedPaths": "ctxbench.protocols.eceb.seed",
}
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

PathLike = str | os.PathLike[str]


def seed_paths() -> SeedPaths:
    """The embedded seed: its benchmark, corpus directory and conformance run."""
    from ctxbench.protocols.eceb.seed import seed_paths as paths

    return paths()


def benchmark_root(benchmark: PathLike, corpus: PathLike | None = None) -> str:
    """The benchmark's corpus root, verified against its artifact records; with
    ``corpus``, every registered file is re-hashed too."""
    from ctxbench.protocols.eceb.api import benchmark_root as root

    return root(benchmark, corpus)


def read_inputs(benchmark: PathLike, run: PathLike, corpus: PathLike) -> Inputs:
    """Load and validate the benchmark and the run, and re-hash every corpus file (the
    corpus check lists each problem found; :func:`analyze` refuses a corpus with any)."""
    from ctxbench.protocols.eceb.api import read_files

    return read_files(benchmark, run, corpus)


def analyze(benchmark: PathLike, run: PathLike, corpus: PathLike) -> Report:
    """Evaluate a run: the seven gates per budget, the minimum viable budget, savings
    and the claim class."""
    from ctxbench.protocols.eceb.api import evaluate_files

    return evaluate_files(benchmark, run, corpus)


def read_report(source: ReportSource, *, display: str | None = None) -> Report:
    """An ECEB report read back from a path, bytes or a decoded dict; any other report,
    and any missing, mistyped or unknown member, is a located error."""
    from ctxbench.report_reader import read_report_of

    report: Report = read_report_of("eceb", source, display=display)
    return report


def write_report(path: PathLike, report: Report) -> None:
    """Write ``report`` as JSON atomically (byte-identical for the same inputs)."""
    from ctxbench.core.atomic import atomic_write_json

    atomic_write_json(path, report.to_json())


def render_markdown(report: Report) -> str:
    """The report as Markdown (its notes first), as ``ctxbench eceb render`` writes it."""
    from ctxbench.render.eceb import render_markdown as render
    from ctxbench.render.markdown import with_notes

    return with_notes(report.to_json(), render(report))


def render_html(report: Report, *, report_name: str = "report.json") -> str:
    """The report as one self-contained HTML page, the same bytes as
    ``ctxbench report REPORT_NAME --html`` writes for the report's file."""
    from ctxbench.core.node import Node
    from ctxbench.render.html import render_report_html

    return render_report_html("eceb", Node(report_name, "", report.to_json()))
