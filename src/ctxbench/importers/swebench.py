"""SWE-bench harness run reports + a usage JSONL -> samples (public-eval rows).

The report is the one ``swebench.harness.run_evaluation`` writes at the end of a run
(``swebench/harness/reporting.py``, ``make_run_report``:
``<model_name_or_path>.<run_id>.json``). ctxbench reads its id lists as that function fills them:

* ``submitted_ids``: every id of the predictions file (``predictions.keys()``), whether or
  not the run evaluated it;
* ``resolved_ids``: resolved;
* ``unresolved_ids``, ``empty_patch_ids``, ``error_ids``: not resolved (an empty patch or
  a harness error stays in the sample as a failure, as the public-eval protocol asks).

``make_run_report`` walks the run's dataset (with ``--instance_ids``, only those ids) and
puts every instance of it that has a prediction in exactly one of the four outcome lists.
So the arm's tasks are the ids in an outcome list; a submitted id in none of them was
outside the run (a subset run's predictions file holds more than the subset) and is not
a task. ``incomplete_ids`` (dataset instances without a prediction) are not tasks either.

Tokens are not in the report; they come from a usage JSONL (:mod:`ctxbench.importers.usage`)
with one line per evaluated instance (lines for submitted instances outside the run are
allowed and not read). An evaluated instance without usage, usage for an instance the
report did not submit, or an outcome for an instance it did not submit is an error.
"""

from __future__ import annotations

import os
from typing import Any

from ctxbench.core import InputError, PointerError, load_json_document
from ctxbench.importers.common import Sample
from ctxbench.importers.usage import UsageRecord, read_usage

__all__ = ["REPORT_LISTS", "read_swebench_arm"]

REPORT_LISTS = ("submitted_ids", "resolved_ids", "unresolved_ids", "empty_patch_ids",
                "error_ids")


def _lists(path: str) -> dict[str, list[str]]:
    doc: Any = load_json_document(path)
    if not isinstance(doc, dict):
        raise PointerError(path, "/", "expected a SWE-bench run report object, got "
                           f"{type(doc).__name__}")
    lists: dict[str, list[str]] = {}
    for key in REPORT_LISTS:
        value = doc.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            got = "nothing (the field is missing)" if key not in doc else type(value).__name__
            raise PointerError(path, f"/{key}", "expected an array of instance id strings "
                               f"(a SWE-bench run report), got {got}")
        lists[key] = value
    if "schema_version" in doc and doc["schema_version"] not in (1, 2):
        raise PointerError(path, "/schema_version", "expected 2 (or 1), got "
                           f"{doc['schema_version']!r}")
    return lists


def read_swebench_arm(report: str | os.PathLike[str], usage: str | os.PathLike[str]
                      ) -> tuple[Sample, ...]:
    """One arm: its report's submitted instances, joined with their usage lines."""
    path = str(report)
    lists = _lists(path)
    submitted = lists["submitted_ids"]
    outcome: dict[str, str] = {}
    for key in ("resolved_ids", "unresolved_ids", "empty_patch_ids", "error_ids"):
        for iid in lists[key]:
            if iid in outcome:
                raise PointerError(path, f"/{key}", f"expected each instance in one outcome "
                                   f"list, got {iid!r} also in {outcome[iid]}")
            outcome[iid] = key
    unknown = sorted(set(outcome) - set(submitted))
    if unknown:
        raise PointerError(path, "/submitted_ids", f"expected every classified instance, "
                           f"got none for {unknown[0]!r} ({len(unknown)} missing)")
    records = read_usage(usage)
    by_id: dict[str, list[UsageRecord]] = {}
    for record in records.values():
        by_id.setdefault(record.instance_id, []).append(record)
    samples = []
    for iid in submitted:
        where = f"{path}: instance {iid!r}"
        if iid not in outcome:
            continue  # submitted but outside the run's dataset (a subset run)
        used = by_id.get(iid, [])
        if not used:
            raise InputError(f"{usage}: instance_id: expected usage for {iid!r} (submitted in "
                             f"{path}), got none")
        if len(used) != 1 or used[0].run != 0:
            raise InputError(f"{used[0].where}: run: expected one run (0) per instance of a "
                             f"SWE-bench report, got {len(used)} line(s)")
        record = used[0]
        samples.append(Sample(
            instance_id=iid, run=0, where=where, failed=False, error_type=None,
            score=1.0 if outcome[iid] == "resolved_ids" else 0.0,
            resolved=outcome[iid] == "resolved_ids", usage=record.usage, usd=record.usd,
            latency_ms=record.latency_ms, request_id=record.request_id, response_text=None,
            context_sha256=None, tool_calls=record.tool_calls,
        ))
    known = set(submitted)
    extra = sorted(iid for iid in by_id if iid not in known)
    if extra:
        first = by_id[extra[0]][0]
        raise InputError(f"{first.where}: instance_id: expected an instance submitted in "
                         f"{path}, got {extra[0]!r} ({len(extra)} unmatched)")
    return tuple(samples)
