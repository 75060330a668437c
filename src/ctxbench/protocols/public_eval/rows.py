"""Read public-eval row files (one matched task run per JSONL line) into columns.

A row is ``{"instance_id": ..., "resolved": true|false, "tokens": N, ...}`` as written
by MARGINAL's public-eval exporter (compat-notes §2), plus ``run`` for repeated paired
runs. Rules (every one raises a located ``file:line: field: expected ..., got ...``):

* ``instance_id`` a non-blank string, ``resolved`` a JSON boolean, ``tokens`` an integer
  >= 0 are required: a missing ``tokens`` is an error, never 0;
* unknown field names are errors (a typo must not silently drop a metric); the fields
  that MARGINAL's exporter writes but ctxbench does not use (:data:`IGNORED_FIELDS`,
  ``applied_denies``) are checked for their type and listed in the report's ``inputs``
  as read and ignored;
* integers reject booleans and floats, numbers reject booleans and strings, nothing is
  coerced; integers are at most 2^53 - 1, ``usd`` and ``governance_usd`` at most
  :data:`MAX_USD` (9e9 USD, below 2^53 - 1 micro-USD), the latencies at most 2^53 - 1 ms;
* ``false_stops <= reviewed_stops``; the token breakdown adds up (see
  :func:`_check_breakdown`); ``usd_measured: true`` needs a ``usd``.

An optional metric that is absent is *not measured* for that row (never 0); USD with
``usd_measured: false`` (``usd`` and ``governance_usd``) is not measured either. Both are
stored as NaN in the columns.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.fields import Fields
from ctxbench.core.jsonl import JsonLine, iter_jsonl_lines, lines_of, whole_file_values

__all__ = [
    "ALLOWED_FIELDS",
    "BREAKDOWN_FIELDS",
    "GOVERNANCE_FIELDS",
    "IGNORED_FIELDS",
    "INTEGER_FIELDS",
    "MAX_INTEGER",
    "MAX_USD",
    "METRIC_FIELDS",
    "NUMBER_FIELDS",
    "REQUIRED_FIELDS",
    "RowTable",
    "check_row",
    "read_rows",
    "rows_from_lines",
]

MAX_INTEGER = 2**53 - 1
"""Largest integer accepted: every count must be exact in JSON and in float64 sums."""
MAX_USD = 9_000_000_000
"""Largest USD amount accepted: as integer micro-USD, the money unit of ctxbench, it stays
below ``MAX_INTEGER`` (``MAX_USD * MICRO_PER_USD`` is 9e15), and sums and squares of such
amounts over any number of rows stay finite in float64."""

REQUIRED_FIELDS = ("instance_id", "resolved", "tokens")
BREAKDOWN_PARTS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")
BREAKDOWN_FIELDS = (*BREAKDOWN_PARTS, "total_tokens")
GOVERNANCE_FIELDS = ("repeated_calls", "governance_tokens", "governance_usd",
                     "governance_latency_ms", "reviewed_stops", "false_stops")
INTEGER_FIELDS = ("run", "tool_calls", "repeated_calls", "governance_tokens",
                  "reviewed_stops", "false_stops", "applied_denies",
                  *BREAKDOWN_FIELDS)
NUMBER_FIELDS = ("usd", "latency_ms", "governance_usd", "governance_latency_ms")
METRIC_FIELDS = ("usd", "latency_ms", "tool_calls", *GOVERNANCE_FIELDS, *BREAKDOWN_FIELDS)
"""Optional per-row metrics kept as float columns (NaN = not measured)."""

IGNORED_FIELDS = ("applied_denies",)
"""Written by MARGINAL's exporter (benchmark/codex_adapter/evidence.py, the governor's
applied deny decisions per run) and kept by its merge_results.py; read, type-checked
(an integer >= 0), not used by any statistic."""

ALLOWED_FIELDS = frozenset((*REQUIRED_FIELDS, "run", "usd_measured", *METRIC_FIELDS,
                            *IGNORED_FIELDS))
# Sorted once; check_row checks the optional fields in this order.
_INTEGER_SORTED = tuple(sorted(INTEGER_FIELDS))
_NUMBER_SORTED = tuple(sorted(NUMBER_FIELDS))
# Amounts of money up to MAX_USD; durations in milliseconds up to MAX_INTEGER.
_NUMBER_MAXIMUM: dict[str, float] = {
    "usd": MAX_USD, "governance_usd": MAX_USD,
    "latency_ms": MAX_INTEGER, "governance_latency_ms": MAX_INTEGER,
}
_SIMPLE_KEYS = frozenset({"instance_id", "resolved", "tokens", "run", "usd", "latency_ms",
                          "tool_calls"})


@dataclass(frozen=True, slots=True)
class RowTable:
    """The rows of one file as columns, in file order.

    ``metrics[name]`` is a float64 column with NaN where the row did not measure it;
    ``usd`` and ``governance_usd`` are NaN also where the row said ``usd_measured: false``
    (``usd_unmeasured`` counts those rows): MARGINAL's flag covers every dollar of the
    row, so a ``governance_usd`` written beside it is unknown too.
    """

    path: str
    instance_id: NDArray[np.object_]
    """Python ``str`` objects: a fixed-width numpy string would drop trailing NUL characters."""
    run: NDArray[np.int64]
    line: NDArray[np.int64]
    resolved: NDArray[np.bool_]
    tokens: NDArray[np.float64]
    metrics: Mapping[str, NDArray[np.float64]]
    usd_unmeasured: int
    ignored_fields: tuple[str, ...] = ()
    """Fields of :data:`IGNORED_FIELDS` that some row of the file carried (sorted)."""

    @property
    def rows(self) -> int:
        return int(self.run.shape[0])


def check_row(value: dict[str, Any], *, path: str, line: int) -> None:
    """Validate one decoded row with every rule; raise the located error of the first break.

    This is the reference implementation of the row rules; :func:`rows_from_lines`
    accepts a row without calling it only when its fast checks prove the row valid.
    """
    f = Fields(value, path=path, line=line)
    f.only(ALLOWED_FIELDS)
    f.req_string("instance_id")
    f.req_bool("resolved")
    f.req_int("tokens", minimum=0, maximum=MAX_INTEGER)
    for name in _INTEGER_SORTED:
        f.integer(name, minimum=0, maximum=MAX_INTEGER, optional=True)
    for name in _NUMBER_SORTED:
        top = _NUMBER_MAXIMUM[name]
        raw = value.get(name)
        if type(raw) is int and raw > top:
            # Checked before Fields.number, which cannot take ints beyond float range.
            f.fail(name, f"a number in [0, {top}]", raw)
        f.number(name, minimum=0, maximum=top, optional=True)
    if f.boolean("usd_measured", optional=True) and not f.has("usd"):
        f.fail("usd", "a number >= 0 (the row says usd_measured is true)")
    if f.has("false_stops"):
        if not f.has("reviewed_stops"):
            f.fail("reviewed_stops", "a required field when false_stops is given")
        if value["false_stops"] > value["reviewed_stops"]:
            f.fail("false_stops", f"an integer <= reviewed_stops ({value['reviewed_stops']})",
                   value["false_stops"])
    _check_breakdown(f, value)


def _check_breakdown(f: Fields, value: dict[str, Any]) -> None:
    """TokenUsage v2: total_tokens = sum of the four parts = tokens; parts never exceed tokens."""
    tokens = value["tokens"]
    present = [name for name in BREAKDOWN_PARTS if name in value]
    parts = sum(value[name] for name in present)
    if "total_tokens" in value:
        for name in BREAKDOWN_PARTS:
            if name not in value:
                f.fail(name, "a required field when total_tokens is given")
        if value["total_tokens"] != parts:
            f.fail("total_tokens", "the sum of input_tokens, cached_input_tokens, "
                   f"output_tokens and reasoning_tokens ({parts})", value["total_tokens"])
        if tokens != parts:
            f.fail("tokens", f"total_tokens ({parts})", tokens)
    elif len(present) == len(BREAKDOWN_PARTS):
        if tokens != parts:
            f.fail("tokens", f"the sum of the token breakdown ({parts})", tokens)
    elif parts > tokens:
        f.fail("tokens", f"at least the sum of the given token breakdown fields ({parts})",
               tokens)


# The optional fields of the common row shape (the _SIMPLE_KEYS beyond the required
# ones): the kinds accepted and the largest value, as check_row has them. _fast_ok and
# _simple_columns both read this one table.
_SIMPLE_OPTIONAL: tuple[tuple[str, frozenset[type], float], ...] = (
    ("run", frozenset((int,)), MAX_INTEGER),
    ("tool_calls", frozenset((int,)), MAX_INTEGER),
    ("usd", frozenset((int, float)), _NUMBER_MAXIMUM["usd"]),
    ("latency_ms", frozenset((int, float)), _NUMBER_MAXIMUM["latency_ms"]),
)


def _fast_ok(value: dict[str, Any]) -> bool:
    """True only if the row certainly passes :func:`check_row` (common shapes only)."""
    if not _SIMPLE_KEYS.issuperset(value):
        return False
    iid = value.get("instance_id")
    tokens = value.get("tokens")
    if (type(iid) is not str or not iid.strip() or type(value.get("resolved")) is not bool
            or type(tokens) is not int or not 0 <= tokens <= MAX_INTEGER):
        return False
    for key, kinds, top in _SIMPLE_OPTIONAL:
        if key in value:
            item = value[key]
            if type(item) not in kinds or not 0 <= item <= top:
                return False
    return True


def rows_from_lines(lines: Iterable[JsonLine], *, path: str) -> RowTable:
    """Validate decoded lines and build the columns (see :class:`RowTable`)."""
    nan = math.nan
    ids: list[str] = []
    runs: list[int] = []
    numbers: list[int] = []
    resolved: list[bool] = []
    tokens: list[int] = []
    usd: list[float] = []
    latency: list[float] = []
    tools: list[float] = []
    usd_measured_false: list[int] = []
    ignored: set[str] = set()
    # Rare fields (governance, breakdown) as (row, value) pairs; the common ones as lists.
    rare: dict[str, list[tuple[int, float]]] = {
        name: [] for name in METRIC_FIELDS if name not in ("usd", "latency_ms", "tool_calls")}
    index = 0
    for item in lines:
        value = item.value
        if not _fast_ok(value):
            check_row(value, path=item.path, line=item.line)
            for name, entries in rare.items():
                if name in value:
                    entries.append((index, value[name]))
            if value.get("usd_measured") is False:
                usd_measured_false.append(index)
            ignored.update(name for name in IGNORED_FIELDS if name in value)
        get = value.get
        ids.append(value["instance_id"])
        runs.append(get("run", 0))
        numbers.append(item.line)
        resolved.append(value["resolved"])
        tokens.append(value["tokens"])
        usd.append(get("usd", nan))
        latency.append(get("latency_ms", nan))
        tools.append(get("tool_calls", nan))
        index += 1
    metrics = {name: _column(entries, index) for name, entries in rare.items()}
    metrics["usd"] = np.asarray(usd, dtype=np.float64)
    metrics["latency_ms"] = np.asarray(latency, dtype=np.float64)
    metrics["tool_calls"] = np.asarray(tools, dtype=np.float64)
    if usd_measured_false:
        unmeasured = np.asarray(usd_measured_false, dtype=np.int64)
        metrics["usd"][unmeasured] = np.nan
        metrics["governance_usd"][unmeasured] = np.nan
    return RowTable(
        path=path,
        instance_id=np.asarray(ids, dtype=object),
        run=np.asarray(runs, dtype=np.int64),
        line=np.asarray(numbers, dtype=np.int64),
        resolved=np.asarray(resolved, dtype=np.bool_),
        tokens=np.asarray(tokens, dtype=np.float64),
        metrics={name: metrics[name] for name in METRIC_FIELDS},
        usd_unmeasured=len(usd_measured_false),
        ignored_fields=tuple(sorted(ignored)),
    )


def _column(entries: list[tuple[int, float]], rows: int) -> NDArray[np.float64]:
    out = np.full(rows, np.nan, dtype=np.float64)
    if entries:
        where = np.fromiter((i for i, _ in entries), dtype=np.int64, count=len(entries))
        out[where] = np.fromiter((v for _, v in entries), dtype=np.float64, count=len(entries))
    return out


def read_rows(path: str | os.PathLike[str], *, display: str | None = None) -> RowTable:
    """Read and validate one public-eval JSONL row file (raises at the first bad line)."""
    shown = display if display is not None else str(path)
    values = whole_file_values(path, display=shown)
    if values is None:
        return rows_from_lines(iter_jsonl_lines(path, display=shown), path=shown)
    table = _simple_columns(values, path=shown)
    if table is not None:
        return table
    return rows_from_lines(lines_of(values, shown), path=shown)


_ABSENT = object()


def _simple_columns(values: list[dict[str, Any]], *, path: str) -> RowTable | None:
    """The table of a whole file whose every row passes :func:`_fast_ok`, built a column
    at a time in C loops; None unless every row certainly does (then
    :func:`rows_from_lines` checks row by row and locates the first error)."""
    names = set().union(*values)
    if not values or not _SIMPLE_KEYS.issuperset(names) or not names.issuperset(REQUIRED_FIELDS):
        return None
    rows = len(values)
    given: dict[str, tuple[Any, ...] | list[Any]]
    if sum(map(len, values)) == len(names) * rows:
        # Every row has every name (the usual file): one pass takes all the columns.
        order = sorted(names)
        given = dict(zip(order, zip(*map(itemgetter(*order), values), strict=True),
                         strict=True))
    else:
        given = {name: list(map(methodcaller("get", name, _ABSENT), values)) for name in names}
        if any(_ABSENT in given[name] for name in REQUIRED_FIELDS):
            return None
    ids, resolved, tokens = (given[name] for name in REQUIRED_FIELDS)
    if (set(map(type, ids)) != {str} or not all(map(str.strip, ids))
            or set(map(type, resolved)) != {bool} or not _integers(tokens)):
        return None
    columns: dict[str, NDArray[np.float64]] = {}
    for name, kinds, top in _SIMPLE_OPTIONAL:
        if name not in given:
            continue
        column = given[name]
        if not kinds.issuperset(set(map(type, column)) - {object}):
            return None
        floats = np.asarray([math.nan if item is _ABSENT else item for item in column]
                            if _ABSENT in column else column, dtype=np.float64)
        if not (np.nanmin(floats, initial=0.0) >= 0.0 and np.nanmax(floats, initial=0.0) <= top):
            return None
        columns[name] = floats
    # A row without "run" is run 0, as rows_from_lines reads it; every run given is an
    # int of at most 2^53 - 1, so the float column holds it exactly.
    run = columns.pop("run", np.zeros(rows))
    metrics = {name: columns.get(name, np.full(rows, np.nan)) for name in METRIC_FIELDS}
    return RowTable(
        path=path,
        instance_id=np.asarray(ids, dtype=object),
        run=np.nan_to_num(run, nan=0.0).astype(np.int64),
        line=np.arange(1, rows + 1, dtype=np.int64),
        resolved=np.asarray(resolved, dtype=np.bool_),
        tokens=np.asarray(tokens, dtype=np.float64),
        metrics=metrics,
        usd_unmeasured=0,
    )


def _integers(column: Sequence[Any]) -> bool:
    """Every item an int (not a bool) in [0, MAX_INTEGER]."""
    return set(map(type, column)) == {int} and min(column) >= 0 and max(column) <= MAX_INTEGER
