"""Read a whole UTF-8 text file, with the same located errors everywhere."""

from __future__ import annotations

import os
from pathlib import Path

from ctxbench.core.errors import FieldError, InputError

__all__ = ["read_utf8"]


def read_utf8(path: str | os.PathLike[str], *, display: str | None = None) -> str:
    """The file's text; a missing file or an invalid byte is an :class:`InputError`.

    Invalid UTF-8 renders as ``file:line: expected UTF-8 text, got an invalid byte at
    offset N`` (the line holding that byte).
    """
    shown = display if display is not None else str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: expected a file, got a directory") from None
    except PermissionError:
        raise InputError(f"{shown}: permission denied") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FieldError(shown, line, None, "UTF-8 text",
                         got_text=f"an invalid byte at offset {exc.start}") from None
