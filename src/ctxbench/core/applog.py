"""Append-only JSONL logs: each record flushed and fsynced before it counts as written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from ctxbench.core.errors import FieldError

__all__ = ["AppendOnlyLog", "torn_tail"]


def torn_tail(path: str | os.PathLike[str]) -> int | None:
    """Return the 1-based line number of a torn (unterminated) last line, or None."""
    target = Path(path)
    if not target.exists() or target.stat().st_size == 0:
        return None
    with open(target, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return None
        handle.seek(0)
        return sum(1 for _ in handle)


class AppendOnlyLog:
    """Open a JSONL file for appending; refuses to append after a torn last line.

    A torn line means a writer died mid-record. It is reported with its location rather
    than silently completed or parsed, so a human decides (remove the torn line to resume).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        torn = torn_tail(self.path)
        if torn is not None:
            raise FieldError(
                str(self.path), torn, None, "a complete last line ending in a newline",
                got_text="a torn line (the writer was interrupted); remove it to resume",
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line, then fsync, in a single write call."""
        line = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        data = (line + "\n").encode("utf-8")
        written = os.write(self._fd, data)
        while written < len(data):
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Write several records (one line each) with one write call and one fsync.

        A crash can tear only the last line; every earlier line is complete.
        """
        data = b"".join(
            (json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
            .encode("utf-8") for r in records)
        written = os.write(self._fd, data)
        while written < len(data):
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> AppendOnlyLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
