"""Sequential designs read from a file, and the sequential analysis of trial files.

``load_design(path)`` reads the ``sequential`` table of a TOML or JSON file (a
preregistration, or a file holding only that table); ``sequential_files(...)`` reads
the trial files in the order given (their run order) and returns every look of the
design (:func:`ctxbench.protocols.cef.sequential.analyze_sequential`). A design given
beside a preregistration that declares its own must be that design: the preregistered
one cannot be replaced after the data are seen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxbench.core.errors import InputError
from ctxbench.core.fields import Fields
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign, parse_sequential
from ctxbench.protocols.cef.sequential import SequentialResult, analyze_sequential

__all__ = ["load_design", "sequential_files", "summary_lines"]


def load_design(path: str | os.PathLike[str]) -> SequentialDesign:
    """The ``sequential`` table of a ``.toml`` or ``.json`` file."""
    shown = str(path)
    suffix = Path(path).suffix.lower()
    if suffix == ".toml":
        document, lines = load_toml_lines(path)
        with lines.locating(shown):
            return _table(document, shown)
    if suffix == ".json":
        return _table(load_json_document(path), shown)
    raise InputError(f"{shown}: expected a .toml or .json file holding a [sequential] table, "
                     f"got {suffix!r}")


def _table(document: Any, shown: str) -> SequentialDesign:
    if not isinstance(document, dict) or not isinstance(document.get("sequential"), dict):
        raise InputError(f"{shown}: sequential: expected a [sequential] table "
                         "(docs/statistics.md, Sequential designs), got none")
    # Located as in the preregistration: /sequential/<key>.
    design = parse_sequential(Fields({"sequential": document["sequential"]}, path=shown,
                                     pointer=""))
    assert design is not None
    return design


def sequential_files(trial_paths: Sequence[str | os.PathLike[str]],
                     prereg_path: str | os.PathLike[str] | None,
                     design_path: str | os.PathLike[str] | None,
                     overrides: Mapping[str, Any] | None = None) -> SequentialResult:
    """Every look of the design over the trial files, read in the order given."""
    from ctxbench.protocols.cef.api import load_settings, read_table

    prereg = load_settings(prereg_path, overrides)
    design = prereg.sequential
    if design_path is not None:
        given = load_design(design_path)
        if design is not None and given != design:
            raise InputError(f"{design_path}: sequential: expected the preregistration's own "
                             f"design {design.as_dict()} (a preregistered design cannot be "
                             f"replaced), got {given.as_dict()}")
        design = given
    table = read_table(trial_paths, baseline=prereg.baseline)
    return analyze_sequential(table, prereg, design=design)


def summary_lines(result: SequentialResult) -> list[str]:
    """One line per condition and look: tasks, each gate's decision, the claim."""
    d = result.design
    out = [f"sequential design: {d.method}, looks at {', '.join(map(str, d.looks))} tasks "
           f"(max {d.max_tasks}), futility {'on' if d.futility else 'off'}; "
           f"{result.tasks_available} tasks in run order"]
    for c in result.conditions:
        for k, row in enumerate(c.looks):
            gates = ", ".join(f"{h} {dec.replace('_', ' ')}" for h, (_, dec) in row.items())
            out.append(f"  {c.condition} look {k + 1} ({row['H1'][0].tasks} tasks): {gates} "
                       f"-> {c.decisions[k].replace('_', ' ')}")
        if c.decision == "continue":
            out.append(f"  {c.condition}: not decided by the tasks available")
        else:
            out.append(f"  {c.condition}: {c.decision.replace('_', ' ')} at "
                       f"{c.looks[-1]['H1'][0].tasks} tasks")
    doc = result.as_json()
    if result.stopped_at is not None:
        out.append(f"stopped at {result.stopped_at} of {d.max_tasks} tasks: "
                   f"{doc['trials_saved']} of {doc['trials_at_max']} trials and "
                   f"{doc['cost_saved_usd']:.6f} USD saved against running the maximum")
    return out
