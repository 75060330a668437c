"""Read a whole UTF-8 text file, with the same located errors everywhere."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ctxbench.core.errors import FieldError, InputError
from ctxbench.core.limits import MAX_DOCUMENT_BYTES

__all__ = ["check_readable", "open_error", "read_utf8"]


def open_error(exc: OSError, shown: str) -> InputError:
    """One located line for an OS error met while reading the file named ``shown``."""
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{shown}: file not found")
    if isinstance(exc, NotADirectoryError):
        return InputError(f"{shown}: file not found (a parent is not a directory)")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{shown}: expected a file, got a directory")
    if isinstance(exc, PermissionError):
        return InputError(f"{shown}: permission denied")
    return InputError(f"{shown}: cannot be read ({exc.strerror or type(exc).__name__})")


def check_readable(path: str | os.PathLike[str], shown: str) -> int:
    """The size of the regular file at ``path``; anything else is an :class:`InputError`.

    A named pipe, socket or device is refused before it is opened (opening a pipe blocks
    until a writer appears, so a reader would hang; a device may never end).
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise open_error(exc, shown) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{shown}: expected a file, got a directory")
    if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
        raise InputError(f"{shown}: expected a regular file, got a named pipe or socket")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{shown}: expected a regular file, got a device")
    return info.st_size


def read_utf8(path: str | os.PathLike[str], *, display: str | None = None,
              limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The file's text; a missing file, one over ``limit`` bytes or an invalid byte is an
    :class:`InputError`.

    Invalid UTF-8 renders as ``file:line: expected UTF-8 text, got an invalid byte at
    offset N`` (the line holding that byte).
    """
    shown = display if display is not None else str(path)
    size = check_readable(path, shown)
    if size > limit:
        raise InputError(f"{shown}: expected a file of at most {limit} bytes, got {size} bytes")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise open_error(exc, shown) from None
    if len(data) > limit:
        raise InputError(f"{shown}: expected a file of at most {limit} bytes, got more")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FieldError(shown, line, None, "UTF-8 text",
                         got_text=f"an invalid byte at offset {exc.start}") from None
