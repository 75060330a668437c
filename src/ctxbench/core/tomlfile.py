"""TOML documents loaded with located errors and bounded size, nesting and numbers."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from ctxbench.core.errors import FieldError, InputError
from ctxbench.core.jsonlocate import depth_exceeds
from ctxbench.core.limits import MAX_DEPTH, MAX_NUMBER_CHARS, MAX_TOML_BYTES
from ctxbench.core.textfile import read_utf8

if TYPE_CHECKING:
    from ctxbench.core.tomllocate import TomlLines

__all__ = ["load_toml", "load_toml_lines"]

_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_LONG_NUMBER = re.compile("[0-9_]{" + str(MAX_NUMBER_CHARS + 1) + ",}")
_OPENERS = re.compile(r"[\[{]")


def load_toml(path: str | os.PathLike[str], *, display: str | None = None) -> dict[str, Any]:
    """Parse a TOML file; a syntax error becomes ``file:line: expected valid TOML, got ...``.

    Files over ``MAX_TOML_BYTES``, numbers over ``MAX_NUMBER_CHARS`` digits and nesting
    deeper than ``MAX_DEPTH`` are refused with their line.
    """
    return _load(path, display)[0]


def load_toml_lines(path: str | os.PathLike[str], *,
                    display: str | None = None) -> tuple[dict[str, Any], TomlLines]:
    """:func:`load_toml`, and where each key is, so a validator's errors name their line:

        document, lines = load_toml_lines("exp.toml")
        with lines.locating("exp.toml"):
            parse(document)      # "exp.toml: [model].x: ..." -> "exp.toml:9: [model].x: ..."
    """
    from ctxbench.core.tomllocate import key_lines

    value, text = _load(path, display)
    return value, key_lines(text)


def _load(path: str | os.PathLike[str], display: str | None) -> tuple[dict[str, Any], str]:
    shown = display if display is not None else str(path)
    text = read_utf8(path, display=shown, limit=MAX_TOML_BYTES)
    import tomllib  # here, not at import: a command given no TOML file does not load it

    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _AT.search(message)
        at: int | None = int(match.group(1)) if match else None
        if at is None and "(at end of document)" in message:
            # Truncated input (an unterminated string or array) is located at its last line.
            at = max(1, len(text.splitlines()))
        detail = _AT.sub("", message).strip()
        raise FieldError(shown, at, None, "valid TOML", got_text=detail) from None
    except RecursionError:
        raise _too_deep(shown, text) from None
    except ValueError:
        # tomllib converts integers with int(), which refuses more than 4,300 digits.
        long = _LONG_NUMBER.search(text)
        line = text.count("\n", 0, long.start()) + 1 if long else None
        raise FieldError(shown, line, None, f"a number of at most {MAX_NUMBER_CHARS} digits",
                         got_text="a longer number") from None
    if depth_exceeds(value):
        raise _too_deep(shown, text)
    return value, text


def _too_deep(shown: str, text: str) -> InputError:
    # The line holding the most openers is where the nesting builds up.
    best, best_line = -1, None
    for number, line in enumerate(text.split("\n"), start=1):
        count = len(_OPENERS.findall(line))
        if count > best:
            best, best_line = count, number
    return FieldError(shown, best_line, None, f"TOML nested at most {MAX_DEPTH} deep",
                      got_text="deeper nesting")
