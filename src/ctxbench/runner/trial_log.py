"""The run's append-only trial log: one ``ctxbench.trial.v1`` record per line, fsynced.

Resuming reads the keys of every recorded trial so that none is sent again. A torn last
line (the writer was killed mid-record) is detected, reported, and moved aside to
``trials.jsonl.torn`` — never parsed as data; that trial is simply run again. Any other
damaged line (not an object, a key field missing or of the wrong type, a trial of
another run or outside this run's plan, a trial recorded twice) stops the resume with
``trials.jsonl:LINE: FIELD: expected ..., got ...``; nothing is coerced or skipped.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import AppendOnlyLog, FieldError, iter_jsonl, torn_tail

__all__ = ["MAX_REPLICATE", "GroupCommit", "TrialKey", "TrialLog", "read_trial_key",
           "trial_key"]

TrialKey = tuple[str, str, int]
MAX_REPLICATE = 999  # spec.BOUNDS["replicates"] - 1


def trial_key(record: dict[str, Any]) -> TrialKey:
    """(task_id, condition, replicate): what identifies one trial within a run."""
    return (str(record["task_id"]), str(record["condition"]), int(record["replicate"]))


def read_trial_key(record: Any, *, path: str, line: int) -> TrialKey:
    """The key of a recorded line, or a located :class:`FieldError` saying what is wrong."""
    if not isinstance(record, dict):
        raise FieldError(path, line, None, "a trial object", record)
    for name in ("task_id", "condition"):
        value = record.get(name, _ABSENT)
        if value is _ABSENT:
            raise FieldError(path, line, name, "a non-empty string",
                             got_text="nothing (the field is missing)")
        if not isinstance(value, str) or not value:
            raise FieldError(path, line, name, "a non-empty string", value)
    replicate = record.get("replicate", _ABSENT)
    expected = f"an integer in [0, {MAX_REPLICATE}]"
    if replicate is _ABSENT:
        raise FieldError(path, line, "replicate", expected,
                         got_text="nothing (the field is missing)")
    if isinstance(replicate, bool) or not isinstance(replicate, int) or \
            not 0 <= replicate <= MAX_REPLICATE:
        if isinstance(replicate, int) and not isinstance(replicate, bool) and \
                abs(replicate) >= 10**30:
            raise FieldError(path, line, "replicate", expected,
                             got_text=f"an integer of {len(str(abs(replicate)))} digits")
        raise FieldError(path, line, "replicate", expected, replicate)
    return (record["task_id"], record["condition"], replicate)


_ABSENT = object()


@dataclass(frozen=True, slots=True)
class TornTail:
    """What was found at the end of the log: the line number and where it was moved."""

    line: int
    moved_to: Path


def _recover_torn(path: Path) -> TornTail | None:
    line = torn_tail(path)
    if line is None:
        return None
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    moved = path.with_name(path.name + ".torn")
    with open(moved, "ab") as handle:
        handle.write(data[cut:] + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    with open(path, "r+b") as handle:
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
    return TornTail(line=line, moved_to=moved)


class TrialLog:
    """Open (or create) ``trials.jsonl``; ``recorded`` holds the keys already written."""

    def __init__(self, path: str | os.PathLike[str], *, resume: bool,
                 planned: Collection[TrialKey] | None = None,
                 run_id: str | None = None) -> None:
        self.path = Path(path)
        self.torn: TornTail | None = None
        self.recorded: set[TrialKey] = set()
        if resume and self.path.exists():
            self.torn = _recover_torn(self.path)
            shown = str(self.path)
            for item in iter_jsonl(self.path):
                key = read_trial_key(item.value, path=shown, line=item.line)
                if run_id is not None and item.value.get("run_id") != run_id:
                    raise FieldError(shown, item.line, "run_id", f"this run's id {run_id!r}",
                                     item.value.get("run_id"))
                if planned is not None and key not in planned:
                    raise FieldError(shown, item.line, None, "a trial of this run's plan",
                                     got_text=f"the unplanned trial {_key_text(key)}")
                if key in self.recorded:
                    raise FieldError(shown, item.line, None, "each trial recorded once",
                                     got_text=f"a second record of {_key_text(key)}")
                self.recorded.add(key)
        self._log = AppendOnlyLog(self.path)

    def append(self, record: dict[str, Any]) -> None:
        """Write, flush and fsync one trial; it counts as done only after this returns."""
        self.append_batch([record])

    def append_batch(self, records: list[dict[str, Any]]) -> None:
        """Write several trials with one fsync (group commit); each counts once it returns."""
        keys = [trial_key(r) for r in records]
        for key in keys:
            if key in self.recorded or keys.count(key) > 1:
                raise FieldError(str(self.path), None, None, "each trial recorded once",
                                 got_text=f"a second record of {key}")
        self._log.append_many(records)
        self.recorded.update(keys)

    def close(self) -> None:
        self._log.close()


def _key_text(key: TrialKey) -> str:
    task, condition, replicate = key
    task = task if len(task) <= 60 else task[:60] + "..."
    condition = condition if len(condition) <= 60 else condition[:60] + "..."
    return f"({task!r}, {condition!r}, {replicate})"


class GroupCommit:
    """Batch the trials that finish while an fsync is running into the next fsync.

    ``await commit(record)`` returns only after the record's line is written and fsynced,
    so a trial still counts as done only when it is durable, but one slow fsync no longer
    stalls every request in flight.
    """

    def __init__(self, log: TrialLog) -> None:
        self.log = log
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._flushing = False
        self._task: asyncio.Future[None] | None = None

    async def __call__(self, record: dict[str, Any]) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((record, future))
        if not self._flushing:
            self._flushing = True
            self._task = asyncio.ensure_future(self._flush())
        await future

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await asyncio.to_thread(self.log.append_batch, [r for r, _ in batch])
                except BaseException as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._flushing = False
