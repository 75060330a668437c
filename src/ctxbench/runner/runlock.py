"""One run per output directory: an exclusive lock held for the run's whole life.

    with RunLock(out):        # InputError naming the holder if another run has it
        ...                   # plan, send, record, write the reports

The lock is ``fcntl.flock`` on ``OUT/run.lock``, which records the holder's pid, host and
start time (what a second run's error names). The kernel drops a flock when its holder
exits, however it exits, so a file left behind by a killed run is not a lock: the next
run takes it over. A run that ends removes the file before it lets go of the lock; a
run that takes the lock checks that the file it locked is still the one at the path
(else it was removed in between, and it locks the new one), so two runs can never both
hold a lock on different files of the same name.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import time
from pathlib import Path
from types import TracebackType

from ctxbench.core import InputError
from ctxbench.core.errors import printable

__all__ = ["LOCK_NAME", "RunLock"]

LOCK_NAME = "run.lock"
# What is read of a holder's record for the error message; the file is ours, but a
# leftover one could be anything.
_MAX_HOLDER_BYTES = 4096
_RETRIES = 16


class RunLock:
    """The exclusive lock on one output directory (created if missing)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self._fd: int | None = None
        self._created = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, or raise InputError naming the run that holds it."""
        self._created = not self.directory.exists()
        for _ in range(_RETRIES):
            self.directory.mkdir(parents=True, exist_ok=True)
            try:
                fd = self._open()
            except FileNotFoundError:
                continue  # the directory was removed by a refused run that had made it
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise InputError(
                    f"{self.directory}: another ctxbench run holds this output directory "
                    f"({holder}); wait for it to end, or choose another output "
                    "directory") from None
            except BaseException:
                os.close(fd)
                raise
            if self._same_file(fd):
                self._fd = fd
                self._write_holder(fd)
                return
            os.close(fd)  # removed by its last holder between our open and our lock
        raise InputError(f"{self.path}: expected a lock file that stays in place, got one "
                         f"replaced {_RETRIES} times while taking it")

    def _open(self) -> int:
        # Never through a link, never a FIFO or device (O_NONBLOCK: a FIFO cannot stall
        # the open); the file must be a regular one.
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise InputError(f"{self.path}: expected a regular lock file, got a symbolic "
                             "link") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(f"{self.path}: expected a regular lock file, got another kind "
                             "of file")
        return fd

    def _same_file(self, fd: int) -> bool:
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)

    @staticmethod
    def _write_holder(fd: int) -> None:
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
        os.fsync(fd)

    def release(self) -> None:
        """Remove the lock file, then let go of the lock (idempotent); a directory made
        for the run and still empty (a run refused before it wrote anything) goes too."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self._same_file(fd):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            os.close(fd)
        if self._created:
            with contextlib.suppress(OSError):  # not empty: the run wrote into it
                self.directory.rmdir()


def _read_holder(fd: int) -> str:
    """``pid 123 on host h, started 2026-12-01T21:00:00Z``, or what can be said of it."""
    try:
        data = os.pread(fd, _MAX_HOLDER_BYTES, 0)
        record = json.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return "a process that has not yet recorded itself"
    if not isinstance(record, dict):
        return "a process that has not yet recorded itself"
    pid, host, started = (record.get(k) for k in ("pid", "host", "started"))
    return printable(f"pid {str(pid)[:20]} on host {str(host)[:100]}, started "
                     f"{str(started)[:40]}")
