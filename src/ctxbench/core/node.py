"""Typed reads from a decoded JSON document, each failure naming its JSON pointer.

Report models and the HTML pages read documents through :class:`Node`, so a field that
is missing or of the wrong type stops the read with ``report.json: /strata/0/label:
expected a string, got null`` instead of a result with a hole in it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any, TypeVar

from ctxbench.core import PointerError, describe_value, pointer_join

__all__ = ["Node", "read_notes"]

_S = TypeVar("_S", bound=str)


class Node:
    """A value inside a report, with the file and JSON pointer it came from."""

    __slots__ = ("path", "pointer", "value")

    def __init__(self, path: str, pointer: str, value: Any) -> None:
        self.path = path
        self.pointer = pointer
        self.value = value

    def fail(self, expected: str) -> PointerError:
        return PointerError(self.path, self.pointer,
                            f"expected {expected}, got {describe_value(self.value)}")

    def _object(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        return self.value

    def has(self, key: str) -> bool:
        """True when this object holds ``key`` with a non-null value."""
        return self._object().get(key) is not None

    def at(self, key: str) -> Node:
        """The required member ``key`` of this object."""
        obj = self._object()
        pointer = pointer_join(self.pointer, key)
        if key not in obj:
            raise PointerError(self.path, pointer, "required field is missing")
        return Node(self.path, pointer, obj[key])

    def opt(self, key: str) -> Node | None:
        """The member ``key``, or None when it is absent or null."""
        obj = self._object()
        if obj.get(key) is None:
            return None
        return Node(self.path, pointer_join(self.pointer, key), obj[key])

    def closed(self, allowed: Collection[str], owner: str) -> Node:
        """This object, after checking it has no member outside ``allowed``.

        ``owner`` names what defines the members (a schema version); the error points at
        the first unknown member: ``expected no such member (OWNER does not define it),
        got ...``.
        """
        for key, value in self._object().items():
            if key not in allowed:
                raise PointerError(self.path, pointer_join(self.pointer, key),
                                   f"expected no such member ({owner} does not define it), "
                                   f"got {describe_value(value)}")
        return self

    def one_of(self, options: tuple[_S, ...]) -> _S:
        """This string, one of ``options``."""
        value = self.value
        if isinstance(value, str):
            for option in options:
                if value == option:
                    return option
        raise self.fail("one of " + ", ".join(json.dumps(o) for o in options))

    def items(self) -> list[Node]:
        """The elements of this array."""
        if not isinstance(self.value, list):
            raise self.fail("an array")
        return [Node(self.path, pointer_join(self.pointer, i), v)
                for i, v in enumerate(self.value)]

    def entries(self) -> Iterator[tuple[str, Node]]:
        """The members of this object, in document order."""
        for key, value in self._object().items():
            yield key, Node(self.path, pointer_join(self.pointer, key), value)

    def text(self) -> str:
        if not isinstance(self.value, str):
            raise self.fail("a string")
        return self.value

    def num(self) -> float:
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise self.fail("a number")
        return float(self.value)

    def int_(self) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.fail("an integer")
        return self.value

    def flag(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail("a boolean")
        return self.value

    def texts(self) -> tuple[str, ...]:
        return tuple(item.text() for item in self.items())

    # Shorthands for the common "required member of a given type" reads.
    def s(self, key: str) -> str:
        return self.at(key).text()

    def n(self, key: str) -> float:
        return self.at(key).num()

    def i(self, key: str) -> int:
        return self.at(key).int_()

    def b(self, key: str) -> bool:
        return self.at(key).flag()

    def on(self, key: str) -> float | None:
        """A member that must be present and may be null (a statistic left undefined)."""
        node = self.at(key)
        return None if node.value is None else node.num()

    def oi(self, key: str) -> int | None:
        node = self.at(key)
        return None if node.value is None else node.int_()


def read_notes(doc: Node) -> tuple[str, ...]:
    """The notes a run attached to a report (top-level ``notes``), or none."""
    notes = doc.opt("notes")
    return () if notes is None else notes.texts()
