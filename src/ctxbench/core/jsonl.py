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
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

import orjson

from ctxbench.core.errors import FieldError, InputError, PointerError
from ctxbench.core.jsonlocate import depth_exceeds, locate
from ctxbench.core.limits import MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_LINE_BYTES, MAX_NUMBER_CHARS
from ctxbench.core.textfile import check_readable, open_error, read_utf8

__all__ = [
    "JsonLine",
    "TornLineError",
    "iter_jsonl",
    "iter_jsonl_lines",
    "iter_lines",
    "lines_of",
    "load_json_document",
    "loads_strict",
    "read_jsonl",
    "scan_jsonl",
    "whole_file_values",
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
    if len(token) > MAX_NUMBER_CHARS:
        raise _NonFinite(token)
    value = float(token)
    if value in (math.inf, -math.inf):
        raise _NonFinite(token)
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)

_UNDECIDED = object()
# orjson reads an integer outside [-2**63, 2**64) as a float; a float this large may be one.
_INT_AS_FLOAT = float(2**63)
_KEY_END = re.compile(r'"[ \t\n\r]*:')
# Anchored at the start of a run (the lookbehind), so each run is scanned once: without
# it a text of many runs just under the limit is scanned quadratically (a 258 KB line of
# 4,300-digit numbers took 1.2 s, a 64 MiB one would take minutes).
_LONG_NUMBER = re.compile(f"(?<![-+.0-9eE])[-+.0-9eE]{{{MAX_NUMBER_CHARS + 1}}}")
_LONG_NUMBER_BYTES = re.compile(_LONG_NUMBER.pattern.encode("ascii"))
_KEY_END_BYTES = re.compile(_KEY_END.pattern.encode("ascii"))


def _fast_decode(text: str) -> Any:
    """orjson's value of ``text`` when it is provably the strict decoder's, else undecided.

    orjson (a C parser) accepts exactly the JSON grammar the strict decoder accepts, reads
    floats correctly rounded as ``float()`` does, and refuses NaN, Infinity and a number
    that overflows a double. It differs from the strict rules in three ways, each detected
    here, leaving the text to the strict decoder (which decides, and locates any error):

    - a duplicate key keeps the last value, so the text held more strings than the value:
      without a backslash every quote of the text delimits a string, so the text's strings
      are half its quotes; with one, every key ends at a quote, JSON whitespace and a
      colon, so the keys are at most the count of those (a string holding one only makes
      the count larger). A count that differs from the value's is undecided;
    - an integer outside 64 bits becomes a float: a float of magnitude 2**63 or more is
      undecided;
    - a number token is not limited to ``MAX_NUMBER_CHARS``: a text holding a longer run
      of number characters (anywhere, strings included) is undecided.

    Nesting deeper than ``MAX_DEPTH`` is undecided too, so the strict path refuses it.
    """
    try:
        value = orjson.loads(text)
    except ValueError:  # orjson.JSONDecodeError, or a str that is not valid Unicode
        return _UNDECIDED
    if len(text) > MAX_NUMBER_CHARS and _LONG_NUMBER.search(text) is not None:
        return _UNDECIDED
    kind = type(value)
    if kind is dict or kind is list:
        counted = _strings_and_keys(value)
        if counted is None:
            return _UNDECIDED
        strings, keys = counted
        if "\\" not in text:
            if text.count('"') != 2 * strings:
                return _UNDECIDED
        elif len(_KEY_END.findall(text)) != keys:
            return _UNDECIDED
    elif kind is float and not -_INT_AS_FLOAT < value < _INT_AS_FLOAT:
        return _UNDECIDED
    return value


def _strings_and_keys(value: dict[str, Any] | list[Any]) -> tuple[int, int] | None:
    """Strings (keys included) and keys in ``value``; None if a float may be a big int or
    the nesting is deeper than ``MAX_DEPTH`` (the strict decoder then locates it)."""
    strings = keys = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if type(item) is dict:
            keys += len(item)
            item = item.values()
        for member in item:
            kind = type(member)
            if kind is str:
                strings += 1
            elif kind is float:
                if not -_INT_AS_FLOAT < member < _INT_AS_FLOAT:
                    return None
            elif kind is dict or kind is list:
                if depth == MAX_DEPTH:
                    return None
                todo.append((member, depth + 1))
    return strings + keys, keys


def loads_strict(text: str, *, path: str, line: int | None) -> Any:
    """Parse one JSON text strictly; errors are :class:`FieldError` located at ``line``.

    Beyond syntax, a duplicate key, a non-finite number, a number token longer than
    ``MAX_NUMBER_CHARS`` and nesting deeper than ``MAX_DEPTH`` are refused, each with
    its line (within a document) and the JSON pointer of the offending value.
    """
    value = _fast_decode(text)
    if value is not _UNDECIDED:
        return value
    value = _strict_decode(text, path=path, line=line)
    if (type(value) is dict or type(value) is list) and (
            text.count("{") + text.count("[") > MAX_DEPTH and depth_exceeds(value)):
        raise _located(text, path, line)
    return value


