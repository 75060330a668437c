"""The output directory's run lock: exclusive, names its holder, survives a killed holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.core import InputError
from ctxbench.runner.runlock import LOCK_NAME, RunLock


def test_second_lock_names_the_holder_and_the_first_removes_its_file(tmp_path: Path) -> None:
    with RunLock(tmp_path / "out"):
        with pytest.raises(InputError, match=rf"out: another ctxbench run holds this output "
                           rf"directory \(pid {os.getpid()} on host .*, started 20"):
            RunLock(tmp_path / "out").acquire()
        assert (tmp_path / "out" / LOCK_NAME).exists()
    assert not (tmp_path / "out" / LOCK_NAME).exists()
    with RunLock(tmp_path / "out"):  # free again
        pass


def test_a_killed_holder_leaves_a_file_that_is_not_a_lock(tmp_path: Path) -> None:
    code = ("import sys, time\nfrom ctxbench.runner.runlock import RunLock\n"
            f"RunLock({str(tmp_path)!r}).acquire()\nprint('held', flush=True)\n"
            "time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(InputError, match=f"pid {holder.pid} on host"):
            RunLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    assert (tmp_path / LOCK_NAME).exists()  # left behind, but nobody holds it
    lock = RunLock(tmp_path)
    lock.acquire()
    assert f'"pid": {os.getpid()}' in (tmp_path / LOCK_NAME).read_text("utf-8")
    lock.release()


def test_the_lock_file_is_never_followed_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(target)
    with pytest.raises(InputError, match=f"{LOCK_NAME}: expected a regular lock file, got a "
                       "symbolic link"):
        RunLock(out).acquire()
    assert target.read_text("utf-8") == "keep\n"
