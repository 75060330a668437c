"""Open corpus files fail-closed: regular files only, no symbolic links, bounded size.

Every corpus read in ctxbench (``eceb register``, ``eceb root``/``evaluate``, ``compile``
and ``compile verify``) goes through here, so a hostile corpus gives one located line
and exit 2 instead of a hang, a traceback or a silently reclassified artifact:

- a FIFO, socket or device is never opened for reading (``lstat`` first, then ``open``
  with ``O_NONBLOCK | O_NOFOLLOW`` and an ``fstat`` that must still show the same regular
  file), so nothing can block on a reader that never comes;
- a symbolic link anywhere below the corpus directory is refused (see
  :func:`ctxbench.protocols.eceb.paths.resolve_in_corpus`);
- an ``OSError`` (loops, not-a-directory, too-long names, permission denied) becomes an
  :class:`~ctxbench.core.errors.InputError` naming the path, the reason and the errno;
- files that are read whole (the compiler holds artifact text) are capped at
  :data:`MAX_TEXT_FILE_BYTES` and read in bounded chunks; hashing streams any size.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ctxbench.core.errors import InputError

__all__ = [
    "MAX_TEXT_FILE_BYTES",
    "file_kind",
    "hash_regular_file",
    "open_regular",
    "os_error",
    "read_regular_file",
    "walk_regular_files",
]

#: The largest file the compiler reads whole (8 MiB). Indexing holds a file's text,
#: chunks and token ids at once (a 200 MB file took 6.2 GB; one file at this cap peaks at
#: ~310 MB, benchmarks/bench_file_bounds.py); larger files are refused, not truncated.
MAX_TEXT_FILE_BYTES = 8 << 20

_READ_CHUNK = 1 << 20
_SHOWN = 200


def _shown(display: str) -> str:
    return display if len(display) <= _SHOWN else display[:_SHOWN] + "..."


def os_error(exc: OSError, display: str, action: str = "cannot be read") -> InputError:
    """One located line for an OS error: ``path: cannot be read: reason (ERRNO)``."""
    name = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or type(exc).__name__
    suffix = f" ({name})" if name else ""
    return InputError(f"{_shown(display)}: {action}: {reason}{suffix}")


def file_kind(mode: int) -> str:
    """What a file is, in words (for error messages)."""
    for test, word in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return word
    return "an unknown kind of file"


def open_regular(path: Path, display: str) -> tuple[int, int]:
    """Open a regular file for reading without blocking or following a final link.

    Returns ``(fd, size)``; the caller closes ``fd``. Anything but a regular file is an
    InputError naming what it is.
    """
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise os_error(exc, display) from exc
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{_shown(display)}: expected a regular file, got {file_kind(info.st_mode)}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise os_error(exc, display) from exc
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
            info.st_dev, info.st_ino):
        os.close(fd)
        raise InputError(f"{_shown(display)}: expected a regular file, got one that changed "
                         f"while it was opened")
    return fd, opened.st_size


def read_regular_file(path: Path, display: str, *, limit: int = MAX_TEXT_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, read in bounded chunks."""
    fd, size = open_regular(path, display)
    try:
        if size > limit:
            raise InputError(
                f"{_shown(display)}: expected a file of at most {limit} bytes, got {size} bytes "
                f"(larger files are refused, not truncated)")
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - total))
            except OSError as exc:
                raise os_error(exc, display) from exc
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputError(f"{_shown(display)}: expected a file of at most {limit} "
                                 f"bytes, got one that grew past it while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)



def hash_regular_file(path: Path, display: str) -> tuple[str, int]:
    """``(BLAKE3 hex, size)`` of a regular file, streamed in 1 MiB chunks (any size)."""
    import blake3

    fd, _ = open_regular(path, display)
    hasher = blake3.blake3()
    size = 0
    try:
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError as exc:
                raise os_error(exc, display) from exc
            if not chunk:
                break
            hasher.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return str(hasher.hexdigest()), size


def walk_regular_files(base: Path) -> list[str]:
    """Sorted portable relative paths of the regular files under ``base`` (hidden skipped).

    Fail-closed: a symbolic link (to a file or a directory), a FIFO, socket or device
    that is not hidden is an InputError naming it, and an unreadable directory is one
    too (``os.walk`` would otherwise skip it silently).
    """
    found: list[str] = []

    def fail(exc: OSError) -> None:
        raise os_error(exc, str(exc.filename or base))

    for current, dirs, files in os.walk(base, onerror=fail, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in (*dirs, *sorted(files)):
            if name.startswith("."):
                continue
            full = Path(current, name)
            rel = full.relative_to(base).as_posix()
            try:
                mode = os.lstat(full).st_mode
            except OSError as exc:
                raise os_error(exc, str(full)) from exc
            if stat.S_ISLNK(mode):
                raise InputError(
                    f"{_shown(str(full))}: expected a regular file or directory, got a "
                    f"symbolic link (links are refused: a link would give one file's bytes "
                    f"a second path, and so possibly another classification)")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise InputError(f"{_shown(str(full))}: expected a regular file, got "
                                 f"{file_kind(mode)}")
            found.append(rel)
    return sorted(found)
