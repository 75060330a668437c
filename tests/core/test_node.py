"""Node.closed and Node.one_of: the one check of closed objects and string sets."""

from __future__ import annotations

import pytest

from ctxbench.core import PointerError
from ctxbench.core.node import Node


def test_closed_names_the_first_unknown_member_with_its_pointer() -> None:
    node = Node("r.json", "/a", {"x": 1, "y/z": [1], "w": None})
    with pytest.raises(PointerError) as info:
        node.closed(("x", "w"), "ctxbench.test.v1")
    assert str(info.value) == (
        "r.json: /a/y~1z: expected no such member (ctxbench.test.v1 does not define it), "
        "got an array")
    assert node.closed(("x", "y/z", "w"), "ctxbench.test.v1") is node


def test_closed_refuses_a_non_object() -> None:
    with pytest.raises(PointerError, match=r"^r.json: /a: expected an object, got an array$"):
        Node("r.json", "/a", []).closed(("x",), "f")


def test_a_key_with_a_line_break_stays_on_one_line() -> None:
    with pytest.raises(PointerError) as info:
        Node("r.json", "", {"a\nb": 1}).closed((), "f")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("value", "got"), [
    ("gross", 'the string "gross"'), (None, "null"), (1, "the integer 1"),
    (["net"], "an array")])
def test_one_of_quotes_the_options(value: object, got: str) -> None:
    with pytest.raises(PointerError) as info:
        Node("r.json", "/basis", value).one_of(("net", "agent"))
    assert str(info.value) == f'r.json: /basis: expected one of "net", "agent", got {got}'


def test_one_of_returns_the_option() -> None:
    assert Node("r.json", "/b", "agent").one_of(("net", "agent")) == "agent"
