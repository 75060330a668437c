"""The TOML key locator: the line of every key path, the tricky forms included."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.core.errors import FieldError, PointerError
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.core.tomllocate import KeyPath, TomlLines, field_path, key_lines

TRICKY = '''\
# a comment with key = 1 and [table]
name = "x"   # trailing [comment]
text = """
fake = 1
[not_a_table]
[[nor_this]]
"""
literal = \'\'\'
other = 2 \'\'\'
"quoted key" = 1
'dotted.in.quotes' = 2
a.b . "c.d" = 3
inline = { x = 1, y = { z = [1, {w = 2}] } }
budgets = [
  128,  # a comment
  "x",
  """multi
line""",
]
esc = "a \\" b = 1"

[limits]
concurrency = "ten"

[[conditions]]
strategy = "full"

[[conditions]]
strategy = "compiled"
params.temperature = 0.5

[[conditions.extra]]
k = 1

[server."host.name"]
port = 80
'''


@pytest.fixture(scope="module")
def lines() -> TomlLines:
    tomllib.loads(TRICKY)  # the fixture is valid TOML
    return key_lines(TRICKY)


@pytest.mark.parametrize(("path", "line"), [
    (("name",), 2),
    (("text",), 3),
    (("literal",), 8),
    (("quoted key",), 10),
    (("dotted.in.quotes",), 11),
    (("a",), 12), (("a", "b"), 12), (("a", "b", "c.d"), 12),
    (("inline",), 13), (("inline", "y", "z", 1, "w"), 13),
    (("budgets",), 14), (("budgets", 0), 15), (("budgets", 1), 16), (("budgets", 2), 17),
    (("esc",), 20),
    (("limits",), 22), (("limits", "concurrency"), 23),
    (("conditions",), 25), (("conditions", 0), 25), (("conditions", 0, "strategy"), 26),
    (("conditions", 1), 28), (("conditions", 1, "strategy"), 29),
    (("conditions", 1, "params", "temperature"), 30),
    (("conditions", 1, "extra", 0), 32), (("conditions", 1, "extra", 0, "k"), 33),
    (("server", "host.name"), 35), (("server", "host.name", "port"), 36),
])
def test_each_key_is_found_on_its_line(lines: TomlLines, path: KeyPath, line: int) -> None:
    assert lines.get(path) == line


def test_text_inside_strings_and_comments_is_never_a_key(lines: TomlLines) -> None:
    missing: list[KeyPath] = [("fake",), ("not_a_table",), ("nor_this",), ("other",), ("b",)]
    for path in missing:
        assert lines.get(path) is None


def test_missing_keys_fall_back_to_their_table_or_line_1(lines: TomlLines) -> None:
    assert lines.line_of(("limits", "timeout_s")) == 22
    assert lines.line_of(("conditions", 1, "budgets")) == 28
    assert lines.line_of(("model", "provider")) == 1
    assert lines.line_of(()) == 1


@pytest.mark.parametrize(("field", "path"), [
    ("[conditions][0].budgets", ("conditions", 0, "budgets")),
    ("[scoring.judge].rubric", ("scoring", "judge", "rubric")),
    ("[limits]", ("limits",)),
    ("rule[2].glob", ("rule", 2, "glob")),
    ("name", ("name",)),
    ("/claims/0", ("claims", 0)),
    ("/a~1b/c~0d", ("a/b", "c~d")),
])
def test_field_names_as_validators_write_them(field: str, path: tuple[object, ...]) -> None:
    assert field_path(field) == path


def test_an_unknown_key_with_dots_is_found_whole() -> None:
    found = key_lines('x = 1\n[t]\n"a.b" = 2\n')
    assert found.locate_field("[t].a.b") == 3


def test_errors_get_their_line(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('a = 1\n\n[limits]\nconcurrency = "ten"\n', encoding="utf-8")
    document, lines = load_toml_lines(path)
    assert document["limits"]["concurrency"] == "ten"
    with pytest.raises(FieldError) as info, lines.locating(str(path)):
        raise FieldError(str(path), None, "[limits].concurrency", "an integer", "ten")
    assert str(info.value) == f'{path}:4: [limits].concurrency: expected an integer, got ' \
                              'the string "ten"'
    with pytest.raises(FieldError) as info, lines.locating(str(path)):
        raise FieldError(str(path), None, "[limits].retries", "a required field",
                         got_text="nothing")
    assert str(info.value).startswith(f"{path}:3: [limits].retries: ")
    with pytest.raises(PointerError) as pointer, lines.locating(str(path)):
        raise PointerError(str(path), "/limits/concurrency", "expected an integer, got text")
    assert str(pointer.value) == f"{path}:4: /limits/concurrency: expected an integer, got text"
    other = FieldError("other.toml", None, "x", "y", 1)
    with pytest.raises(FieldError) as info, lines.locating(str(path)):
        raise other
    assert info.value is other  # an error about another file is left as it is


_BARE = st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True)
_QUOTED = st.text(st.sampled_from(list("ab .=#[]'\\\"\n")), min_size=1, max_size=6)
_VALUES = st.sampled_from([
    "1", '"s"', "'lit'", '"""\nk = 1\n[t]\n"""', "'''\n[[u]]\nv = 2'''", "[\n  1,\n  2,\n]",
    "{ p = 1, q = [1, 2] }", "true", "1979-05-27T07:32:00Z", '"a = b # c"',
])


def _key(name: str) -> str:
    if name.replace("-", "").replace("_", "").isalnum() and name.isascii():
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(_BARE, _QUOTED),
                          st.lists(st.tuples(st.one_of(_BARE, _QUOTED), _VALUES),
                                   min_size=1, max_size=4),
                          st.booleans()),
                min_size=1, max_size=4))
def test_generated_documents(tables: list[tuple[str, list[tuple[str, str]], bool]]) -> None:
    """Random tables, arrays of tables, quoted keys and multi-line values: each key and
    header is found on the line it was written on."""
    out: list[str] = []  # physical lines
    expected: dict[KeyPath, int] = {}
    kinds: dict[str, bool] = {}
    counts: dict[str, int] = {}
    for name, pairs, wanted in tables:
        many = kinds.setdefault(name, wanted)
        if not many and name in counts:
            continue  # a table is defined once
        counts[name] = counts.get(name, -1) + 1
        out.append(f"[[{_key(name)}]]" if many else f"[{_key(name)}]")
        prefix: KeyPath = (name, counts[name]) if many else (name,)
        expected[prefix] = len(out)
        used: set[str] = set()
        for key, value in pairs:
            if key in used:
                continue
            used.add(key)
            expected[(*prefix, key)] = len(out) + 1
            out.extend(f"{_key(key)} = {value}".split("\n"))
    source = "\n".join(out) + "\n"
    tomllib.loads(source)  # always a valid document
    found = key_lines(source)
    for path, line in expected.items():
        assert found.get(path) == line, (path, source)
