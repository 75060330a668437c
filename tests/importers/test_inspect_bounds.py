"""``ctxbench import inspect`` checks a log within ctxbench's bounds before Inspect reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import InputError, foreignfile
from ctxbench.core.limits import MAX_ARCHIVE_MEMBER_BYTES
from ctxbench.importers.inspect_logs import read_inspect_log


def _import(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = run_guarded(cli, ["import", "inspect", *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", ["fifo.eval", "fifo.json"])
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_named_pipe_is_refused_without_hanging(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    # Opening a pipe blocks until a writer appears: run in a child so a hang fails.
    done = subprocess.run(
        [sys.executable, "-m", "ctxbench", "import", "inspect", str(fifo), str(fifo),
         "--rows", str(tmp_path / "b.jsonl"), str(tmp_path / "t.jsonl")],
        check=False, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert done.returncode == 2
    assert done.stderr.strip() == \
        f"ctxbench: error: {fifo}: expected a regular file, got a named pipe or socket"


def test_a_device_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = _import([os.devnull, os.devnull, "--rows", str(tmp_path / "b"),
                         str(tmp_path / "t")], capsys)
    assert (code, err.strip()) == (2, f"ctxbench: error: {os.devnull}: expected a regular "
                                       "file, got a device")


def _bomb(path: Path, members: dict[str, int]) -> None:
    """A zip of members of the given decompressed sizes (zeros: they deflate ~1000:1)."""
    block = b"0" * (1 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, size in members.items():
            with archive.open(name, "w", force_zip64=True) as member:
                for start in range(0, size, len(block)):
                    member.write(block[:size - start])


def test_a_zip_bomb_is_refused_at_the_member_limit(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bomb = tmp_path / "bomb.eval"
    _bomb(bomb, {"header.json": 2, "samples/1_epoch_1.json": MAX_ARCHIVE_MEMBER_BYTES + 1})
    assert bomb.stat().st_size < 2_000_000
    code, err = _import([str(bomb), str(bomb), "--rows", str(tmp_path / "b"),
                         str(tmp_path / "t")], capsys)
    assert code == 2
    assert err.strip() == (f"ctxbench: error: {bomb}: samples/1_epoch_1.json: expected a "
                           f"member of at most {MAX_ARCHIVE_MEMBER_BYTES} bytes decompressed, "
                           "got more")


def test_the_whole_archive_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(foreignfile, "MAX_ARCHIVE_BYTES", 3 << 20)
    bomb = tmp_path / "many.eval"
    _bomb(bomb, {f"samples/{n}_epoch_1.json": 1 << 20 for n in range(4)})
    with pytest.raises(InputError, match=f"^{bomb}: expected at most {3 << 20} bytes "
                                         "decompressed in all, got more$"):
        read_inspect_log(bomb)


def test_too_many_members_are_refused_before_the_directory_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(foreignfile, "MAX_ARCHIVE_MEMBERS", 10)
    crowded = tmp_path / "crowded.eval"
    with zipfile.ZipFile(crowded, "w") as archive:
        for n in range(11):
            archive.writestr(f"samples/{n}_epoch_1.json", "{}")

    def never(*args: object) -> None:
        raise AssertionError("the archive's directory was read")

    monkeypatch.setattr(zipfile.ZipFile, "__init__", never)
    with pytest.raises(InputError, match=f"^{crowded}: expected a zip archive of at most 10 "
                                         "members, got 11$"):
        read_inspect_log(crowded)


def test_deep_json_is_refused_in_a_log_and_in_a_member(tmp_path: Path) -> None:
    deep = "[" * 65 + "]" * 65
    as_json = tmp_path / "deep.json"
    as_json.write_text(json.dumps({"eval": {"notes": "[[[[ in a string do not count"},
                                   "x": json.loads(deep)}))
    with pytest.raises(InputError, match=f"^{as_json}: expected JSON nested at most 64 deep, "
                                         "got 66 levels$"):
        read_inspect_log(as_json)
    as_eval = tmp_path / "deep.eval"
    with zipfile.ZipFile(as_eval, "w") as archive:
        archive.writestr("header.json", deep)
    with pytest.raises(InputError, match=f"^{as_eval}: header.json: expected JSON nested at "
                                         "most 64 deep, got 65 levels$"):
        read_inspect_log(as_eval)
