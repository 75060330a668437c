"""Strict JSON Lines and JSON document reading with located errors.

Rules (shared by every protocol's parser):
- each non-blank line is one JSON object; blank (whitespace-only) lines are allowed;
- duplicate keys, NaN / Infinity / -Infinity and invalid UTF-8 are rejected;
- a last line without a newline that does not parse is reported as torn (a crashed
  writer), never parsed as data.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxbench.core.errors import FieldError, InputError, PointerError
from ctxbench.core.textfile import read_utf8

__all__ = [
    "JsonLine",
    "TornLineError",
    "iter_jsonl",
    "load_json_document",
    "loads_strict",
    "read_jsonl",
]


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


class _NonFinite(ValueError):
    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(token)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _constant(token: str) -> Any:
    raise _NonFinite(token)


def _float(token: str) -> float:
    value = float(token)
    if value in (math.inf, -math.inf):
        raise _NonFinite(token)
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)


def loads_strict(text: str, *, path: str, line: int | None) -> Any:
    """Parse one JSON text strictly; errors are :class:`FieldError` located at ``line``."""
    try:
        return _DECODER.decode(text)
    except _DuplicateKey as exc:
        raise FieldError(
            path, line, exc.key, "each key at most once in an object",
            got_text="a duplicate key",
        ) from None
    except _NonFinite as exc:
        raise FieldError(
            path, line, None, "finite JSON numbers", got_text=f"the non-finite number {exc.token}"
        ) from None
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        raise FieldError(
            path, at, None, "valid JSON", got_text=f"{exc.msg} at column {exc.colno}"
        ) from None
    except ValueError:
        # Python refuses to convert integers longer than sys.get_int_max_str_digits();
        # that must be a located input error, not a traceback.
        raise FieldError(path, line, None, "valid JSON",
                         got_text="a number too long to parse") from None
    except RecursionError:
        raise FieldError(path, line, None, "JSON nested at most a few hundred deep",
                         got_text="deeper nesting") from None


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One decoded JSONL object and the 1-based line it came from."""

    path: str
    line: int
    value: dict[str, Any]


class TornLineError(FieldError):
    """The last line has no newline and does not parse: a writer was interrupted."""


def iter_jsonl(path: str | os.PathLike[str], *, display: str | None = None) -> Iterator[JsonLine]:
    """Yield each object of a strict JSONL file with its line number.

    Raises :class:`FieldError` at the first bad line (use :func:`read_jsonl` with
    ``collect`` to gather several).
    """
    shown = display if display is not None else str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally below
    except FileNotFoundError:
        raise InputError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: expected a file, got a directory") from None
    except PermissionError:
        raise InputError(f"{shown}: permission denied") from None
    try:
        number = 0
        for raw in handle:
            number += 1
            complete = raw.endswith(b"\n")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if not complete and exc.reason == "unexpected end of data":
                    # A writer killed inside a multi-byte character leaves a torn line too.
                    raise TornLineError(
                        shown, number, None, "a complete last line ending in a newline",
                        got_text="a torn line (the writer was interrupted)",
                    ) from None
                raise FieldError(
                    shown, number, None, "UTF-8 text",
                    got_text=f"an invalid byte at offset {exc.start}",
                ) from None
            if not text.strip():
                continue
            try:
                # Without its line ending, so an error at the end of the line reports
                # that line's column rather than column 1 of a phantom next line.
                value = loads_strict(text.rstrip("\r\n"), path=shown, line=number)
            except FieldError as exc:
                if not complete and exc.field is None:
                    raise TornLineError(
                        shown, number, None, "a complete last line ending in a newline",
                        got_text="a torn line (the writer was interrupted)",
                    ) from None
                raise
            if not isinstance(value, dict):
                raise FieldError(shown, number, None, "a JSON object", value)
            yield JsonLine(shown, number, value)
    finally:
        handle.close()


def read_jsonl(path: str | os.PathLike[str], *, display: str | None = None) -> list[JsonLine]:
    """Read a whole strict JSONL file (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path, display=display))


def load_json_document(path: str | os.PathLike[str], *, display: str | None = None) -> Any:
    """Load one strict JSON document (a benchmark, a run, a report).

    Syntax errors are reported as ``file:line: expected valid JSON, got ...``.
    """
    shown = display if display is not None else str(path)
    text = read_utf8(path, display=shown)
    if text.startswith("\ufeff"):
        raise PointerError(shown, "/", "expected JSON without a byte-order mark")
    return loads_strict(text, path=shown, line=None)
