"""JSON Schemas (draft 2020-12) that ship with ctxbench, addressed by their schema_version."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from ctxbench.core.errors import InputError

__all__ = ["available_schemas", "load_schema", "schema_text", "validator"]


def _file_name(name: str) -> str:
    return name.replace("/", "__") + ".json"


def available_schemas() -> list[str]:
    """Names of the shipped schemas (their ``schema_version`` identifiers)."""
    names = []
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".json"):
            names.append(entry.name[: -len(".json")].replace("__", "/"))
    return sorted(names)


def schema_text(name: str) -> str:
    """The schema's JSON text, exactly as shipped."""
    entry = resources.files(__name__).joinpath(_file_name(name))
    if not entry.is_file():
        known = ", ".join(available_schemas())
        raise InputError(f"schema: expected one of {known}, got {name!r}")
    return entry.read_text(encoding="utf-8")


@cache
def load_schema(name: str) -> dict[str, Any]:
    value = json.loads(schema_text(name))
    assert isinstance(value, dict)
    return value


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for the named schema (for tests and users)."""
    schema = load_schema(name)
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)
