"""The error tree: value descriptions, located rendering, pointers, lists, exit codes."""

from __future__ import annotations

import pytest

from ctxbench.core import (
    CtxbenchError,
    FieldError,
    InputError,
    InputErrors,
    IntegrityError,
    PointerError,
    ProviderError,
    RuntimeFailure,
    describe_value,
    pointer_join,
)
from ctxbench.core.errors import printable


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "the boolean true"),
        (False, "the boolean false"),
        (0, "the integer 0"),
        (-12, "the integer -12"),
        (1.5, "the number 1.5"),
        (1e21, "the number 1e+21"),
        (float("nan"), "the non-finite number nan"),
        (float("inf"), "the non-finite number inf"),
        (float("-inf"), "the non-finite number -inf"),
        ("false", 'the string "false"'),
        ("", 'the string ""'),
        ('say "hi"', 'the string "say \\"hi\\""'),
        ("a\\b", 'the string "a\\\\b"'),
        ("two\nlines", 'the string "two\\nlines"'),
        ({}, "an object"),
        ({"a": 1}, "an object"),
        ([], "an array"),
        ([1, 2], "an array"),
        ((1,), "an array"),
        (b"x", "a bytes"),
    ],
)
def test_describe_value_every_json_type(value: object, text: str) -> None:
    assert describe_value(value) == text


def test_describe_value_truncates_long_strings_at_60_characters() -> None:
    assert describe_value("x" * 60) == 'the string "' + "x" * 60 + '"'
    assert describe_value("y" * 61) == 'the string "' + "y" * 60 + '..." (61 characters)'


def test_field_error_renders_file_line_field() -> None:
    err = FieldError("trials.jsonl", 12, "resolved", "a JSON boolean", "false")
    assert str(err) == 'trials.jsonl:12: resolved: expected a JSON boolean, got the string "false"'
    assert (err.path, err.line, err.field) == ("trials.jsonl", 12, "resolved")
    assert err.expected == "a JSON boolean"
    assert err.got == 'the string "false"'
    assert err.render() == str(err)


def test_field_error_without_line_or_field() -> None:
    assert str(FieldError("a.toml", None, None, "valid TOML", got_text="junk")) == (
        "a.toml: expected valid TOML, got junk"
    )
    assert str(FieldError("a.jsonl", 3, None, "a JSON object", [1])) == (
        "a.jsonl:3: expected a JSON object, got an array"
    )


def test_field_error_got_text_overrides_the_value() -> None:
    err = FieldError("f", 1, "x", "an integer", 5, got_text="something else")
    assert str(err) == "f:1: x: expected an integer, got something else"


def test_field_error_default_got_is_null() -> None:
    assert str(FieldError("f", 2, "x", "an integer")) == "f:2: x: expected an integer, got null"


def test_pointer_error_renders_file_pointer_message() -> None:
    err = PointerError("bench.json", "/tasks/0/query", "expected a non-blank string, got null")
    assert str(err) == "bench.json: /tasks/0/query: expected a non-blank string, got null"
    assert err.pointer == "/tasks/0/query"
    assert err.message == "expected a non-blank string, got null"


def test_pointer_error_empty_pointer_renders_as_root() -> None:
    assert str(PointerError("doc.json", "", "bad")) == "doc.json: /: bad"


@pytest.mark.parametrize(
    ("base", "parts", "joined"),
    [
        ("/", ("a",), "/a"),
        ("", ("a",), "/a"),
        ("/", (), "/"),
        ("", (), "/"),
        ("/a", ("b", 0, "c"), "/a/b/0/c"),
        ("/a/", ("b",), "/a/b"),
        ("/", ("a~b",), "/a~0b"),
        ("/", ("a/b",), "/a~1b"),
        ("/", ("~/",), "/~0~1"),
        # "~1" in a key must become "~01", not be decoded as "/" later (RFC 6901 §4).
        ("/", ("~1",), "/~01"),
        ("/x", (3,), "/x/3"),
    ],
)
def test_pointer_join_escapes_per_rfc6901(base: str, parts: tuple[str | int, ...],
                                          joined: str) -> None:
    assert pointer_join(base, *parts) == joined


def test_input_errors_lists_each_error_on_its_own_line() -> None:
    errors = [
        FieldError("t.jsonl", 1, "a", "an integer", "1"),
        PointerError("b.json", "/x", "expected an object, got null"),
    ]
    combined = InputErrors(errors)
    assert str(combined) == (
        't.jsonl:1: a: expected an integer, got the string "1"\n'
        "b.json: /x: expected an object, got null"
    )
    assert combined.errors == tuple(errors)
    assert combined.total == 2
    assert combined.exit_code == 2


