"""Atomic file writes (temp file in the same directory, fsync, rename), report JSON, and
the paths an artifact records (relative to where it is written)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

# Read once at import: os.umask can only be read by setting it, which races with threads.
_UMASK = os.umask(0o022)
os.umask(_UMASK)

__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_write_text", "path_from",
           "report_json_bytes"]


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old file or the new one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(target)
    try:
        # Created 0600; give the file the mode a plain open() would (0666 & ~umask).
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if exc.errno is not None and exc.filename is None:
            # ENOSPC/EFBIG from write() name no file: name the target, keep the type.
            raise type(exc)(exc.errno, exc.strerror, str(target)) from exc
        raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# What tempfile.mkstemp opens with; tempfile itself (with shutil, random and the
# compression modules it imports) is ~11 ms of the start-up of every command that writes.
_TEMP_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _create_temporary(target: Path) -> tuple[int, str]:
    """A new file ``.<name>.<random>.tmp`` beside ``target``, opened 0600 (never an
    existing file or a link: O_EXCL), as ``tempfile.mkstemp`` makes it."""
    for _ in range(100):
        tmp = os.path.join(target.parent, f".{target.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(target.parent))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def report_json_bytes(value: Any) -> bytes:
    """The byte form of a report: 2-space indent, key order as built, no NaN, final newline.

    Reports keep their builder's key order (it is part of the schema's readability) and
    are byte-identical for identical inputs because every builder is deterministic.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def atomic_write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Atomically write a report-style JSON document (see :func:`report_json_bytes`)."""
    atomic_write_bytes(path, report_json_bytes(value))


def path_from(artifact_dir: str | os.PathLike[str] | None,
              path: str | os.PathLike[str]) -> str:
    """``path`` as an artifact records it: relative to the directory the artifact is
    written in (None: the current directory), with ``/`` separators.

    Reports and manifests move between machines, so they hold no absolute path; a
    command recorded in one runs from the artifact's directory.
    """
    base = Path.cwd() if artifact_dir is None else Path(artifact_dir)
    return Path(os.path.relpath(Path(path).absolute(), base.absolute())).as_posix()
