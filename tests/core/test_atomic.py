"""Atomic writes: readers see the old file or the new one, never a mix or a temp file."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    report_json_bytes,
)


def test_write_creates_parent_directories_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.json"
    atomic_write_bytes(target, b"one")
    assert target.read_bytes() == b"one"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_write_replaces_existing_content(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old content that is longer")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_write_accepts_str_paths_and_empty_data(tmp_path: Path) -> None:
    target = tmp_path / "empty"
    atomic_write_bytes(str(target), b"")
    assert target.read_bytes() == b""


def test_replace_failure_keeps_old_file_and_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")

    def refuse(src: str, dst: str) -> None:
        assert Path(src).read_bytes() == b"new"  # the temp file was complete
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_failure_while_writing_keeps_old_file_and_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")

    def fail_fsync(fd: int) -> None:
        raise OSError("fsync failed")

    monkeypatch.setattr(os, "fsync", fail_fsync)
    with pytest.raises(OSError, match="fsync failed"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_interrupt_while_writing_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(tmp_path / "new.json", b"x")
    assert os.listdir(tmp_path) == []


def test_write_text_is_utf8(tmp_path: Path) -> None:
    target = tmp_path / "t.md"
    atomic_write_text(target, "naïve € \U0001f600\n")
    assert target.read_bytes() == "naïve € \U0001f600\n".encode()


def test_report_json_bytes_format() -> None:
    value = {"z": 1, "a": [1.5, None, "é"], "m": {}}
    assert report_json_bytes(value) == (
        '{\n  "z": 1,\n  "a": [\n    1.5,\n    null,\n    "é"\n  ],\n  "m": {}\n}\n'.encode()
    )


def test_report_json_bytes_rejects_non_finite() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
            report_json_bytes({"x": [bad]})


def test_atomic_write_json_writes_report_bytes(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.json"
    value = {"schema_version": "x.v1", "n": 3}
    atomic_write_json(target, value)
    assert target.read_bytes() == report_json_bytes(value)
    assert json.loads(target.read_text()) == value


def test_atomic_write_json_nan_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old")
    with pytest.raises(ValueError):
        atomic_write_json(target, {"x": math.nan})
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["r.json"]


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=10,
)


@given(_values)
def test_report_json_bytes_is_deterministic_and_round_trips(value: object) -> None:
    first = report_json_bytes(value)
    assert first == report_json_bytes(value)
    assert first.endswith(b"\n")
    assert json.loads(first) == value


def test_path_from_is_relative_to_the_artifacts_folder(tmp_path: Path) -> None:
    from ctxbench.core.atomic import path_from

    assert path_from(tmp_path / "out", tmp_path / "data" / "t.jsonl") == "../data/t.jsonl"
    assert path_from(tmp_path, tmp_path / "t.jsonl") == "t.jsonl"


def test_the_temporary_file_never_opens_an_existing_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first random name is taken (by a link to a file elsewhere): the write must not
    # open it, and must pick another name.
    target = tmp_path / "r.json"
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    names = iter([b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(names))
    (tmp_path / f".r.json.{'00' * 6}.tmp").symlink_to(outside)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert outside.read_bytes() == b"keep"
    assert sorted(os.listdir(tmp_path)) == [f".r.json.{'00' * 6}.tmp", "outside", "r.json"]


def test_the_written_file_has_the_mode_a_plain_open_gives(tmp_path: Path) -> None:
    target, plain = tmp_path / "m.txt", tmp_path / "plain.txt"
    atomic_write_text(target, "x")
    plain.write_text("x")
    assert target.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
