"""Fields of one TOML table of a spec, whose errors name the table: ``[model].temperature``.

Experiment specs (:mod:`ctxbench.runner.spec`) and agent-run specs
(:mod:`ctxbench.runner.agent_spec`) read their tables with it.
"""

from __future__ import annotations

from typing import Any

from ctxbench.core import MISSING, FieldError, Fields, InputError

__all__ = ["TomlFields"]


class TomlFields(Fields):
    """Fields of one TOML table: names render as ``[table].field``."""

    __slots__ = ("table",)

    def __init__(self, value: dict[str, Any], *, path: str, table: str) -> None:
        super().__init__(value, path=path)
        self.table = table

    def name(self, field: str) -> str:
        return f"[{self.table}].{field}" if self.table else field

    def error(self, field: str | None, expected: str, got: Any = MISSING,
              *, got_text: str | None = None) -> InputError:
        if field is not None and self.table and not field.startswith("["):
            field = self.name(field)
        # TOML has no null: a None here is a value that ``dict.get`` did not find.
        return super().error(field, expected, MISSING if got is None else got,
                             got_text=got_text)

    def table_of(self, field: str, *, optional: bool = False) -> TomlFields | None:
        value = self.value.get(field)
        table = f"{self.table}.{field}" if self.table else field
        if value is None:
            if optional:
                return None
            raise FieldError(self.path, None, f"[{table}]", "a table",
                             got_text="nothing (the table is missing)")
        if not isinstance(value, dict):
            raise FieldError(self.path, None, f"[{table}]", "a table", value)
        return TomlFields(value, path=self.path, table=table)

    def strings(self, field: str) -> tuple[str, ...]:
        value = self.value.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(field, "an array of strings", value)
        return tuple(value)
