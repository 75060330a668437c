"""TOML documents loaded with located syntax errors."""

from __future__ import annotations

import os
import re
import tomllib
from typing import Any

from ctxbench.core.errors import FieldError
from ctxbench.core.textfile import read_utf8

__all__ = ["load_toml"]

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_toml(path: str | os.PathLike[str], *, display: str | None = None) -> dict[str, Any]:
    """Parse a TOML file; a syntax error becomes ``file:line: expected valid TOML, got ...``."""
    shown = display if display is not None else str(path)
    text = read_utf8(path, display=shown)
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
