"""Append-only trial logs: one line per record, fsynced, and refusal after a torn tail."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ctxbench.core import AppendOnlyLog, FieldError, read_jsonl, torn_tail


def test_append_writes_one_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "trials.jsonl"
    with AppendOnlyLog(path) as log:
        log.append({"trial": 1, "text": "é"})
        log.append({"trial": 2, "nested": {"a": [1, 2.5, None]}})
    assert path.read_bytes() == (
        '{"trial":1,"text":"é"}\n{"trial":2,"nested":{"a":[1,2.5,null]}}\n'.encode()
    )
    assert [r.value["trial"] for r in read_jsonl(path)] == [1, 2]


def test_log_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with AppendOnlyLog(path) as log:
        log.append({"n": 1})
    with AppendOnlyLog(path) as log:
        log.append({"n": 2})
        log.append({"n": 3})
    assert [(r.line, r.value) for r in read_jsonl(path)] == [
        (1, {"n": 1}), (2, {"n": 2}), (3, {"n": 3})
    ]


def test_close_is_idempotent(tmp_path: Path) -> None:
    import os

    log = AppendOnlyLog(tmp_path / "t.jsonl")
    log.append({"a": 1})
    fd = log._fd
    log.close()
    # The descriptor is really closed (a second close must not close a reused number).
    with pytest.raises(OSError):
        os.fstat(fd)
    reused = os.open(tmp_path / "other", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        log.close()
        assert os.fstat(reused).st_size == 0  # still open: the second close left it alone
    finally:
        os.close(reused)
    assert (tmp_path / "t.jsonl").read_bytes() == b'{"a":1}\n'


def test_nan_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with AppendOnlyLog(path) as log:
        log.append({"ok": 1})
        with pytest.raises(ValueError):
            log.append({"bad": math.nan})
    assert path.read_bytes() == b'{"ok":1}\n'


def test_torn_tail_refuses_to_open_with_a_located_message(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2}\n{"n":')
    with pytest.raises(FieldError) as info:
        AppendOnlyLog(path)
    assert str(info.value) == (
        f"{path}:3: expected a complete last line ending in a newline, got a torn line "
        "(the writer was interrupted); remove it to resume"
    )
    assert path.read_bytes() == b'{"n":1}\n{"n":2}\n{"n":'  # left untouched


def test_a_complete_looking_unterminated_line_is_still_torn(tmp_path: Path) -> None:
    # The writer always ends a record with a newline, so no newline means interrupted,
    # even when the bytes happen to be valid JSON.
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n":1}')
    assert torn_tail(path) == 1
    with pytest.raises(FieldError, match=r":1: expected a complete last line"):
        AppendOnlyLog(path)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"", None),
        (b"\n", None),
        (b'{"a":1}\n', None),
        (b'{"a":1}\n{"a":2}\n', None),
        (b"x", 1),
        (b'{"a":1}\n{"a"', 2),
        (b'{"a":1}\n\n\n{"a"', 4),
        (b"\n\nabc", 3),
    ],
)
def test_torn_tail_line_number(tmp_path: Path, data: bytes, line: int | None) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    assert torn_tail(path) == line


def test_torn_tail_of_a_missing_file_is_none(tmp_path: Path) -> None:
    assert torn_tail(tmp_path / "absent.jsonl") is None


def test_records_are_written_compactly_and_parse_back(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    record = {"b": 1, "a": "x y", "c": [True, False]}
    with AppendOnlyLog(path) as log:
        log.append(record)
    line = path.read_text().splitlines()[0]
    assert line == '{"b":1,"a":"x y","c":[true,false]}'  # insertion order kept
    assert json.loads(line) == record