def test_input_errors_says_how_many_more_beyond_the_cap() -> None:
    shown = [InputError(f"e{i}") for i in range(3)]
    combined = InputErrors(shown, total=10)
    assert str(combined) == "e0\ne1\ne2\n... and 7 more error(s)"
    assert combined.total == 10


def test_input_errors_needs_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least one error"):
        InputErrors([])


def test_exit_codes_follow_the_tree() -> None:
    assert CtxbenchError("x").exit_code == 2
    assert InputError("x").exit_code == 2
    assert FieldError("f", 1, "a", "b").exit_code == 2
    assert PointerError("f", "/a", "m").exit_code == 2
    assert IntegrityError("digest mismatch").exit_code == 2
    assert RuntimeFailure("x").exit_code == 3
    err = ProviderError("429 too many requests", error_class="rate_limit", retryable=True)
    assert err.exit_code == 3
    assert (err.error_class, err.retryable, str(err)) == (
        "rate_limit", True, "429 too many requests"
    )
    assert ProviderError("boom", error_class="server").retryable is False


def test_subclass_relationships() -> None:
    for cls in (FieldError, PointerError, IntegrityError, InputErrors):
        assert issubclass(cls, InputError)
    assert issubclass(ProviderError, RuntimeFailure)
    assert issubclass(InputError, CtxbenchError)
    assert issubclass(RuntimeFailure, CtxbenchError)
    assert not issubclass(RuntimeFailure, InputError)


def test_field_error_names_an_empty_field() -> None:
    # A duplicated "" key must still show that a (blank) field is at fault.
    assert str(FieldError("t.jsonl", 2, "", "each key at most once", got_text="a duplicate")) == (
        "t.jsonl:2: : expected each key at most once, got a duplicate"
    )


def test_every_error_line_is_bounded_and_says_how_long_it_was() -> None:
    from ctxbench.core.errors import CtxbenchError, FieldError, PointerError
    from ctxbench.core.limits import MAX_MESSAGE_CHARS

    huge = "k" * 10**6
    err = FieldError("t.jsonl", 3, huge, "no such field", got_text=huge)
    text = str(err)
    assert len(text) <= MAX_MESSAGE_CHARS + 40
    assert text.startswith("t.jsonl:3: " + "k" * 200 + "... (1000000 characters):")
    assert text.endswith("(1000000 characters)") or "characters)" in text[-40:]
    pointer = PointerError("d.json", "/" + huge, "expected x, got y")
    assert str(pointer) == "d.json: /" + "k" * 199 + "... (1000001 characters): expected x, got y"
    plain = CtxbenchError("a\n" + "b" * 5000)
    assert str(plain) == "a\n" + "b" * MAX_MESSAGE_CHARS + "... (5000 characters)"
    assert describe_value(10**5000) == "an integer of over 4,000 digits"
    assert describe_value(10**300) == "an integer of 301 digits"


@pytest.mark.parametrize("hidden", ["\n", "\r", "\u2028", "\u2029", "\x85", "\x00", "\u200b"])
def test_a_name_from_the_input_never_splits_an_error_line(hidden: str) -> None:
    name = f"a{hidden}b"
    for error in (PointerError(f"f{hidden}.json", f"/x/{name}", "m"),
                  FieldError(f"t{hidden}.jsonl", 3, name, "a number", name)):
        text = str(error)
        assert len(text.splitlines()) == 1, text
        assert hidden not in text and "a" in text and "b" in text
    assert printable("plain é 日本 text") == "plain é 日本 text"
    assert printable("a\nb") == "a\\nb" and printable("\u2028") == "\\u2028"


def _error_classes() -> dict[str, str]:
    """Every subclass of CtxbenchError defined in the package, with its parent's name
    (read from the source, so that no optional extra has to be importable)."""
    import ast
    from pathlib import Path

    import ctxbench

    parents: dict[str, str] = {}
    for path in Path(ctxbench.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.bases:
                base = node.bases[0]
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                parents[node.name] = name
    tree = {"CtxbenchError": ""}
    while True:
        more = {c: p for c, p in parents.items() if p in tree and c not in tree}
        if not more:
            return tree
        tree.update(more)


def test_the_docstring_draws_every_error_class_under_its_parent() -> None:
    import re

    import ctxbench.core.errors as errors

    assert errors.__doc__ is not None
    drawn: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        found = re.match(r"^ {4}([\s│├└─]*)([A-Z][A-Za-z]+)\b", line)
        if not found:
            continue
        depth = len(found.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        drawn[found.group(2)] = stack[-1][1] if stack else ""
        stack.append((depth, found.group(2)))
    classes = _error_classes()
    assert len(classes) >= 17
    assert drawn == classes
