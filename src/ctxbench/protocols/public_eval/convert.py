"""Turn CEF trial records into the two public-eval row files, so one run reads both ways.

Mapping (one row per trial of the chosen baseline or treatment condition):

* ``instance_id`` = ``task_id`` when all those trials share workload, workload_version,
  provider, model and scorer; otherwise the six joined as
  ``workload / workload_version / provider / model / scorer / task_id``;
* ``run`` = ``replicate``;
* ``resolved`` = ``outcome == "success"`` and ``task_score >= resolved_threshold``
  (failed trials stay in the sample, unresolved);
* ``tokens`` = ``context_tokens + output_tokens + reasoning_tokens``;
* ``usd`` = ``billed_cost_usd``, with ``usd_measured: false`` for ``zero_cost_fixture``;
* ``latency_ms`` rounded to whole milliseconds (an integer, as MARGINAL requires); the
  token breakdown (``output_tokens``, ``reasoning_tokens``, and,
  when the trial reports ``cached_input_tokens``, ``input_tokens`` = context - cached,
  ``cached_input_tokens`` and ``total_tokens``).

The rows are checked with the public-eval row and pairing rules before anything is
written, so a converted pair of files always loads.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxbench.core.atomic import atomic_write_bytes
from ctxbench.core.errors import SettingError
from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.cef.records import Trial, read_trials
from ctxbench.protocols.public_eval.pairing import pair_rows
from ctxbench.protocols.public_eval.rows import rows_from_lines

__all__ = ["STRATUM_FIELDS", "convert_cef", "trial_row", "trials_to_rows"]

STRATUM_FIELDS = ("workload", "workload_version", "provider", "model", "scorer")


def _whole_ms(value: float) -> int:
    """Latency as whole milliseconds (MARGINAL's rows require an integer), half to even."""
    return round(value)


def trial_row(trial: Trial, instance_id: str, resolved_threshold: float) -> dict[str, Any]:
    """The public-eval row of one trial (see the module docstring for the mapping)."""
    tokens = trial.context_tokens + trial.output_tokens + trial.reasoning_tokens
    row: dict[str, Any] = {
        "instance_id": instance_id,
        "run": trial.replicate,
        "resolved": trial.outcome == "success" and trial.task_score >= resolved_threshold,
        "tokens": tokens,
        "usd": trial.billed_cost_usd,
        "usd_measured": trial.cost_source != "zero_cost_fixture",
        "latency_ms": _whole_ms(trial.latency_ms),
    }
    if trial.cached_input_tokens is not None:
        row["input_tokens"] = trial.context_tokens - trial.cached_input_tokens
        row["cached_input_tokens"] = trial.cached_input_tokens
    row["output_tokens"] = trial.output_tokens
    row["reasoning_tokens"] = trial.reasoning_tokens
    if trial.cached_input_tokens is not None:
        row["total_tokens"] = tokens
    return row


def trials_to_rows(trials: Sequence[Trial], *, baseline: str, treatment: str,
                   resolved_threshold: float = 1.0,
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Baseline and treatment rows, each sorted by (instance_id, run), checked as pairable."""
    if isinstance(resolved_threshold, bool) or not isinstance(resolved_threshold, int | float) \
            or not math.isfinite(resolved_threshold) or not 0.0 <= resolved_threshold <= 1.0:
        raise SettingError("resolved_threshold",
                           f"expected a number in [0, 1], got {resolved_threshold!r}")
    if baseline == treatment:
        raise SettingError("treatment", f"expected a condition other than the baseline, "
                                        f"got {treatment!r}")
    chosen = [t for t in trials if t.condition in (baseline, treatment)]
    found = sorted({t.condition for t in trials})
    for condition, setting in ((baseline, "baseline"), (treatment, "treatment")):
        if not any(t.condition == condition for t in chosen):
            raise SettingError(setting, f"expected a condition present in the trials "
                                        f"({', '.join(found) or 'none'}), got {condition!r}")
    pooled = any(len({getattr(t, name) for t in chosen}) > 1 for name in STRATUM_FIELDS)
    lines: dict[str, list[JsonLine]] = {baseline: [], treatment: []}
    sources: dict[str, set[str]] = {baseline: set(), treatment: set()}
    for trial in chosen:
        parts = [*(getattr(trial, name) for name in STRATUM_FIELDS), trial.task_id]
        instance_id = " / ".join(parts) if pooled else trial.task_id
        row = trial_row(trial, instance_id, resolved_threshold)
        shown = f"{trial.path} ({trial.condition})"
        lines[trial.condition].append(JsonLine(shown, trial.line, row))
        sources[trial.condition].add(trial.path)
    tables = []
    for condition in (baseline, treatment):
        shown = f"{', '.join(sorted(sources[condition]))} ({condition})"
        tables.append(rows_from_lines(lines[condition], path=shown))
    pair_rows(tables[0], tables[1])
    out = []
    for condition in (baseline, treatment):
        rows = [item.value for item in lines[condition]]
        rows.sort(key=lambda r: (r["instance_id"], r["run"]))
        out.append(rows)
    return out[0], out[1]


def convert_cef(paths: Sequence[str | os.PathLike[str]], *, baseline: str, treatment: str,
                output_dir: str | os.PathLike[str],
                resolved_threshold: float = 1.0) -> tuple[Path, Path]:
    """Read CEF trials and write ``DIR/<baseline>.jsonl`` and ``DIR/<treatment>.jsonl``."""
    trials = read_trials(paths, baseline=baseline)
    rows = trials_to_rows(trials, baseline=baseline, treatment=treatment,
                          resolved_threshold=resolved_threshold)
    written = []
    for condition, condition_rows in zip((baseline, treatment), rows, strict=True):
        target = Path(output_dir) / f"{condition}.jsonl"
        data = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False,
                                  separators=(",", ":")) + "\n" for r in condition_rows)
        atomic_write_bytes(target, data.encode("utf-8"))
        written.append(target)
    return written[0], written[1]
