"""Pair trials: exclusions, the condition matrix, and one row per task-replicate unit.

The pairing key is (workload, workload_version, task_id, provider, model, replicate,
scorer); a stratum is (provider, model, workload, workload_version, scorer). Every
task-replicate must hold exactly one trial of every condition of the matrix: duplicates
and missing cells are rejected, listing the first 5 (each with the file:line of a
trial of its unit) and a count, rather than comparing
unequal task subsets. Under a preregistered sequential design a candidate condition may
lack units (it stopped at its decision while the others went on; docs/runner.md): its
cells there are -1 in ``Pairing.rows`` and each comparison pairs the units both hold.
The baseline must still be in every unit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError, clip
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.records import ENTROLY_CONDITIONS
from ctxbench.protocols.cef.rules import condition_order_key
from ctxbench.protocols.cef.table import StratumKey, TrialTable

__all__ = ["PAIRING_KEY", "STRATUM_KEY", "ExclusionResult", "Pairing", "pair_trials"]

PAIRING_KEY = ("workload", "workload_version", "task_id", "provider", "model", "replicate",
               "scorer")
STRATUM_KEY = ("provider", "model", "workload", "workload_version", "scorer")
_SHOWN = 5
# Each listed cell quotes ids; one id may be long, so a cell's text is bounded too.
_CELL_CHARS = 300


@dataclass(frozen=True, slots=True)
class ExclusionResult:
    """A preregistered exclusion and how many trials it removed."""

    task_id: str
    workload: str | None
    reason: str
    exclusion_class: str
    trials_removed: int


@dataclass(frozen=True, slots=True)
class Pairing:
    """Units in canonical order (stratum, task_id, replicate) and their trial rows.

    ``rows[u, k]`` is the trial index of condition ``conditions[k]`` in unit ``u`` (-1:
    none, only under a sequential design); column 0 is the baseline. ``unit_stratum``
    and ``unit_task`` give each unit's stratum index (into ``strata``, sorted) and task
    index (canonical, contiguous).
    """

    strata: tuple[StratumKey, ...]
    conditions: tuple[str, ...]
    conditions_inferred: bool
    rows: NDArray[np.int64]
    unit_stratum: NDArray[np.int64]
    unit_task: NDArray[np.int64]
    keep: NDArray[np.bool_]
    exclusions: tuple[ExclusionResult, ...]


def _cell_text(table: TrialTable, task: int, replicate: int, condition: str) -> str:
    provider, model, workload, version, scorer = table.strata[int(table.task_stratum[task])]
    return clip(f"(workload={workload}, workload_version={version}, "
                f"task_id={table.task_ids[task]}, provider={provider}, model={model}, "
                f"replicate={replicate}, scorer={scorer}, condition={condition})", _CELL_CHARS)


def _listing(kind: str, cells: list[str], total: int) -> str:
    more = f"; ... and {total - len(cells)} more" if total > len(cells) else ""
    return f"{total} {kind} cell(s); first {len(cells)}: " + "; ".join(cells) + more


def _matrix(table: TrialTable, prereg: Preregistration,
            present: NDArray[np.bool_]) -> tuple[tuple[str, ...], bool]:
    observed = [table.conditions[i] for i in np.flatnonzero(present)]
    baseline = prereg.baseline
    if prereg.conditions is not None:
        unknown = [c for c in observed if c not in prereg.conditions]
        if unknown:
            at = int(np.flatnonzero(table.condition == table.conditions.index(unknown[0]))[0])
            raise InputError(
                f"{table.where(at)}: condition: expected a condition of the preregistered "
                f"matrix ({', '.join(prereg.conditions)}), got {unknown[0]!r}")
        rest = [c for c in prereg.conditions if c != baseline]
        return (baseline, *rest), False
    if baseline not in observed:
        raise InputError(f"{_files(table)}: expected trials of the baseline condition "
                         f"{baseline!r}, got only {', '.join(sorted(observed)) or 'none'}")
    if all(c in ENTROLY_CONDITIONS for c in observed):
        rest = [c for c in ENTROLY_CONDITIONS if c in observed and c != baseline]
    else:
        rest = sorted((c for c in observed if c != baseline), key=condition_order_key)
    if not rest:
        raise InputError(f"{_files(table)}: expected at least one condition besides the baseline "
                         f"{baseline!r}, got none")
    return (baseline, *rest), True


def _files(table: TrialTable) -> str:
    """The trial files, for an error about all of them (not one line)."""
    return clip(", ".join(table.files) or "trials", 300)


def _apply_exclusions(table: TrialTable,
                      prereg: Preregistration) -> tuple[NDArray[np.bool_], list[ExclusionResult]]:
    n_tasks = len(table.task_ids)
    excluded_task = np.zeros(n_tasks, dtype=bool)
    task_counts = np.bincount(table.task, minlength=n_tasks)
    results = []
    if prereg.exclusions:
        by_id: dict[str, list[int]] = {}
        for code, task_id in enumerate(table.task_ids):
            by_id.setdefault(task_id, []).append(code)
        for ex in prereg.exclusions:
            removed = 0
            for code in by_id.get(ex.task_id, []):
                workload = table.strata[int(table.task_stratum[code])][2]
                if ex.workload is not None and ex.workload != workload:
                    continue
                if not excluded_task[code]:
                    removed += int(task_counts[code])
                excluded_task[code] = True
            results.append(ExclusionResult(ex.task_id, ex.workload, ex.reason,
                                           ex.exclusion_class, removed))
    return ~excluded_task[table.task], results


def pair_trials(table: TrialTable, prereg: Preregistration) -> Pairing:
    """Apply exclusions, check the condition matrix, and return the paired units."""
    if len(table) == 0:
        raise InputError("trials: expected at least one trial record, got none")
    keep, exclusions = _apply_exclusions(table, prereg)
    if not keep.any():
        raise InputError(f"{_files(table)}: every trial was excluded by the preregistration")
    present = np.bincount(table.condition[keep], minlength=len(table.conditions)) > 0
    conditions, inferred = _matrix(table, prereg, present)
    n_cond = len(conditions)
    # Map table condition codes to matrix columns (-1: not in matrix, impossible here).
    column = np.full(len(table.conditions), -1, dtype=np.int64)
    for k, name in enumerate(conditions):
        if name in table.conditions:
            column[table.conditions.index(name)] = k

    idx = np.flatnonzero(keep)
    cond_col = column[table.condition[idx]]
    base_commit = idx[(cond_col == 0) & table.has_commit[idx]]
    if base_commit.shape[0]:
        first = int(base_commit[0])
        raise InputError(
            f"{table.where(first)}: context_commit_id: expected null for the baseline "
            f"condition {prereg.baseline} (baseline trials carry no Context Commit ID), got "
            f"a commit id ({base_commit.shape[0]} baseline trial(s) carry one)")

    # Canonical task order: by stratum key, then task_id (independent of file order).
    stratum_order = sorted(range(len(table.strata)), key=lambda s: table.strata[s])
    stratum_rank = np.empty(len(table.strata), dtype=np.int64)
    stratum_rank[stratum_order] = np.arange(len(table.strata))
    task_key = sorted(range(len(table.task_ids)),
                      key=lambda t: (int(stratum_rank[table.task_stratum[t]]), table.task_ids[t]))
    task_rank = np.empty(len(table.task_ids), dtype=np.int64)
    task_rank[task_key] = np.arange(len(table.task_ids))

    task = task_rank[table.task[idx]]
    rep = table.replicate[idx]
    order = np.lexsort((cond_col, rep, task))
    task, rep, cond_col, idx = task[order], rep[order], cond_col[order], idx[order]
    new_unit = np.ones(idx.shape[0], dtype=bool)
    new_unit[1:] = (task[1:] != task[:-1]) | (rep[1:] != rep[:-1])
    unit = np.cumsum(new_unit) - 1
    n_units = int(unit[-1]) + 1
    cell = unit * n_cond + cond_col
    counts = np.bincount(cell, minlength=n_units * n_cond).reshape(n_units, n_cond)
    unit_first = np.flatnonzero(new_unit)
    inv_task = np.asarray(task_key, dtype=np.int64)

    def describe(cells: NDArray[np.int64], duplicated: bool) -> tuple[str, list[str]]:
        # Each cell is named with the file:line of a trial of its unit: for a duplicate
        # the second trial of the cell, for a missing cell the unit's first trial.
        out, places = [], []
        for c in cells[:_SHOWN]:
            u, k = divmod(int(c), n_cond)
            first = unit_first[u]
            at = int(np.flatnonzero(cell == c)[1]) if duplicated else int(first)
            place = table.where(int(idx[at]))
            places.append(place)
            out.append(_cell_text(table, int(inv_task[task[first]]), int(rep[first]),
                                  conditions[k]) + f" at {place}")
        return places[0], out

    dup = np.flatnonzero(counts.ravel() > 1)
    if dup.shape[0]:
        place, cells = describe(dup, True)
        raise InputError(f"{place}: duplicate trials for a pairing key and condition: "
                         + _listing("duplicated", cells, int(dup.shape[0])))
    absent = counts == 0
    if prereg.sequential is not None:
        # A condition stopped at its sequential decision lacks the later tasks; each
        # comparison pairs the units it holds (rows -1). The baseline is in every unit.
        absent[:, 1:] = False
    missing = np.flatnonzero(absent.ravel())
    if missing.shape[0]:
        place, cells = describe(missing, False)
        raise InputError(f"{place}: incomplete condition matrix (every task-replicate must "
                         f"hold {', '.join(conditions)}): "
                         + _listing("missing", cells, int(missing.shape[0])))
    rows = np.full((n_units, n_cond), -1, dtype=np.int64)
    rows[unit, cond_col] = idx
    unit_task = task[unit_first]
    unit_stratum_code = table.task_stratum[inv_task[unit_task]]
    unit_stratum = stratum_rank[unit_stratum_code]
    if prereg.replicates is not None:
        per_task = np.bincount(unit_task)
        bad = np.flatnonzero((per_task != prereg.replicates) & (per_task > 0))
        if bad.shape[0]:
            t = int(inv_task[bad[0]])
            provider, model, workload, _version, _scorer = table.strata[int(table.task_stratum[t])]
            at = int(np.flatnonzero(table.task == t)[0])
            raise InputError(
                f"{table.where(at)}: expected {prereg.replicates} replicate(s) per task as "
                "preregistered, "
                f"got {int(per_task[bad[0]])} for task_id={table.task_ids[t]} "
                f"(workload={workload}, provider={provider}, model={model}) and "
                f"{bad.shape[0] - 1} other task(s)")
    return Pairing(
        strata=tuple(table.strata[s] for s in stratum_order),
        conditions=conditions,
        conditions_inferred=inferred,
        rows=rows,
        unit_stratum=unit_stratum,
        unit_task=unit_task,
        keep=keep,
        exclusions=tuple(exclusions),
    )
