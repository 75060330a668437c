"""A GBNF grammar that admits exactly the calls the sent tool schemas allow.

Local function-calling stacks constrain decoding instead of hoping a model follows a
format (llama.cpp's GBNF grammars). :func:`call_grammar` builds one from the schemas
actually sent in a trial, so a pruned context admits fewer functions, as native tool
calling only admits the sent tools. The language is the prompting format read by
:func:`ctxbench.workloads.calls.parse_calls`::

    [name(param=value, ...), ...]        or  []  (no call: the irrelevance answer)

- names: the sent schemas' names; parameters: each schema's own, required ones first
  (all present, in schema order), then optional ones (each may be left out, in order);
- values typed per the schema: ``string`` a double-quoted string, ``integer``
  ``-?[0-9]+``, ``number``/``float`` with an optional fraction, ``boolean``
  ``True``/``False``, an ``enum`` one of its values, ``array``/``tuple`` a list of its
  ``items`` type, ``dict``/``object`` a dict with string keys; ``any`` and unknown types
  any of these.

Separators are fixed (``", "``) and no other whitespace is admitted, so a small model
cannot wander off into spaces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxbench.workloads.tools import ToolSchema

__all__ = ["call_grammar"]

_BASE = r'''
str ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/nt] )* "\""
int ::= "-"? [0-9] [0-9]*
num ::= "-"? [0-9] [0-9]* ( "." [0-9] [0-9]* )? ( [eE] [-+]? [0-9] [0-9]* )?
bool ::= "True" | "False"
any ::= str | num | bool | "None" | any-list | any-dict
any-list ::= "[" ( any ( ", " any )* )? "]"
any-dict ::= "{" ( str ": " any ( ", " str ": " any )* )? "}"
'''
_SIMPLE = {"string": "str", "integer": "int", "number": "num", "float": "num",
           "boolean": "bool", "bool": "bool"}


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class _Builder:
    def __init__(self) -> None:
        self.rules: list[str] = []
        self._count = 0

    def rule(self, body: str) -> str:
        self._count += 1
        name = f"r{self._count}"
        self.rules.append(f"{name} ::= {body}")
        return name

    def value(self, node: Any) -> str:
        """The rule name for a value of schema ``node``."""
        if not isinstance(node, Mapping):
            return "any"
        enum = node.get("enum")
        if isinstance(enum, list) and enum:
            return self.rule(" | ".join(_literal(_python(v)) for v in enum))
        kind = node.get("type")
        if kind in _SIMPLE:
            return _SIMPLE[str(kind)]
        if kind in ("array", "tuple", "list"):
            item = self.value(node.get("items"))
            return self.rule(f'"[" ( {item} ( ", " {item} )* )? "]"')
        if kind in ("dict", "object"):
            return "any-dict"
        return "any"

    def call(self, schema: ToolSchema) -> str:
        props = schema.properties
        required = [p for p in schema.required if p in props]
        optional = [p for p in props if p not in required]
        args = [f'{_literal(p + "=")} {self.value(props[p])}' for p in [*required, *optional]]
        n_req = len(required)
        if n_req:
            body = ' ", " '.join(args[:n_req]) + "".join(
                f' ( ", " {a} )?' for a in args[n_req:])
        elif args:
            # No required parameter: the first one given may be any optional one.
            starts = [args[i] + "".join(f' ( ", " {a} )?' for a in args[i + 1:])
                      for i in range(len(args))]
            body = "( " + " | ".join(f"( {s} )" for s in starts) + " )?"
        else:
            body = ""
        return self.rule(f'{_literal(schema.name + "(")} {body} ")"'.replace("  ", " "))


def _python(value: Any) -> str:
    """An enum value as the call format writes it (Python literal syntax)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    return json.dumps(value, ensure_ascii=False)


def call_grammar(schemas: Sequence[ToolSchema]) -> str:
    """The GBNF grammar (root rule ``root``) of calls to ``schemas``; ``[]`` always admitted."""
    builder = _Builder()
    calls = [builder.call(s) for s in schemas]
    if calls:
        call = builder.rule(" | ".join(calls))
        root = f'root ::= "[" ( {call} ( ", " {call} )* )? "]"'
    else:
        root = 'root ::= "[]"'
    return "\n".join([root, *builder.rules]) + "\n" + _BASE.strip() + "\n"
