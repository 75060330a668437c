"""ctxbench: does a context-control system send the model less context without losing quality?

    import ctxbench
    report = ctxbench.read_report("run/cef-report.json")   # any report ctxbench writes
    ctxbench.write_html(["run/"], "run/report.html")        # reports or runs, one page

The library's face is five modules with the same verbs where they apply (read inputs,
analyze, read a report back, render it): :mod:`ctxbench.cef`, :mod:`ctxbench.public_eval`,
:mod:`ctxbench.eceb`, :mod:`ctxbench.run` (run and resume an experiment) and
:mod:`ctxbench.compile` (packets, commits, evidence evaluation); ``docs/library.md``
shows each. Importing ``ctxbench`` imports none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence
    from pathlib import Path

    from ctxbench.report_reader import read_report

__version__ = "0.1.0"

__all__ = ["__version__", "read_report", "write_html"]

__getattr__, __dir__ = lazy_attributes(__name__, {"read_report": "ctxbench.report_reader"},
                                       __all__)


def write_html(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str]) -> Path:
    """Write one self-contained HTML page of report files or run directories to ``out``
    (several give a side-by-side page), as ``ctxbench report PATH... --html OUT``."""
    from pathlib import Path

    from ctxbench.render.html import write_html as write

    return write([Path(p) for p in paths], Path(out))