def _strict_decode(text: str, *, path: str, line: int | None) -> Any:
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        raise FieldError(
            path, at, None, "valid JSON", got_text=f"{exc.msg} at column {exc.colno}"
        ) from None
    except (ValueError, RecursionError):
        # A hook refused a duplicate key or a non-finite number, Python refused an
        # integer longer than sys.get_int_max_str_digits(), or the nesting exhausted the
        # recursion limit: find which and where.
        raise _located(text, path, line) from None


def _located(text: str, path: str, line: int | None) -> FieldError:
    found = locate(text)
    if found is None:
        return FieldError(path, line, None, "valid JSON", got_text="a value Python cannot decode")
    at = found.line if line is None else line + found.line - 1
    return FieldError(path, at, found.pointer, found.expected, got_text=found.got)


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One decoded JSONL object and the 1-based line it came from."""

    path: str
    line: int
    value: dict[str, Any]


class TornLineError(FieldError):
    """The last line has no newline and does not parse: a writer was interrupted."""


def iter_lines(path: str | os.PathLike[str], shown: str) -> Iterator[tuple[int, bytes, bool]]:
    """The one line splitter of every JSONL reader: (1-based number, bytes, complete).

    Lines end at LF only (a CR before it is JSON whitespace; a lone CR is part of the
    line). A line longer than ``MAX_LINE_BYTES`` is yielded as its first
    ``MAX_LINE_BYTES + 1`` bytes (the rest is skipped), so no line is held in memory whole.
    """
    check_readable(path, shown)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally below
    except OSError as exc:
        raise open_error(exc, shown) from None
    try:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            complete = raw.endswith(b"\n")
            if len(raw) > MAX_LINE_BYTES and not complete:
                rest = raw
                while rest and not rest.endswith(b"\n"):
                    rest = handle.readline(MAX_LINE_BYTES)
                complete = rest.endswith(b"\n")
            yield number, raw, complete
    finally:
        handle.close()


def decode_line(shown: str, number: int, raw: bytes, complete: bool) -> JsonLine | None:
    """Decode one line from :func:`iter_lines` (None for a blank line); raise its error."""
    if len(raw) > MAX_LINE_BYTES:
        raise FieldError(shown, number, None, f"a line of at most {MAX_LINE_BYTES} bytes",
                         got_text="a longer line")
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
        return None
    if number == 1 and text.startswith("\ufeff"):
        raise FieldError(shown, number, None, "JSON without a byte-order mark",
                         got_text="a byte-order mark")
    try:
        # Without its line ending, so an error at the end of the line reports
        # that line's column rather than column 1 of a phantom next line.
        value = loads_strict(text.rstrip("\r\n"), path=shown, line=number)
    except FieldError as exc:
        if exc.field is None and exc.expected == "valid JSON" and b"\r" in raw.rstrip(b"\r\n"):
            raise FieldError(shown, number, None, "lines that end in LF",
                             got_text="a lone CR (carriage return) inside the line; "
                             "CR-only line endings are not JSON Lines") from None
        if not complete and exc.field is None and exc.expected == "valid JSON":
            raise TornLineError(
                shown, number, None, "a complete last line ending in a newline",
                got_text="a torn line (the writer was interrupted)",
            ) from None
        raise
    if not isinstance(value, dict):
        raise FieldError(shown, number, None, "a JSON object", value)
    return JsonLine(shown, number, value)


# Files up to this size and line count are first read whole (see whole_file_values),
# the rest line by line: the whole-file path holds every decoded line at once, so both
# bound the memory it takes. A file of "[],[],..." makes one 56-byte list per 3 bytes
# (99 MB traced at 4 MiB). The gain is in files of this size (a 10,000-row public-eval
# file, 1.2 MB, 27 -> 18.5 ms), not in larger ones: a 9.7 MB CEF trial file read in
# blocks of 1 MiB took 66-74 ms against 76-78 ms line by line (best of 9, twice), not
# worth a second path.
_WHOLE_FILE_BYTES = 4 << 20
_WHOLE_FILE_LINES = 100_000


def whole_file_values(path: str | os.PathLike[str], *,
                      display: str | None = None) -> list[dict[str, Any]] | None:
    """Every object of a file that certainly reads without error (line ``i + 1`` is
    item ``i``), or None: then :func:`iter_jsonl` reads it line by line and decides.

    The fast path of :func:`iter_jsonl` (so its first line comes after the whole file
    is read): one read, one split and one orjson call per line (orjson validates the
    UTF-8 itself), with the checks of :func:`_fast_decode` made once over the whole file
    (a key's end never spans a newline, and a file's string count equals half its quotes
    only if every line's does, since no line holds more strings than half its quotes).
    Anything the line reader might refuse or read differently (a blank line, a CR, a
    byte-order mark anywhere, a torn or long line, invalid UTF-8, a value orjson may
    read otherwise) gives None; so does a file beyond ``_WHOLE_FILE_BYTES`` or
    ``_WHOLE_FILE_LINES``.
    """
    shown = display if display is not None else str(path)
    size = check_readable(path, shown)
    if not 0 < size <= _WHOLE_FILE_BYTES:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(_WHOLE_FILE_BYTES + 1)
    except OSError:
        return None
    if (len(data) > _WHOLE_FILE_BYTES or not data.endswith(b"\n") or b"\r" in data
            or b"\xef\xbb\xbf" in data or data.count(b"\n") > _WHOLE_FILE_LINES):
        return None
    lines = data.split(b"\n")
    lines.pop()  # after the final newline
    # Each line with its newline at most MAX_LINE_BYTES, as iter_lines reads it; a line
    # holds no more characters than bytes, so only a longer one can hold a long number.
    longest = max(map(len, lines))
    if longest >= MAX_LINE_BYTES or (longest > MAX_NUMBER_CHARS and any(
            len(line) > MAX_NUMBER_CHARS and _LONG_NUMBER_BYTES.search(line) is not None
            for line in lines)):
        return None
    loads = orjson.loads
    try:
        values = [loads(line) for line in lines]  # a blank line raises too
    except ValueError:
        return None
    counted = _file_strings_and_keys(values)
    if counted is None:
        return None
    strings, keys = counted
    if b"\\" not in data:
        if data.count(b'"') != 2 * strings:
            return None
    elif len(_KEY_END_BYTES.findall(data)) != keys:
        return None
    return values


def _file_strings_and_keys(values: list[Any]) -> tuple[int, int] | None:
    """:func:`_strings_and_keys` summed over the objects of a file; None if one is not an
    object or one is undecided. Flat objects (no member an object or array, the shape
    of row and trial files) are counted in C loops over all their members at once."""
    if set(map(type, values)) != {dict}:
        return None
    members = list(chain.from_iterable(map(dict.values, values)))
    kinds = list(map(type, members))
    present = set(kinds)
    keys = sum(map(len, values))
    if dict not in present and list not in present:
        if float in present and not max(map(abs, compress(members, map(is_, kinds, repeat(
                float))))) < _INT_AS_FLOAT:
            return None
        return kinds.count(str) + keys, keys
    strings = keys = 0
    for value in values:
        one = _strings_and_keys(value)
        if one is None:
            return None
        strings += one[0]
        keys += one[1]
    return strings, keys


def lines_of(values: list[dict[str, Any]], shown: str) -> list[JsonLine]:
    """The :class:`JsonLine` of each object of :func:`whole_file_values` (line i + 1)."""
    return [JsonLine(shown, number, value) for number, value in enumerate(values, 1)]


def iter_jsonl(path: str | os.PathLike[str], *, display: str | None = None) -> Iterator[JsonLine]:
    """Yield each object of a strict JSONL file with its line number.

    Raises :class:`FieldError` at the first bad line (use :func:`scan_jsonl` to read
    past bad lines).
    """
    shown = display if display is not None else str(path)
    whole = whole_file_values(path, display=shown)
    if whole is not None:
        yield from lines_of(whole, shown)
        return
    yield from iter_jsonl_lines(path, display=shown)


def iter_jsonl_lines(path: str | os.PathLike[str], *,
                     display: str | None = None) -> Iterator[JsonLine]:
    """:func:`iter_jsonl` line by line only (for a caller that has already tried
    :func:`whole_file_values`): each line decided, and its error located, on its own."""
    shown = display if display is not None else str(path)
    for number, raw, complete in iter_lines(path, shown):
        item = decode_line(shown, number, raw, complete)
        if item is not None:
            yield item


def scan_jsonl(path: str | os.PathLike[str], *,
               display: str | None = None) -> Iterator[JsonLine | InputError]:
    """Like :func:`iter_jsonl`, but yield each bad line's error and read on.

    A file that cannot be opened yields its one error. Lines are split exactly as
    :func:`iter_jsonl` splits them, so both see the same line numbers.
    """
    shown = display if display is not None else str(path)
    try:
        for number, raw, complete in iter_lines(path, shown):
            try:
                item = decode_line(shown, number, raw, complete)
            except InputError as exc:
                yield exc
                continue
            if item is not None:
                yield item
    except InputError as exc:
        yield exc


def read_jsonl(path: str | os.PathLike[str], *, display: str | None = None) -> list[JsonLine]:
    """Read a whole strict JSONL file (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path, display=display))


def load_json_document(path: str | os.PathLike[str], *, display: str | None = None) -> Any:
    """Load one strict JSON document (a benchmark, a run, a report).

    Syntax errors are reported as ``file:line: expected valid JSON, got ...``.
    """
    shown = display if display is not None else str(path)
    text = read_utf8(path, display=shown, limit=MAX_DOCUMENT_BYTES)
    if text.startswith("\ufeff"):
        raise PointerError(shown, "/", "expected JSON without a byte-order mark")
    return loads_strict(text, path=shown, line=None)
