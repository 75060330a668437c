"""Trials as columns: what the analysis needs, built while streaming records.

Keeping one million :class:`~ctxbench.protocols.cef.records.Trial` objects alive would
cost gigabytes; the analysis needs a dozen numbers and a few codes per trial, so
:class:`TableBuilder` appends those to compact arrays and lets each record go.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.protocols.cef.records import COST_SOURCES, USAGE_SOURCES, Trial

__all__ = ["TableBuilder", "TrialTable", "table_from_trials"]

StratumKey = tuple[str, str, str, str, str]

_USAGE_CODE = {name: i for i, name in enumerate(USAGE_SOURCES)}
_COST_CODE = {name: i for i, name in enumerate(COST_SOURCES)}
# The fields of a record that :meth:`TableBuilder.add_record` reads.
_RECORD_FIELDS = (
    "provider", "model", "workload", "workload_version", "scorer", "task_id", "replicate",
    "condition", "usage_source", "cost_source", "cost_source_reference", "task_score",
    "evidence_recall", "unsupported_claim_rate", "context_tokens", "billed_cost_usd",
    "latency_ms", "outcome", "context_commit_id", "schema_version",
)


@dataclass(frozen=True, slots=True)
class TrialTable:
    """Column arrays, one entry per trial, plus the code tables that name them.

    ``task`` codes index ``task_ids``/``task_stratum``; ``stratum`` codes index
    ``strata``; ``condition`` codes index ``conditions``; ``file`` codes index ``files``.
    """

    strata: tuple[StratumKey, ...]
    task_ids: tuple[str, ...]
    task_stratum: NDArray[np.int64]
    conditions: tuple[str, ...]
    files: tuple[str, ...]
    task: NDArray[np.int64]
    replicate: NDArray[np.int64]
    condition: NDArray[np.int64]
    failed: NDArray[np.bool_]
    task_score: NDArray[np.float64]
    evidence_recall: NDArray[np.float64]
    unsupported_claim_rate: NDArray[np.float64]
    context_tokens: NDArray[np.float64]
    billed_cost_usd: NDArray[np.float64]
    latency_ms: NDArray[np.float64]
    usage_source: NDArray[np.int64]
    cost_source: NDArray[np.int64]
    has_commit: NDArray[np.bool_]
    file: NDArray[np.int64]
    line: NDArray[np.int64]
    formats: tuple[tuple[str, int], ...]
    cost_references: tuple[tuple[str, str, int], ...]

    def __len__(self) -> int:
        return int(self.task.shape[0])

    def where(self, index: int) -> str:
        """``file:line`` of trial ``index``."""
        return f"{self.files[int(self.file[index])]}:{int(self.line[index])}"


class TableBuilder:
    """Append trials one at a time; :meth:`build` returns the :class:`TrialTable`."""

    def __init__(self) -> None:
        self._strata: dict[StratumKey, int] = {}
        self._tasks: dict[tuple[int, str], int] = {}
        self._conditions: dict[str, int] = {}
        self._files: dict[str, int] = {}
        self._formats: dict[str, int] = {}
        self._refs: dict[tuple[str, str], int] = {}
        self._ints = {name: array("q") for name in (
            "task", "replicate", "condition", "usage_source", "cost_source", "file", "line")}
        self._floats = {name: array("d") for name in (
            "task_score", "evidence_recall", "unsupported_claim_rate", "context_tokens",
            "billed_cost_usd", "latency_ms")}
        self._flags = {name: array("b") for name in ("failed", "has_commit")}
        # Bound once: the per-record path appends without dictionary lookups.
        ints, floats, flags = self._ints, self._floats, self._flags
        self._c_task, self._c_replicate = ints["task"], ints["replicate"]
        self._c_condition, self._c_usage = ints["condition"], ints["usage_source"]
        self._c_cost_source, self._c_file = ints["cost_source"], ints["file"]
        self._c_line = ints["line"]
        self._c_score, self._c_recall = floats["task_score"], floats["evidence_recall"]
        self._c_unsupported = floats["unsupported_claim_rate"]
        self._c_context, self._c_cost = floats["context_tokens"], floats["billed_cost_usd"]
        self._c_latency = floats["latency_ms"]
        self._c_failed, self._c_commit = flags["failed"], flags["has_commit"]

    def add_record(self, obj: dict[str, Any], path: str, line: int) -> None:
        """Append a decoded record the record rules accept (``records.check_trial``)."""
        key = (obj["provider"], obj["model"], obj["workload"], obj["workload_version"],
               obj["scorer"])
        stratum = self._strata.setdefault(key, len(self._strata))
        self._c_task.append(self._tasks.setdefault((stratum, obj["task_id"]), len(self._tasks)))
        self._c_replicate.append(obj["replicate"])
        condition = obj["condition"]
        self._c_condition.append(self._conditions.setdefault(condition, len(self._conditions)))
        self._c_usage.append(_USAGE_CODE[obj["usage_source"]])
        cost_source = obj["cost_source"]
        self._c_cost_source.append(_COST_CODE[cost_source])
        self._c_file.append(self._files.setdefault(path, len(self._files)))
        self._c_line.append(line)
        self._c_score.append(obj["task_score"])
        self._c_recall.append(obj["evidence_recall"])
        self._c_unsupported.append(obj["unsupported_claim_rate"])
        self._c_context.append(obj["context_tokens"])
        self._c_cost.append(obj["billed_cost_usd"])
        self._c_latency.append(obj["latency_ms"])
        self._c_failed.append(obj["outcome"] == "error")
        schema = obj["schema_version"]
        # Entroly's schema allows a commit id on a raw trial; only ctxbench's forbids it.
        self._c_commit.append(obj["context_commit_id"] is not None
                              and schema != "entroly.context-efficiency-trial.v1")
        self._formats[schema] = self._formats.get(schema, 0) + 1
        ref = (cost_source, obj["cost_source_reference"])
        self._refs[ref] = self._refs.get(ref, 0) + 1

    def add(self, t: Trial) -> None:
        """Append a validated :class:`Trial` (the same columns as :meth:`add_record`)."""
        self.add_record({name: getattr(t, name) for name in _RECORD_FIELDS}, t.path, t.line)

    def build(self) -> TrialTable:
        def ints(name: str) -> NDArray[np.int64]:
            return np.frombuffer(self._ints[name], dtype=np.int64).copy()

        def floats(name: str) -> NDArray[np.float64]:
            return np.frombuffer(self._floats[name], dtype=np.float64).copy()

        def flags(name: str) -> NDArray[np.bool_]:
            return np.frombuffer(self._flags[name], dtype=np.int8).astype(bool)

        task_stratum = np.empty(len(self._tasks), dtype=np.int64)
        task_ids = [""] * len(self._tasks)
        for (stratum, task_id), code in self._tasks.items():
            task_stratum[code] = stratum
            task_ids[code] = task_id
        return TrialTable(
            strata=tuple(self._strata),
            task_ids=tuple(task_ids),
            task_stratum=task_stratum,
            conditions=tuple(self._conditions),
            files=tuple(self._files),
            task=ints("task"),
            replicate=ints("replicate"),
            condition=ints("condition"),
            failed=flags("failed"),
            task_score=floats("task_score"),
            evidence_recall=floats("evidence_recall"),
            unsupported_claim_rate=floats("unsupported_claim_rate"),
            context_tokens=floats("context_tokens"),
            billed_cost_usd=floats("billed_cost_usd"),
            latency_ms=floats("latency_ms"),
            usage_source=ints("usage_source"),
            cost_source=ints("cost_source"),
            has_commit=flags("has_commit"),
            file=ints("file"),
            line=ints("line"),
            formats=tuple(sorted(self._formats.items())),
            cost_references=tuple(sorted((s, r, n) for (s, r), n in self._refs.items())),
        )


def table_from_trials(trials: Iterable[Trial]) -> TrialTable:
    """Build the column table from any iterable of trials (streamed, not kept)."""
    builder = TableBuilder()
    for trial in trials:
        builder.add(trial)
    return builder.build()
