"""A mutator for ctxbench's input files: bytes-level and structure-aware damage.

Each mutation class has a name and says whether the formats forbid its result (then
every reader must reject it). Structure-aware classes (type swaps, huge numbers, deep
nesting, NaN, duplicate keys, unknown fields) parse the seed (JSON, JSON Lines or TOML
text) and change one value, so the damage lands inside the document rather than only
breaking its syntax.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CLASSES", "Mutation", "mutate"]

_HUGE = (2**64, 10**30, 2**53, -(2**63) - 1, 10**400)
_SWAPS: tuple[Any, ...] = (None, True, "0", 0, 1.5, [], {}, ["x"], {"k": 1}, "", -1)


@dataclass(frozen=True, slots=True)
class Mutation:
    """A mutated input: its bytes, the class that made it, and whether it is forbidden."""

    data: bytes
    cls: str
    forbidden: bool


def _byte_flip(data: bytes, rng: random.Random, fmt: str) -> bytes:
    if not data:
        return b"\x00"
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def _truncate(data: bytes, rng: random.Random, fmt: str) -> bytes:
    return data[: rng.randrange(len(data))] if data else data


def _delete(data: bytes, rng: random.Random, fmt: str) -> bytes:
    if len(data) < 2:
        return b""
    i = rng.randrange(len(data))
    return data[:i] + data[i + rng.randint(1, min(64, len(data) - i)):]


def _duplicate(data: bytes, rng: random.Random, fmt: str) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.randint(1, 128))
    return data[:j] + data[i:j] + data[j:]


def _bom(data: bytes, rng: random.Random, fmt: str) -> bytes:
    return b"\xef\xbb\xbf" + data


def _cr_only(data: bytes, rng: random.Random, fmt: str) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")


def _nul(data: bytes, rng: random.Random, fmt: str) -> bytes:
    # Inside the first string (or at a random place when there is none).
    quote = data.find(b'"')
    i = quote + 1 if quote >= 0 else rng.randrange(len(data) + 1)
    return data[:i] + b"\x00" + data[i:]


def _invalid_utf8(data: bytes, rng: random.Random, fmt: str) -> bytes:
    quote = data.find(b'"')
    i = quote + 1 if quote >= 0 else rng.randrange(len(data) + 1)
    return data[:i] + rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88")) + data[i:]


# -- structure-aware --------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*prefix, key))
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*prefix, index))
            out.extend(_paths(item, (*prefix, index)))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


def _numeric_paths(doc: Any) -> list[tuple[Any, ...]]:
    def get(path: tuple[Any, ...]) -> Any:
        node = doc
        for part in path:
            node = node[part]
        return node
    return [p for p in _paths(doc) if type(get(p)) in (int, float)]


def _on_json(data: bytes, fmt: str, rng: random.Random,
             change: Callable[[Any, random.Random], str | None]) -> bytes | None:
    """Apply ``change`` to one record (JSONL) or the document (JSON); None if impossible.

    ``change`` edits in place and returns None, or returns replacement text for the
    whole record (for changes plain JSON serialization cannot express).
    """
    text = data.decode("utf-8")
    if fmt == "jsonl":
        lines = text.split("\n")
        candidates = [i for i, line in enumerate(lines) if line.strip()]
        if not candidates:
            return None
        i = rng.choice(candidates)
        doc = json.loads(lines[i])
        replaced = change(doc, rng)
        lines[i] = replaced if replaced is not None else json.dumps(doc)
        return "\n".join(lines).encode("utf-8")
    doc = json.loads(text)
    replaced = change(doc, rng)
    return (replaced if replaced is not None else json.dumps(doc, indent=1)).encode("utf-8")


def _type_swap(doc: Any, rng: random.Random) -> None:
    paths = _paths(doc)
    if paths:
        _set(doc, rng.choice(paths), rng.choice(_SWAPS))


def _huge(doc: Any, rng: random.Random) -> None:
    paths = _numeric_paths(doc) or _paths(doc)
    if paths:
        _set(doc, rng.choice(paths), rng.choice(_HUGE))


_NESTED_MARK = "__ctxbench_nested__"


def _deep(doc: Any, rng: random.Random) -> str:
    paths = _paths(doc)
    depth = rng.choice((65, 100, 1000, 100_000))
    if paths:
        _set(doc, rng.choice(paths), _NESTED_MARK)
    else:
        doc[_NESTED_MARK] = _NESTED_MARK
    return json.dumps(doc).replace(json.dumps(_NESTED_MARK), "[" * depth + "]" * depth, 1)


def _nan(doc: Any, rng: random.Random) -> str:
    paths = _numeric_paths(doc) or _paths(doc)
    token = rng.choice(("NaN", "Infinity", "-Infinity", "1e999"))
    if paths:
        _set(doc, rng.choice(paths), _NESTED_MARK)
    else:
        doc[_NESTED_MARK] = _NESTED_MARK
    return json.dumps(doc).replace(json.dumps(_NESTED_MARK), token, 1)


def _dup_key(doc: Any, rng: random.Random) -> str:
    objects = [p for p in _paths(doc) if isinstance(_get(doc, p), dict) and _get(doc, p)]
    text = json.dumps(doc)
    if not isinstance(doc, dict) or not doc:
        return text
    target = doc if not objects or rng.random() < 0.5 else _get(doc, rng.choice(objects))
    key = rng.choice(sorted(target))
    target_text = json.dumps(target)
    doubled = target_text[:-1] + ", " + json.dumps(key) + ": " + json.dumps(target[key]) + "}"
    return text.replace(target_text, doubled, 1)


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _unknown(doc: Any, rng: random.Random) -> None:
    if isinstance(doc, dict):
        doc[rng.choice(("zz_unknown", "extra", "Workload", "schema_version "))] = 1


# TOML has no parser that writes TOML back, so its structure-aware classes edit text.
_TOML_NUMBER = re.compile(rb"(?m)^(\s*[A-Za-z_][A-Za-z0-9_.-]*\s*=\s*)(-?[0-9][0-9_.eE+-]*)\s*$")
_TOML_VALUE = re.compile(rb"(?m)^(\s*[A-Za-z_][A-Za-z0-9_.\"-]*\s*=\s*)(.+)$")


def _toml(cls: str, data: bytes, rng: random.Random) -> bytes | None:
    numbers = list(_TOML_NUMBER.finditer(data))
    values = list(_TOML_VALUE.finditer(data))
    if cls in ("huge_number", "nan"):
        pool = numbers or values
        if not pool:
            return None
        m = rng.choice(pool)
        new = (str(rng.choice(_HUGE)).encode() if cls == "huge_number"
               else rng.choice((b"nan", b"inf", b"-inf", b"+nan")))
        return data[: m.start(2)] + new + data[m.end(2):]
    if cls == "type_swap":
        if not values:
            return None
        m = rng.choice(values)
        new = rng.choice((b'"0"', b"true", b"[]", b"{}", b"1.5", b"-1", b'""', b'["x"]'))
        return data[: m.start(2)] + new + data[m.end(2):]
    if cls == "deep_nesting":
        if not values:
            return None
        m = rng.choice(values)
        depth = rng.choice((65, 100, 1000))
        return data[: m.start(2)] + b"[" * depth + b"]" * depth + data[m.end(2):]
    if cls == "duplicate_key":
        if not values:
            return None
        m = rng.choice(values)
        line = data[m.start(): m.end()]
        return data[: m.end()] + b"\n" + line + data[m.end():]
    if cls == "unknown_field":
        return b"zz_unknown = 1\n" + data
    return None


_BYTES: dict[str, Callable[[bytes, random.Random, str], bytes]] = {
    "byte_flip": _byte_flip,
    "truncate": _truncate,
    "delete": _delete,
    "duplicate": _duplicate,
    "bom": _bom,
    "cr_only": _cr_only,
    "nul": _nul,
    "invalid_utf8": _invalid_utf8,
}
_STRUCT: dict[str, Callable[[Any, random.Random], str | None]] = {
    "type_swap": _type_swap,
    "huge_number": _huge,
    "deep_nesting": _deep,
    "nan": _nan,
    "duplicate_key": _dup_key,
    "unknown_field": _unknown,
}
#: Every class, and whether a format forbids what it produces (``None``: depends on format).
CLASSES: dict[str, bool | None] = {
    "byte_flip": False, "truncate": False, "delete": False, "duplicate": False,
    "type_swap": False, "huge_number": True, "deep_nesting": True, "nan": True,
    "bom": True, "cr_only": None, "nul": True, "invalid_utf8": True,
    "duplicate_key": True, "unknown_field": True,
}


def _forbidden(cls: str, fmt: str, seed: bytes) -> bool:
    rule = CLASSES[cls]
    if rule is not None:
        return rule
    # A lone CR ends nothing in JSON Lines or TOML; in one JSON document it is whitespace.
    return fmt in ("jsonl", "toml") and seed.count(b"\n") > 1


def mutate(seed: bytes, fmt: str, cls: str, rng: random.Random) -> Mutation | None:
    """One mutation of ``seed`` (format ``json``, ``jsonl`` or ``toml``) of class ``cls``."""
    if cls in _BYTES:
        return Mutation(_BYTES[cls](seed, rng, fmt), cls, _forbidden(cls, fmt, seed))
    data = _toml(cls, seed, rng) if fmt == "toml" else _on_json(seed, fmt, rng, _STRUCT[cls])
    if data is None or data == seed:
        return None
    return Mutation(data, cls, _forbidden(cls, fmt, seed))
