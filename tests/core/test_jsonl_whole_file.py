"""The whole-file fast path of iter_jsonl: it reads exactly what the line reader reads.

Every file either gives the line reader's objects and line numbers, or leaves the file to
the line reader (None), which then decides; it never accepts a file the line reader
refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import FieldError, jsonl
from ctxbench.core.limits import MAX_NUMBER_CHARS


def _line_reader(path: Path) -> list[tuple[int, Any]] | FieldError:
    """The line-by-line reader alone, or the error it raises."""
    try:
        return [(item.line, item.value)
                for number, raw, complete in jsonl.iter_lines(path, "t.jsonl")
                if (item := jsonl.decode_line("t.jsonl", number, raw, complete)) is not None]
    except FieldError as exc:
        return exc


def _whole(path: Path) -> list[jsonl.JsonLine] | None:
    """The fast path's lines, or None where it leaves the file to the line reader."""
    values = jsonl.whole_file_values(path, display="t.jsonl")
    return None if values is None else jsonl.lines_of(values, "t.jsonl")


def _agree(path: Path) -> list[tuple[int, Any]] | None:
    whole = _whole(path)
    lines = _line_reader(path)
    if whole is None:
        return None
    assert not isinstance(lines, FieldError), f"accepted what the line reader refuses: {lines}"
    got = [(item.line, item.value) for item in whole]
    assert got == lines
    # Same values and the same kinds (an int stays an int, a float a float).
    assert [[type(v) for v in value.values()] for _, value in got] == \
        [[type(v) for v in value.values()] for _, value in lines]
    return got


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    return path


def test_plain_rows_take_the_fast_path(tmp_path: Path) -> None:
    data = b'{"a": 1, "b": "x"}\n{"a": 2.5, "b": null, "c": [1, {"d": true}]}\n'
    got = _agree(_write(tmp_path, data))
    assert got == [(1, {"a": 1, "b": "x"}), (2, {"a": 2.5, "b": None, "c": [1, {"d": True}]})]


def test_iter_jsonl_gives_the_same_lines_either_way(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, b'{"a": 1}\n{"a": "q\\"uote", "b": {"c": "\\u00e9"}}\n')
    fast = list(jsonl.iter_jsonl(path, display="t.jsonl"))
    monkeypatch.setattr(jsonl, "whole_file_values", lambda path, display=None: None)
    slow = list(jsonl.iter_jsonl(path, display="t.jsonl"))
    assert fast == slow


@pytest.mark.parametrize("data", [
    # Refused by the line reader: each must leave the file to it.
    b'{"a": 1, "a": 2}\n',                       # a duplicate key
    b'{"a": 1}\n{"b": "x", "b": "y"}\n',          # one in a later line
    b'{"a": "\\"", "a": 2}\n',                    # a duplicate key beside an escape
    b'{"k\\u0022": 1, "k\\u0022": 2}\n',          # escaped duplicate keys
    b'{"a": NaN}\n',
    b'{"a": Infinity}\n',
    b'{"a": 1e999}\n',
    b'{"a": 1}\n{"b": \n',                         # a torn line inside
    b'\xef\xbb\xbf{"a": 1}\n',                     # a byte-order mark
    b'{"a": "\xff"}\n',                            # invalid UTF-8
    b'[1, 2]\n',                                   # not an object
    b'{"a": 1}, {"b": 2}\n',                       # two values on one line
    b'{"a": [1\n2]}\n',                            # one value over two lines
    b'{"a": 1}\r{"b": 2}\n',                       # a lone CR
    b'{"a": ' + b'1' * (MAX_NUMBER_CHARS + 1) + b'}\n',  # a number too long
    b'{"a": ' + b'[' * 200 + b']' * 200 + b'}\n',  # nested too deep
])
def test_what_the_line_reader_refuses_is_left_to_it(tmp_path: Path, data: bytes) -> None:
    path = _write(tmp_path, data)
    assert isinstance(_line_reader(path), FieldError)
    assert _whole(path) is None


@pytest.mark.parametrize("data", [
    # Accepted by the line reader but read otherwise by orjson, or not certainly the
    # same: the fast path declines and the line reader reads them.
    b'{"a": 18446744073709551616}\n',              # beyond 64 bits: orjson gives a float
    b'{"a": 1e300}\n',                              # a float of 2**63 or more
    b'{"a": 1.5}\n{"a": -9.3e18}\n',                # one in a later flat row
    b'{"a": [1.5]}\n{"a": {"b": -9.3e18}}\n',       # one inside a nested member
    b'{"a": 1}\n\n{"b": 2}\n',                     # a blank line
    b'{"a": 1}\n{"b": 2}',                          # a last line without its newline
    b'{"a": 1}\r\n{"b": 2}\r\n',                    # CRLF endings
    b'{"a": "' + b'1' * (MAX_NUMBER_CHARS + 1) + b'"}\n',  # a long digit run in a string
])
def test_what_orjson_may_read_otherwise_is_left_to_the_line_reader(tmp_path: Path,
                                                                   data: bytes) -> None:
    path = _write(tmp_path, data)
    assert not isinstance(_line_reader(path), FieldError)
    assert _whole(path) is None


def test_empty_and_large_files_take_the_line_path(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert _whole(_write(tmp_path, b"")) is None
    monkeypatch.setattr(jsonl, "_WHOLE_FILE_BYTES", 8)
    assert _whole(_write(tmp_path, b'{"a": 12}\n')) is None
    monkeypatch.setattr(jsonl, "_WHOLE_FILE_BYTES", 1 << 10)
    monkeypatch.setattr(jsonl, "_WHOLE_FILE_LINES", 2)
    assert _whole(_write(tmp_path, b'{}\n{}\n')) is not None
    assert _whole(_write(tmp_path, b'{}\n{}\n{}\n')) is None


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.text(alphabet=st.sampled_from('ab"\\:\u00e9 \t{}[],'), max_size=6))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.text(alphabet=st.sampled_from('ab"\\:'), max_size=3), inner,
                    max_size=3)), max_leaves=8)
_keys = st.text(alphabet=st.sampled_from('ab"\\:\u00e9'), max_size=3)


def _encode(value: Any) -> str:
    """JSON text, with a duplicate key where a member list repeats a name."""
    if isinstance(value, list) and value and value[0] == "__object__":
        return "{" + ", ".join(f"{json.dumps(k)}: {_encode(v)}" for k, v in value[1:]) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_encode(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_encode(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@given(rows=st.lists(st.lists(st.tuples(_keys, _values), max_size=4), min_size=1, max_size=4),
       separator=st.sampled_from(["\n", "\n\n", "\r\n"]))
def test_the_fast_path_never_disagrees(tmp_path_factory: pytest.TempPathFactory,
                                       rows: list[list[tuple[str, Any]]],
                                       separator: str) -> None:
    # Objects written member by member, so a repeated key is a duplicate in the text.
    text = "".join(_encode(["__object__", *members]) + separator for members in rows)
    path = tmp_path_factory.mktemp("whole") / "t.jsonl"
    path.write_bytes(text.encode("utf-8"))
    _agree(path)
