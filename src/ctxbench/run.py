"""Run a paired experiment from its spec, and resume it, as a library.

    import ctxbench.run

    spec = ctxbench.run.read_spec("experiment.toml")    # validated; errors name the line
    summary = ctxbench.run.run(spec)                    # trials, then every report
    summary.reports["cef-report.json"], summary.verdicts
    ctxbench.run.resume("experiment.toml")             # recorded trials are skipped

A run writes its append-only ``trials.jsonl`` and its reports under the spec's
``output``; :func:`resume` continues it and never sends a recorded trial again. An
error after the first trial raises :class:`RunStopped`, whose message says how to
resume. This module holds no logic of its own; it calls :mod:`ctxbench.runner`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from pathlib import Path

    from ctxbench.runner.experiment import RunStopped, RunSummary
    from ctxbench.runner.spec import ExperimentSpec

__all__ = [
    "ExperimentSpec",
    "RunStopped",
    "RunSummary",
    "example_spec",
    "read_spec",
    "resume",
    "run",
]

_WHERE = {
    "ExperimentSpec": "ctxbench.runner.spec",
    "RunStopped": "ctxbench.runner.experiment",
    "RunSummary": "ctxbench.runner.experiment",
}
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

PathLike = str | os.PathLike[str]


def example_spec(name: str = "enterprise-seed-fixture") -> Path:
    """A bundled experiment spec (``ctxbench/data/examples/experiments/NAME.toml``); the
    default runs the embedded seed on the deterministic fixture reader, offline."""
    from importlib import resources
    from pathlib import Path

    from ctxbench.core.errors import InputError

    root = Path(str(resources.files("ctxbench").joinpath("data", "examples", "experiments")))
    path = root / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in root.glob("*.toml")))
        raise InputError(f"example spec: expected one of {known}, got {name!r}")
    return path


def read_spec(path: PathLike) -> ExperimentSpec:
    """Load and validate an experiment spec TOML file; every error names its line."""
    from ctxbench.runner.spec import load_spec

    return load_spec(path)


def run(spec: PathLike | ExperimentSpec, *, resume: bool = False,
        show_progress: bool = False) -> RunSummary:
    """Run ``spec`` (a path or a spec read by :func:`read_spec`) and write its reports.

    Refuses an output directory that holds an unrelated run or that another run is
    writing now; Ctrl-C returns an ``interrupted`` summary with the resume command.
    """
    from ctxbench.runner.experiment import run_experiment, run_loaded
    from ctxbench.runner.spec import ExperimentSpec

    if isinstance(spec, ExperimentSpec):
        return run_loaded(spec, resume=resume, show_progress=show_progress)
    return run_experiment(spec, resume=resume, show_progress=show_progress)


def resume(spec: PathLike | ExperimentSpec, *, show_progress: bool = False) -> RunSummary:
    """Continue the run of ``spec``: recorded trials are skipped, the rest are run, and
    the reports are written from the whole trial log."""
    return run(spec, resume=True, show_progress=show_progress)
