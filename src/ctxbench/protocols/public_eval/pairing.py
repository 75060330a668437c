"""Pair the baseline and treatment rows by their (instance_id, run) cell.

Each file must hold each cell at most once, and both files exactly the same cells; the
error for a mismatch lists the cells found in one file only (the first 20 of each side
and how many there are). Paired cells come out sorted by (instance_id, run), so the
analysis does not depend on the order of the lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import FieldError, InputError
from ctxbench.protocols.public_eval.rows import RowTable

__all__ = ["SHOWN_CELLS", "Arm", "PairedCells", "pair_rows"]

SHOWN_CELLS = 20


@dataclass(frozen=True, slots=True)
class Arm:
    """One arm's columns, aligned with :attr:`PairedCells.instance` (one entry per cell)."""

    path: str
    resolved: NDArray[np.bool_]
    tokens: NDArray[np.float64]
    metrics: Mapping[str, NDArray[np.float64]]
    usd_unmeasured: int


@dataclass(frozen=True, slots=True)
class PairedCells:
    """Matched cells: ``instance[i]`` indexes ``instance_ids`` (sorted) for cell i."""

    instance_ids: NDArray[np.object_]
    instance: NDArray[np.int64]
    run: NDArray[np.int64]
    baseline: Arm
    treatment: Arm

    @property
    def cells(self) -> int:
        return int(self.instance.shape[0])

    @property
    def tasks(self) -> int:
        return int(self.instance_ids.shape[0])


def pair_rows(baseline: RowTable, treatment: RowTable) -> PairedCells:
    """Match the two files cell by cell; raise a located error for any broken rule."""
    for table in (baseline, treatment):
        if table.rows == 0:
            raise InputError(f"{table.path}: expected at least one row, got an empty file")
    names, codes = _sorted_codes(baseline.instance_id, treatment.instance_id)
    code_b, code_t = codes[: baseline.rows], codes[baseline.rows :]
    order_b = _cell_order(baseline, code_b)
    order_t = _cell_order(treatment, code_t)
    same = (baseline.rows == treatment.rows
            and np.array_equal(code_b[order_b], code_t[order_t])
            and np.array_equal(baseline.run[order_b], treatment.run[order_t]))
    if not same:
        raise _mismatch(baseline, treatment)
    instance = code_b[order_b]
    # Every name occurs in both files here, so the codes are exactly 0..len(names)-1.
    return PairedCells(
        instance_ids=names,
        instance=instance,
        run=baseline.run[order_b],
        baseline=_arm(baseline, order_b),
        treatment=_arm(treatment, order_t),
    )


def _sorted_codes(*columns: NDArray[np.object_]) -> tuple[NDArray[np.object_],
                                                         NDArray[np.int64]]:
    """The sorted distinct ids and each row's index into them (``np.unique``'s answer).

    A dictionary gives each distinct id a first-seen code in one pass; only the distinct
    ids are then sorted (Python's string order, as numpy's object sort), and the codes
    mapped to their ranks. ``np.unique`` on object arrays compares every row's string
    O(log n) times, which at a million rows per file took most of the pairing.
    """
    seen: dict[str, int] = {}
    code = seen.setdefault
    first = np.fromiter((code(x, len(seen)) for column in columns for x in column.tolist()),
                        dtype=np.int64, count=sum(c.shape[0] for c in columns))
    names = sorted(seen)
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.fromiter((seen[x] for x in names), dtype=np.int64, count=len(names))] = (
        np.arange(len(names), dtype=np.int64))
    ordered = np.empty(len(names), dtype=object)
    ordered[:] = names
    return ordered, rank[first]


def _arm(table: RowTable, order: NDArray[np.int64]) -> Arm:
    return Arm(
        path=table.path,
        resolved=table.resolved[order],
        tokens=table.tokens[order],
        metrics={name: column[order] for name, column in table.metrics.items()},
        usd_unmeasured=table.usd_unmeasured,
    )


def _cell_order(table: RowTable, code: NDArray[np.int64]) -> NDArray[np.int64]:
    """Sort order by (instance_id, run); rejects a repeated cell at its later line."""
    order = np.lexsort((table.line, table.run, code)).astype(np.int64)
    sorted_code, sorted_run = code[order], table.run[order]
    repeat = np.flatnonzero((sorted_code[1:] == sorted_code[:-1])
                            & (sorted_run[1:] == sorted_run[:-1]))
    if repeat.shape[0]:
        # Report the repeat whose second occurrence comes first in the file.
        later = table.line[order[repeat + 1]]
        pick = int(repeat[int(np.argmin(later))])
        first, second = order[pick], order[pick + 1]
        raise FieldError(
            table.path, int(table.line[second]), "instance_id",
            "each (instance_id, run) cell at most once",
            got_text=f"{_cell(str(table.instance_id[second]), int(table.run[second]))} "
                     f"again (first on line {int(table.line[first])})",
        )
    return order


def _cell(instance_id: str, run: int) -> str:
    return f"{json.dumps(instance_id, ensure_ascii=False)} run {run}"


def _cells(table: RowTable) -> set[tuple[str, int]]:
    return set(zip(table.instance_id.tolist(), table.run.tolist(), strict=True))


def _mismatch(baseline: RowTable, treatment: RowTable) -> InputError:
    cells_b, cells_t = _cells(baseline), _cells(treatment)
    parts = []
    for table, only in ((baseline, sorted(cells_b - cells_t)),
                        (treatment, sorted(cells_t - cells_b))):
        if not only:
            continue
        shown = ", ".join(_cell(i, r) for i, r in only[:SHOWN_CELLS])
        more = f" and {len(only) - SHOWN_CELLS} more" if len(only) > SHOWN_CELLS else ""
        parts.append(f"{len(only)} only in {table.path}: {shown}{more}")
    return InputError(
        f"{baseline.path}, {treatment.path}: expected the same (instance_id, run) cells in "
        f"both files, got {'; '.join(parts)}"
    )
