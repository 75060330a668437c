"""TOML documents loaded with located syntax errors."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from ctxbench.core.errors import FieldError, InputError

__all__ = ["load_toml"]

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_toml(path: str | os.PathLike[str], *, display: str | None = None) -> dict[str, Any]:
    """Parse a TOML file; a syntax error becomes ``file:line: expected valid TOML, got ...``."""
    shown = display if display is not None else str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: expected a file, got a directory") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FieldError(shown, line, None, "UTF-8 text",
                         got_text=f"an invalid byte at offset {exc.start}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _AT.search(message)
        at: int | None = int(match.group(1)) if match else None
        if at is None and "(at end of document)" in message:
            # Truncated input (an unterminated string or array) is located at its last line.
            at = max(1, len(text.splitlines()))
        detail = _AT.sub("", message).strip()
        raise FieldError(shown, at, None, "valid TOML", got_text=detail) from None
