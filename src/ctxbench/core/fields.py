"""Typed, located field access for parsers: nothing coerced, defaulted or dropped.

A :class:`Fields` wraps one decoded JSON object and knows where it came from, either a
line of a JSONL file (errors render ``file:line: field: expected ..., got ...``) or a
JSON pointer in a document (errors render ``file: /pointer/field: expected ..., got ...``).

    f = Fields(obj, path="trials.jsonl", line=12)
    f.only({"resolved", "tokens"})            # unknown names are errors
    resolved = f.boolean("resolved")          # "false" -> error, never coerced
    tokens = f.integer("tokens", minimum=0)   # missing -> error, never 0
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from typing import Any, NoReturn

from ctxbench.core.errors import FieldError, InputError, PointerError, describe_value, pointer_join

__all__ = ["MISSING", "Fields"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Fields:
    """Validated reads of one JSON object's fields (see module docstring)."""

    __slots__ = ("line", "path", "pointer", "value")

    def __init__(
        self,
        value: dict[str, Any],
        *,
        path: str,
        line: int | None = None,
        pointer: str | None = None,
    ) -> None:
        self.value = value
        self.path = path
        self.line = line
        self.pointer = pointer

    # -- errors -------------------------------------------------------------------------

    def error(self, field: str | None, expected: str, got: Any = MISSING,
              *, got_text: str | None = None) -> InputError:
        """Build the located error for ``field`` (does not raise)."""
        if got_text is None:
            got_text = "nothing (the field is missing)" if got is MISSING else describe_value(got)
        if self.pointer is not None:
            where = pointer_join(self.pointer, field) if field else self.pointer
            return PointerError(self.path, where, f"expected {expected}, got {got_text}")
        return FieldError(self.path, self.line, field, expected, got_text=got_text)

    def fail(self, field: str | None, expected: str, got: Any = MISSING,
             *, got_text: str | None = None) -> NoReturn:
        raise self.error(field, expected, got, got_text=got_text)

    def child(self, field: str, value: dict[str, Any]) -> Fields:
        """Fields of a nested object, located under ``field``."""
        if self.pointer is not None:
            return Fields(value, path=self.path, pointer=pointer_join(self.pointer, field))
        return _Nested(value, path=self.path, line=self.line, prefix=field)

    def name(self, field: str) -> str:
        return field

    # -- shape --------------------------------------------------------------------------

    def has(self, field: str) -> bool:
        return field in self.value

    def raw(self, field: str) -> Any:
        return self.value.get(field, MISSING)

    def only(self, allowed: Collection[str]) -> None:
        """Reject any field name not in ``allowed`` (first in sorted order)."""
        unknown = sorted(k for k in self.value if k not in allowed)
        if unknown:
            self.fail(unknown[0], "no such field (it is not part of the format)",
                      got_text=f"the unknown field {unknown[0]!r}")

    def require(self, fields: Iterable[str]) -> None:
        """Reject the first missing field of ``fields`` (in the order given)."""
        for field in fields:
            if field not in self.value:
                self.fail(self.name(field), "a required field")

    # -- scalars ------------------------------------------------------------------------

    def _get(self, field: str, optional: bool, nullable: bool) -> Any:
        value = self.value.get(field, MISSING)
        if value is MISSING and not optional:
            self.fail(self.name(field), "a required field")
        return value

    def string(self, field: str, *, nonblank: bool = True, nullable: bool = False,
               optional: bool = False) -> str | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        kind = "a non-blank string" if nonblank else "a string"
        if nullable:
            kind += " or null"
        if not isinstance(value, str):
            self.fail(self.name(field), kind, value)
        if nonblank and not value.strip():
            self.fail(self.name(field), kind, value)
        return value

    def req_string(self, field: str, *, nonblank: bool = True) -> str:
        value = self.string(field, nonblank=nonblank)
        assert value is not None
        return value

    def integer(self, field: str, *, minimum: int | None = None, maximum: int | None = None,
                nullable: bool = False, optional: bool = False) -> int | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        expected = _range_text("an integer", minimum, maximum)
        if nullable:
            expected += " or null"
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(self.name(field), expected, value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(self.name(field), expected, value)
        return value

    def req_int(self, field: str, *, minimum: int | None = None,
                maximum: int | None = None) -> int:
        value = self.integer(field, minimum=minimum, maximum=maximum)
        assert value is not None
        return value

    def number(self, field: str, *, minimum: float | None = None, maximum: float | None = None,
               nullable: bool = False, optional: bool = False) -> float | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        expected = _range_text("a number", minimum, maximum)
        if nullable:
            expected += " or null"
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(self.name(field), expected, value)
        if not _finite(value):
            self.fail(self.name(field), expected, value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(self.name(field), expected, value)
        return float(value)

    def req_number(self, field: str, *, minimum: float | None = None,
                   maximum: float | None = None) -> float:
        value = self.number(field, minimum=minimum, maximum=maximum)
        assert value is not None
        return value

    def boolean(self, field: str, *, nullable: bool = False,
                optional: bool = False) -> bool | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        if not isinstance(value, bool):
            self.fail(self.name(field), "a JSON boolean" + (" or null" if nullable else ""), value)
        return value

    def req_bool(self, field: str) -> bool:
        value = self.boolean(field)
        assert value is not None
        return value

    def enum(self, field: str, choices: Collection[str], *, nullable: bool = False,
             optional: bool = False) -> str | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        if not isinstance(value, str) or value not in choices:
            # A set has no stable order; sort it so the message is reproducible.
            ordered = choices if isinstance(choices, list | tuple) else sorted(choices)
            listed = ", ".join(ordered)
            self.fail(self.name(field), f"one of {listed}" + (" or null" if nullable else ""),
                      value)
        return value

    def req_enum(self, field: str, choices: Collection[str]) -> str:
        value = self.enum(field, choices)
        assert value is not None
        return value

    def matching(self, field: str, pattern: re.Pattern[str], expected: str, *,
                 nullable: bool = False, optional: bool = False) -> str | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        if not isinstance(value, str) or pattern.fullmatch(value) is None:
            self.fail(self.name(field), expected + (" or null" if nullable else ""), value)
        return value

    def obj(self, field: str, *, optional: bool = False,
            nullable: bool = False) -> dict[str, Any] | None:
        value = self._get(field, optional, nullable)
        if value is MISSING or (value is None and nullable):
            return None
        if not isinstance(value, dict):
            self.fail(self.name(field), "a JSON object", value)
        return value

    def array(self, field: str, *, optional: bool = False) -> list[Any] | None:
        value = self._get(field, optional, False)
        if value is MISSING:
            return None
        if not isinstance(value, list):
            self.fail(self.name(field), "a JSON array", value)
        return value


class _Nested(Fields):
    """Fields of an object nested in a JSONL line: names render as ``outer.inner``."""

    __slots__ = ("prefix",)

    def __init__(self, value: dict[str, Any], *, path: str, line: int | None,
                 prefix: str) -> None:
        super().__init__(value, path=path, line=line)
        self.prefix = prefix

    def name(self, field: str) -> str:
        return f"{self.prefix}.{field}"

    def error(self, field: str | None, expected: str, got: Any = MISSING,
              *, got_text: str | None = None) -> InputError:
        if field is not None and not field.startswith(self.prefix + "."):
            field = f"{self.prefix}.{field}"
        return super().error(field, expected, got, got_text=got_text)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        # A JSON integer too large for a float cannot be used as a number.
        return False


def _range_text(kind: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} in [{_num(minimum)}, {_num(maximum)}]"
    if minimum is not None:
        return f"{kind} >= {_num(minimum)}"
    if maximum is not None:
        return f"{kind} <= {_num(maximum)}"
    return kind


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)
