"""File-level convenience: read trial files and a preregistration, analyze, write."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxbench.core.atomic import atomic_write_json, path_from
from ctxbench.core.digests import blake3_file
from ctxbench.core.errors import InputError
from ctxbench.core.jsonl import iter_jsonl
from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.prereg import (
    Preregistration,
    default_preregistration,
    load_preregistration,
    with_overrides,
)
from ctxbench.protocols.cef.records import check_trial
from ctxbench.protocols.cef.table import TableBuilder, TrialTable

__all__ = [
    "analyze_files",
    "example_paths",
    "load_settings",
    "read_table",
    "write_report",
]


def example_paths() -> tuple[Path, Path]:
    """The bundled example: (trials.jsonl, prereg.toml) under ``ctxbench/data/examples/cef``.

    The example is a synthetic conformance fixture (deterministic_fixture usage): its
    report shows a passing and a failing condition across two workloads, but no headline.
    """
    from importlib import resources  # only here: 4 ms of every analysis's start-up

    root = Path(str(resources.files("ctxbench").joinpath("data", "examples", "cef")))
    return root / "trials.jsonl", root / "prereg.toml"


def load_settings(prereg_path: str | os.PathLike[str] | None,
                  overrides: Mapping[str, Any] | None = None) -> Preregistration:
    """The preregistration from ``prereg_path`` or the protocol defaults plus ``overrides``.

    Raises :class:`~ctxbench.core.InputError` when ``overrides`` would change a supplied
    preregistration.
    """
    base = load_preregistration(prereg_path) if prereg_path is not None else (
        default_preregistration())
    return with_overrides(base, overrides or {})


def read_table(paths: Sequence[str | os.PathLike[str]], *, baseline: str = "raw") -> TrialTable:
    """Stream the trial files into columns (records are validated, then let go)."""
    builder = TableBuilder()
    count = 0
    for path in paths:
        for item in iter_jsonl(path):
            # The one validator of cef validate; it raises the first error of a record.
            check_trial(item.value, path=item.path, line=item.line, baseline=baseline)
            builder.add_record(item.value, item.path, item.line)
            count += 1
    if count == 0:
        raise InputError(f"{', '.join(str(p) for p in paths)}: expected at least one trial "
                         "record, got none")
    return builder.build()


def analyze_files(trial_paths: Sequence[str | os.PathLike[str]],
                  prereg_path: str | os.PathLike[str] | None = None,
                  overrides: Mapping[str, Any] | None = None, *,
                  command: Sequence[str] | None = None,
                  output: str | os.PathLike[str] | None = None,
                  preregistration: Preregistration | None = None) -> CefReport:
    """Analyze trial JSONL files; return the report model as its JSON holds it (rounded).

    ``preregistration`` is the preregistration model itself, already in memory (a run
    builds it before its first trial): it is used as given, not read back, and
    ``prereg_path`` then only names the file it was written to (recorded with its
    digest); ``overrides`` may not be given with it.

    ``overrides`` (bootstrap_samples, seed, quality_tolerance, confidence_level,
    resampling_unit) apply only without a preregistration. ``command`` is the argv that
    reproduces the analysis, recorded as given (the report's ``reproduce`` line); without
    one the report records no command. File paths are recorded relative to ``output``'s
    folder (the current directory without one), so the report can move with its inputs.
    """
    if not trial_paths:
        raise ValueError("trial_paths: expected at least one file")
    if preregistration is not None and (overrides or prereg_path is None):
        raise ValueError("preregistration: expected the file it is in as prereg_path, and "
                         "no overrides")
    prereg = (preregistration if preregistration is not None
              else load_settings(prereg_path, overrides))
    table = read_table(trial_paths, baseline=prereg.baseline)
    # Paths as the report records them: relative to its folder (the current directory
    # when it goes to stdout), so the report can move and its command runs from there.
    here = None if output is None else Path(output).parent

    def shown(p: str | os.PathLike[str]) -> str:
        return path_from(here, p)

    invocation: dict[str, Any] = {} if command is None else {"command": list(command)}
    invocation.update({
        "trial_files": [{"path": shown(p), "blake3": blake3_file(p)} for p in trial_paths],
        "preregistration_file": (
            {"path": shown(prereg_path), "blake3": blake3_file(prereg_path)}
            if prereg_path is not None else None),
    })
    # Rounded as written, so what is rendered from it is exactly what the file holds.
    return analyze(table, prereg, invocation=invocation).as_written()


def write_report(path: str | os.PathLike[str], report: CefReport) -> None:
    """Write a report atomically (2-space JSON, final newline; byte-identical per input)."""
    atomic_write_json(Path(path), report.to_json())
