"""Tool schemas as permitted context, and the built-in ways to choose among them.

A tool-schema workload's permitted context is a list of :class:`ToolSchema`; a context
strategy for it is a function with the shape of :data:`ToolSelector`::

    select(schemas, query, budget, tokenizer) -> ToolSelection

``budget`` is in tokens of the declared tokenizer (None = unbudgeted); the tokens of a
schema are the tokens of its canonical text (:attr:`ToolSchema.text`), whatever a
strategy claims, and a selection never exceeds its budget. Two strategies are built in:

- ``full_permitted_context``: every schema, in the task's order.
- ``naive_top_k``: schemas ranked by how many query words their name and description
  share (ties: the task's order), taken while they fit the budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ctxbench.core import InputError, blake3_hex, canonical_json

__all__ = [
    "TOOL_STRATEGIES",
    "TokenCounter",
    "ToolSchema",
    "ToolSelection",
    "ToolSelector",
    "json_schema_parameters",
    "native_name",
    "native_names",
    "select_tools",
]

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# BFCL's parameter type names -> JSON Schema types (BFCL's own table for native tools).
_JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
}


class TokenCounter(Protocol):
    """Anything with ``count(text) -> int`` (the compiler's tokenizers are)."""

    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """One function a model may call: its name, description and parameter schema.

    ``parameters`` is the schema as the workload ships it (BFCL uses ``"type": "dict"``
    and ``"float"``); :func:`json_schema_parameters` gives the JSON Schema form that
    native tool APIs accept.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]

    @property
    def document(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}

    @property
    def text(self) -> str:
        """The canonical JSON text: what is counted, hashed and shown to prompting models."""
        return canonical_json(self.document).decode("utf-8")

    @property
    def digest(self) -> str:
        return blake3_hex(self.text.encode("utf-8"))

    @property
    def required(self) -> tuple[str, ...]:
        required = self.parameters.get("required", [])
        return tuple(r for r in required if isinstance(r, str))

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.parameters.get("properties", {})
        return props if isinstance(props, Mapping) else {}


@dataclass(frozen=True, slots=True)
class ToolSelection:
    """What a tool strategy chose: the schemas, in the order they are sent, and tokens."""

    schemas: tuple[ToolSchema, ...]
    token_count: int

    @property
    def text(self) -> str:
        """One canonical schema per line: the context text counted and hashed."""
        return "\n".join(s.text for s in self.schemas)


ToolSelector = Callable[[Sequence[ToolSchema], str, "int | None", TokenCounter], ToolSelection]


def _words(text: str) -> set[str]:
    spaced = _CAMEL.sub(" ", text).replace("_", " ").replace(".", " ")
    return set(_WORD.findall(spaced.lower()))


def _full(schemas: Sequence[ToolSchema], query: str, budget: int | None,
          tokenizer: TokenCounter) -> ToolSelection:
    del query, budget
    chosen = tuple(schemas)
    return ToolSelection(chosen, sum(tokenizer.count(s.text) for s in chosen))


def _top_k(schemas: Sequence[ToolSchema], query: str, budget: int | None,
           tokenizer: TokenCounter) -> ToolSelection:
    wanted = _words(query)
    ranked = sorted(range(len(schemas)), key=lambda i: (
        -len(wanted & _words(schemas[i].name + " " + schemas[i].description)), i))
    chosen: list[ToolSchema] = []
    used = 0
    for index in ranked:
        cost = tokenizer.count(schemas[index].text)
        if budget is not None and used + cost > budget:
            continue
        chosen.append(schemas[index])
        used += cost
    return ToolSelection(tuple(chosen), used)


TOOL_STRATEGIES: dict[str, ToolSelector] = {
    "full_permitted_context": _full,
    "naive_top_k": _top_k,
}


def select_tools(schemas: Sequence[ToolSchema], query: str, budget: int | None,
                 tokenizer: TokenCounter, strategy: str = "full_permitted_context"
                 ) -> ToolSelection:
    """Choose the schemas sent for ``query`` under ``budget`` tokens with ``strategy``.

    The result is re-checked here: every chosen schema must be one of ``schemas`` (no
    duplicates), its tokens are recounted with ``tokenizer``, and the total must fit.
    """
    selector = TOOL_STRATEGIES.get(strategy)
    if selector is None:
        raise InputError(f"tool strategy: expected one of {', '.join(TOOL_STRATEGIES)}, "
                         f"got {strategy!r}")
    selection = selector(schemas, query, budget, tokenizer)
    offered = {s.name: s for s in schemas}
    names = [s.name for s in selection.schemas]
    if len(set(names)) != len(names) or any(offered.get(s.name) != s
                                            for s in selection.schemas):
        raise InputError(f"tool strategy {strategy}: selected a schema that is not offered "
                         "or selected one twice")
    tokens = sum(tokenizer.count(s.text) for s in selection.schemas)
    if budget is not None and tokens > budget:
        raise InputError(f"tool strategy {strategy}: {tokens} schema tokens exceed the "
                         f"budget of {budget}")
    return ToolSelection(selection.schemas, tokens)


def _convert(node: Any) -> Any:
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            out[key] = _JSON_TYPES.get(value, "string")
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {k: _convert(v) for k, v in value.items()}
        else:
            out[key] = _convert(value)
    return out


def json_schema_parameters(schema: ToolSchema) -> dict[str, Any]:
    """The parameter schema with BFCL's type names mapped to JSON Schema's."""
    converted = _convert(schema.parameters)
    if not isinstance(converted, dict):
        return {"type": "object", "properties": {}}
    converted["type"] = "object"
    return converted


_NATIVE_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def native_name(name: str) -> str:
    """A schema name as native tool APIs accept it (``^[a-zA-Z0-9_-]{1,64}$``).

    Dots and other characters become ``_`` (as BFCL does for these APIs); the name is cut
    to 64 characters.
    """
    return _NATIVE_NAME.sub("_", name)[:64] or "_"


def native_names(schemas: Sequence[ToolSchema]) -> dict[str, str]:
    """Sent name -> schema name; refuses two schemas that would be sent under one name."""
    names: dict[str, str] = {}
    for schema in schemas:
        sent = native_name(schema.name)
        if sent in names and names[sent] != schema.name:
            raise InputError(f"tools {names[sent]!r} and {schema.name!r} would both be sent "
                             f"as {sent!r}")
        names[sent] = schema.name
    return names
