"""Strict JSONL and JSON document reading: every rule and its exact message."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import (
    FieldError,
    InputError,
    JsonLine,
    PointerError,
    TornLineError,
    iter_jsonl,
    load_json_document,
    read_jsonl,
)
from ctxbench.core.errors import printable
from ctxbench.core.jsonl import loads_strict


def _write(tmp_path: Path, data: bytes, name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _error(tmp_path: Path, data: bytes) -> FieldError:
    path = _write(tmp_path, data)
    with pytest.raises(FieldError) as info:
        read_jsonl(path, display="t.jsonl")
    return info.value


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a":1}\n\n   \n\t\n{"b":2}\n')
    rows = read_jsonl(path, display="t.jsonl")
    assert rows == [JsonLine("t.jsonl", 1, {"a": 1}), JsonLine("t.jsonl", 5, {"b": 2})]


def test_display_defaults_to_the_path(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a":1}\n')
    assert read_jsonl(path)[0].path == str(path)


def test_empty_file_has_no_records(tmp_path: Path) -> None:
    assert read_jsonl(_write(tmp_path, b"")) == []


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    rows = read_jsonl(_write(tmp_path, b'{"a":1}\r\n{"b":2}\r\n'))
    assert [(r.line, r.value) for r in rows] == [(1, {"a": 1}), (2, {"b": 2})]


def test_iter_jsonl_is_lazy_and_stops_at_the_first_bad_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a":1}\n[2]\n{"c":3}\n')
    rows = iter_jsonl(path, display="t.jsonl")
    assert next(rows).value == {"a": 1}
    with pytest.raises(FieldError, match=r"^t\.jsonl:2: expected a JSON object, got an array$"):
        next(rows)


def test_duplicate_key(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1}\n{"a":1,"b":2,"a":3}\n')
    assert str(err) == (
        "t.jsonl:2: /a: expected each key at most once in an object, got a duplicate key"
    )
    assert err.field == "/a"


def test_duplicate_key_nested(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"outer":{"k":1,"k":2}}\n')
    assert str(err) == (
        "t.jsonl:1: /outer/k: expected each key at most once in an object, got a duplicate key"
    )


def test_duplicate_key_inside_array_of_objects(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"xs":[{"id":1},{"id":2,"id":2}]}\n')
    assert str(err) == (
        "t.jsonl:1: /xs/1/id: expected each key at most once in an object, got a duplicate key"
    )


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("-Infinity", "-Infinity"),
        ("1e400", "1e400"),
        ("-1e400", "-1e400"),
        ("[1, 2.5e999]", "2.5e999"),
    ],
)
def test_non_finite_numbers_are_rejected(tmp_path: Path, token: str, shown: str) -> None:
    err = _error(tmp_path, b'{"ok":1}\n{"x":' + token.encode() + b"}\n")
    where = "/x/1" if token.startswith("[") else "/x"
    assert str(err) == (
        f"t.jsonl:2: {where}: expected finite JSON numbers, got the non-finite number {shown}"
    )


def test_large_but_finite_numbers_are_kept(tmp_path: Path) -> None:
    rows = read_jsonl(_write(tmp_path, b'{"x":1e308,"y":-1.7976931348623157e308,"z":5e-324}\n'))
    assert rows[0].value == {"x": 1e308, "y": -1.7976931348623157e308, "z": 5e-324}


def test_integer_too_long_to_parse_is_a_located_error(tmp_path: Path) -> None:
    # Python refuses int(str) beyond 4300 digits; before the fix this escaped as ValueError.
    err = _error(tmp_path, b'{"a":1}\n{"x":' + b"7" * 5000 + b"}\n")
    assert str(err) == (
        "t.jsonl:2: /x: expected a number of at most 4300 characters, got a number of 5000 "
        "characters"
    )


@pytest.mark.parametrize(
    ("line", "got"),
    [
        (b"[1,2]", "an array"),
        (b'"text"', 'the string "text"'),
        (b"42", "the integer 42"),
        (b"4.5", "the number 4.5"),
        (b"null", "null"),
        (b"true", "the boolean true"),
    ],
)
def test_each_line_must_be_an_object(tmp_path: Path, line: bytes, got: str) -> None:
    err = _error(tmp_path, b'{"a":1}\n\n' + line + b"\n")
    assert str(err) == f"t.jsonl:3: expected a JSON object, got {got}"


@pytest.mark.parametrize(
    ("line", "got"),
    [
        (b"{", "Expecting property name enclosed in double quotes at column 2"),
        (b'{"a":1} x', "Extra data at column 9"),
        (b"{'a':1}", "Expecting property name enclosed in double quotes at column 2"),
        (b'{"a":}', "Expecting value at column 6"),
        (b"\xef\xbb\xbf{}", "Expecting value at column 1"),
    ],
)
def test_invalid_json_reports_the_column(tmp_path: Path, line: bytes, got: str) -> None:
    err = _error(tmp_path, b'{"a":1}\n' + line + b"\n")
    assert str(err) == f"t.jsonl:2: expected valid JSON, got {got}"
    assert not isinstance(err, TornLineError)


def test_invalid_utf8_reports_the_byte_offset_in_the_line(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1}\n{"a":"\xff"}\n')
    assert str(err) == "t.jsonl:2: expected UTF-8 text, got an invalid byte at offset 6"


def test_invalid_utf8_in_an_unterminated_last_line_is_not_torn(tmp_path: Path) -> None:
    # The bad byte is in the middle, so this is corruption, not an interrupted write.
    err = _error(tmp_path, b'{"a":"\xff"}')
    assert str(err) == "t.jsonl:1: expected UTF-8 text, got an invalid byte at offset 6"
    assert not isinstance(err, TornLineError)


TORN = (
    "expected a complete last line ending in a newline"
    ", got a torn line (the writer was interrupted)"
)


@pytest.mark.parametrize(
    "tail",
    [b'{"b":', b'{"b":"unfinished', b"{", b'{"b":[1,2', b'{"b":"\xc3'],
)
def test_torn_last_line_is_reported_as_torn(tmp_path: Path, tail: bytes) -> None:
    # The last case is cut inside a two-byte UTF-8 character (\xc3\xa9 = "é").
    err = _error(tmp_path, b'{"a":1}\n\n' + tail)
    assert isinstance(err, TornLineError)
    assert str(err) == f"t.jsonl:3: {TORN}"


def test_invalid_line_with_newline_is_not_torn(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1}\n{"b":\n')
    assert not isinstance(err, TornLineError)
    assert str(err) == "t.jsonl:2: expected valid JSON, got Expecting value at column 6"


def test_valid_last_line_without_newline_is_accepted(tmp_path: Path) -> None:
    rows = read_jsonl(_write(tmp_path, b'{"a":1}\n{"b":"\xc3\xa9"}'))
    assert [(r.line, r.value) for r in rows] == [(1, {"a": 1}), (2, {"b": "é"})]


def test_unterminated_last_line_that_is_not_an_object_is_not_torn(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1}\n12')
    assert str(err) == "t.jsonl:2: expected a JSON object, got the integer 12"


def test_unterminated_duplicate_key_is_reported_as_duplicate(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1,"a":2}')
    assert not isinstance(err, TornLineError)
    assert str(err) == (
        "t.jsonl:1: /a: expected each key at most once in an object, got a duplicate key"
    )


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^nope\.jsonl: file not found$"):
        read_jsonl(tmp_path / "nope.jsonl", display="nope.jsonl")
    with pytest.raises(InputError, match=r"^dir: expected a file, got a directory$"):
        read_jsonl(tmp_path, display="dir")


def test_deep_nesting_is_a_located_error(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    assert str(err) == (
        "t.jsonl:1: /a" + "/0" * 63 + ": expected JSON nested at most 64 deep, got deeper nesting"
    )


def test_nesting_at_the_limit_is_accepted_and_one_more_is_not(tmp_path: Path) -> None:
    ok = b'{"a":' + b"[" * 63 + b"]" * 63 + b"}\n"
    assert read_jsonl(_write(tmp_path, ok))[0].line == 1
    err = _error(tmp_path, b'{"a":' + b"[" * 64 + b"]" * 64 + b"}\n")
    assert err.expected == "JSON nested at most 64 deep"


def test_cr_only_line_endings_are_named(tmp_path: Path) -> None:
    err = _error(tmp_path, b'{"a":1}\r{"a":2}\r\n')
    assert str(err) == (
        "t.jsonl:1: expected lines that end in LF, got a lone CR (carriage return) inside the "
        "line; CR-only line endings are not JSON Lines"
    )


def test_a_line_over_the_limit_is_refused_without_reading_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.core import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 32)
    path = _write(tmp_path, b'{"a":1}\n{"b":"' + b"x" * 100 + b'"}\n{"c":3}\n')
    found = list(jsonl.scan_jsonl(path, display="t.jsonl"))
    assert str(found[1]) == "t.jsonl:2: expected a line of at most 32 bytes, got a longer line"
    assert isinstance(found[2], jsonl.JsonLine) and found[2].line == 3


def test_a_fifo_is_refused_rather_than_opened(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"^p: expected a regular file, got a named pipe"):
        read_jsonl(fifo, display="p")
    with pytest.raises(InputError, match=r"^p: expected a regular file, got a named pipe"):
        load_json_document(fifo, display="p")


# -- JSON documents ----------------------------------------------------------------------


def test_load_json_document_values(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a": [1, 2.5, "x", null, true], "b": {}}', "d.json")
    assert load_json_document(path) == {"a": [1, 2.5, "x", None, True], "b": {}}
    assert load_json_document(_write(tmp_path, b"[1]", "l.json")) == [1]


def test_load_json_document_rejects_a_bom(tmp_path: Path) -> None:
    path = _write(tmp_path, b'\xef\xbb\xbf{"a":1}', "d.json")
    with pytest.raises(PointerError) as info:
        load_json_document(path, display="d.json")
    assert str(info.value) == "d.json: /: expected JSON without a byte-order mark"


def test_load_json_document_syntax_error_reports_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{\n  "a": 1,\n  "b": }\n', "d.json")
    with pytest.raises(FieldError) as info:
        load_json_document(path, display="d.json")
    assert str(info.value) == "d.json:3: expected valid JSON, got Expecting value at column 8"


def test_load_json_document_invalid_utf8_reports_line_and_offset(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{\n "a": "\xff"}', "d.json")
    with pytest.raises(FieldError) as info:
        load_json_document(path, display="d.json")
    assert str(info.value) == "d.json:2: expected UTF-8 text, got an invalid byte at offset 9"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'{"a": 1, "a": 2}',
            "d.json:1: /a: expected each key at most once in an object, got a duplicate key",
        ),
        (b'{"a": NaN}',
         "d.json:1: /a: expected finite JSON numbers, got the non-finite number NaN"),
        (b'{\n"a":\n 1e400}',
         "d.json:3: /a: expected finite JSON numbers, got the non-finite number 1e400"),
        (b'{"a": [' + b"[" * 70 + b"]" * 70 + b"]}",
         "d.json:1: /a/0" + "/0" * 62 + ": expected JSON nested at most 64 deep, "
         "got deeper nesting"),
    ],
)
def test_load_json_document_strict_rules(tmp_path: Path, data: bytes, message: str) -> None:
    path = _write(tmp_path, data, "d.json")
    with pytest.raises(FieldError) as info:
        load_json_document(path, display="d.json")
    assert str(info.value) == message


def test_load_json_document_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^x\.json: file not found$"):
        load_json_document(tmp_path / "x.json", display="x.json")
    with pytest.raises(InputError, match=r"^d: expected a file, got a directory$"):
        load_json_document(tmp_path, display="d")


def test_loads_strict_locates_at_the_given_line() -> None:
    with pytest.raises(FieldError, match=r"^p:7: expected valid JSON, got Expecting value"):
        loads_strict("", path="p", line=7)
    assert loads_strict('{"a": [1]}', path="p", line=1) == {"a": [1]}


# -- properties --------------------------------------------------------------------------

_keys = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=8
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)
_objects = st.dictionaries(_keys, _values, max_size=6)


@given(
    records=st.lists(_objects, min_size=1, max_size=6),
    blanks=st.lists(st.integers(min_value=0, max_value=2), min_size=6, max_size=6),
    final_newline=st.booleans(),
    ascii_only=st.booleans(),
)
def test_any_finite_object_round_trips_with_its_line_number(
    tmp_path_factory: pytest.TempPathFactory,
    records: list[dict[str, object]],
    blanks: list[int],
    final_newline: bool,
    ascii_only: bool,
) -> None:
    lines: list[str] = []
    expected_lines: list[int] = []
    for record, n_blank in zip(records, blanks, strict=False):
        lines.extend([""] * n_blank)
        lines.append(json.dumps(record, ensure_ascii=ascii_only, allow_nan=False))
        expected_lines.append(len(lines))
    text = "\n".join(lines) + ("\n" if final_newline else "")
    path = tmp_path_factory.mktemp("rt") / "t.jsonl"
    path.write_bytes(text.encode("utf-8"))
    rows = read_jsonl(path)
    assert [r.line for r in rows] == expected_lines
    assert [r.value for r in rows] == records
    for row in rows:
        assert all(
            not isinstance(v, float) or math.isfinite(v) for v in _leaves(row.value)
        )


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@given(
    obj=st.dictionaries(_keys, _scalars, min_size=1, max_size=5),
    data=st.data(),
    nested=st.booleans(),
)
def test_any_line_with_a_duplicated_key_is_rejected(
    tmp_path_factory: pytest.TempPathFactory,
    obj: dict[str, object],
    data: st.DataObject,
    nested: bool,
) -> None:
    items = [
        json.dumps(k) + ":" + json.dumps(v, allow_nan=False) for k, v in obj.items()
    ]
    key = data.draw(st.sampled_from(sorted(obj)))
    dup_value = data.draw(_scalars)
    position = data.draw(st.integers(min_value=0, max_value=len(items)))
    items.insert(position, json.dumps(key) + ":" + json.dumps(dup_value))
    body = "{" + ",".join(items) + "}"
    line = '{"wrap":' + body + "}" if nested else body
    path = tmp_path_factory.mktemp("dup") / "t.jsonl"
    path.write_bytes(('{"first":1}\n' + line + "\n").encode("utf-8"))
    with pytest.raises(FieldError) as info:
        read_jsonl(path, display="t.jsonl")
    pointer = ("/wrap/" if nested else "/") + key.replace("~", "~0").replace("/", "~1")
    assert info.value.field == pointer
    assert str(info.value) == (
        f"t.jsonl:2: {printable(pointer)}: expected each key at most once in an object, got a "
        "duplicate key"
    )


_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.text(max_size=4))
_doc = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3),
    st.dictionaries(st.text(max_size=4), inner, min_size=1, max_size=3)), max_leaves=12)


@given(doc=st.dictionaries(st.text(max_size=4), _doc, min_size=1, max_size=4),
       data=st.data(), token=st.sampled_from(["NaN", "Infinity", "-Infinity"]))
def test_a_non_finite_number_is_located_by_line_and_pointer(
        doc: dict[str, object], data: st.DataObject, token: str) -> None:
    from ctxbench.core.jsonl import loads_strict

    paths: list[tuple[object, ...]] = []

    def walk(value: object, prefix: tuple[object, ...]) -> None:
        items = value.items() if isinstance(value, dict) else (
            enumerate(value) if isinstance(value, list) else ())
        for key, item in items:
            paths.append((*prefix, key))
            walk(item, (*prefix, key))

    walk(doc, ())
    path = data.draw(st.sampled_from(paths))
    target: object = doc
    for part in path[:-1]:
        target = target[part]  # type: ignore[index]
    target[path[-1]] = "\x00MARK"  # type: ignore[index]
    marked = json.dumps(doc, indent=1)
    at = marked.index('"\\u0000MARK"')  # where the token goes (a key may spell it too)
    text = marked.replace('"\\u0000MARK"', token, 1)
    with pytest.raises(FieldError) as info:
        loads_strict(text, path="d.json", line=None)
    pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
    assert info.value.field == pointer
    assert info.value.line == text[:at].count("\n") + 1


# The fast decoder (orjson with its guards) must give exactly what the strict decoder
# gives: the same value, types and float bits included, or the same error.

_ws = st.sampled_from(["", "", "", " ", "\t", "\n", "\r\n", "  "])
_number_tokens = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=False).map(repr).map(lambda s: s.replace("inf", "1e999")),
    st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?",
                  fullmatch=True),
    st.sampled_from(["NaN", "Infinity", "1e400", "-0", "-0.0", "18446744073709551616",
                     "9223372036854775808", "-9223372036854775809", "01", "1."]),
)
_string_tokens = st.one_of(
    st.text(max_size=6).map(json.dumps),
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.sampled_from(['"a\\":"', '": "', '"\\u0000"', '"\\ud800"', '"\\\\"', '" x"',
                     '"a" ', '"\\"', '"tab\there"']),
)


def _render(value: object, draw: st.DrawFn) -> str:
    ws = draw(_ws)
    if isinstance(value, list) and value and value[0] == "obj":
        items = [f"{draw(_ws)}{k}{draw(_ws)}:{draw(_ws)}{_render(v, draw)}{draw(_ws)}"
                 for k, v in value[1:]]
        return ws + "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return ws + "[" + ",".join(_render(v, draw) for v in value) + "]"
    return ws + str(value)


@st.composite
def _json_texts(draw: st.DrawFn) -> str:
    leaf = _number_tokens | _string_tokens | st.sampled_from(["true", "false", "null"])
    keys = st.sampled_from(['"a"', '"b"', '"a"', '"k\\n"', '""', '"x y"']) | _string_tokens
    tree = draw(st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=4)
        | st.lists(st.tuples(keys, inner), max_size=5).map(lambda kv: ["obj", *kv]),
        max_leaves=16))
    return _render(tree, draw) + draw(_ws)


def _outcome(decode: object, text: str) -> tuple[str, object]:
    try:
        value = decode(text)  # type: ignore[operator]
    except FieldError as exc:
        return ("error", str(exc))
    return ("value", json.dumps(value, sort_keys=False) + repr(_types(value)))


def _types(value: object) -> object:
    """The value with every leaf's type and float bits, so 1 and 1.0, 0.0 and -0.0 differ."""
    if isinstance(value, dict):
        return [(k, _types(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_types(v) for v in value]
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


def _strict_only(text: str) -> object:
    from ctxbench.core import jsonl

    value = jsonl._strict_decode(text, path="t.json", line=3)
    if (type(value) is dict or type(value) is list) and (
            text.count("{") + text.count("[") > jsonl.MAX_DEPTH
            and jsonl.depth_exceeds(value)):
        raise jsonl._located(text, "t.json", 3)
    return value


@given(text=_json_texts())
def test_the_fast_decoder_agrees_with_the_strict_one(text: str) -> None:
    fast = _outcome(lambda t: loads_strict(t, path="t.json", line=3), text)
    assert fast == _outcome(_strict_only, text)


@pytest.mark.parametrize("text", [
    '{"a":1,"a":2}', '{"a":1,"a" :2}', '{"a":1,\n"a"\t:2}', '{"a":"x","a":"y"}',
    '{"a":"\\"","a":1}', '[{"x":1},{"x":1,"x":2}]', '{"w":{"b":[1,{"c":1,"c":1}]}}',
    '18446744073709551616', '[-9223372036854775809]', '{"n": 1e19}', '{"n": 1e400}',
    '{"a": "\\":"}', '["a", "b"]', '{"s": "' + "1" * 5000 + '"}',
    '[' + "1" * 4301 + ']', '[0.' + "1" * 4299 + ']', '[NaN]', '{"d":' * 65 + '1' + '}' * 65,
])
def test_the_fast_decoder_leaves_what_it_cannot_prove_to_the_strict_one(text: str) -> None:
    assert _outcome(lambda t: loads_strict(t, path="t.json", line=3), text) == \
        _outcome(_strict_only, text)


def test_many_numbers_just_under_the_token_limit_are_read_in_linear_time() -> None:
    # Each 4,300-digit number is allowed; the over-long-run guard must not rescan a run
    # from each of its characters (that made this 2.6 MB line take minutes).
    from ctxbench.core.jsonl import _LONG_NUMBER

    run = "1" * 4300
    text = "[" + ",".join([run] * 600) + "]"
    assert _LONG_NUMBER.search(text) is None
    assert _LONG_NUMBER.search("[" + run + "1]") is not None
    assert _LONG_NUMBER.search('["x' + run + '1"]') is not None
    assert _LONG_NUMBER.search("[-" + run + "]") is not None
