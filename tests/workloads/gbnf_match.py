"""A small GBNF recognizer for tests: does a grammar admit a whole string?

It reads the subset :mod:`ctxbench.workloads.call_grammar` writes (rules ``name ::= ...``
on one line each; string literals, character classes with ranges and negation, groups,
alternation, ``?`` and ``*``) and answers by computing, for each (expression, position),
the set of positions where a match can end (memoized, so recursion through ``any`` is
bounded by the input length). It is independent of llama.cpp's parser on purpose.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_TOKEN = re.compile(r'\s*("(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z0-9-]+|[()|?*])')
_ESC = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "]": "]", "/": "/", "[": "["}


def _unescape(body: str) -> list[str]:
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            if nxt == "x":
                out.append(chr(int(body[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append(_ESC[nxt])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return out


def _parse_alt(tokens: list[str], at: int) -> tuple[Any, int]:
    seqs = []
    seq, at = _parse_seq(tokens, at)
    seqs.append(seq)
    while at < len(tokens) and tokens[at] == "|":
        seq, at = _parse_seq(tokens, at + 1)
        seqs.append(seq)
    return ("alt", tuple(seqs)), at


def _parse_seq(tokens: list[str], at: int) -> tuple[Any, int]:
    items = []
    while at < len(tokens) and tokens[at] not in ("|", ")"):
        tok = tokens[at]
        if tok == "(":
            item, at = _parse_alt(tokens, at + 1)
            assert tokens[at] == ")"
            at += 1
        elif tok.startswith('"'):
            item, at = ("lit", "".join(_unescape(tok[1:-1]))), at + 1
        elif tok.startswith("["):
            body = _unescape(tok[1:-1])
            negate = bool(body) and body[0] == "^"
            chars = body[1:] if negate else body
            ranges = []
            i = 0
            while i < len(chars):
                if i + 2 < len(chars) and chars[i + 1] == "-":
                    ranges.append((chars[i], chars[i + 2]))
                    i += 3
                else:
                    ranges.append((chars[i], chars[i]))
                    i += 1
            item, at = ("cls", negate, tuple(ranges)), at + 1
        else:
            item, at = ("ref", tok), at + 1
        if at < len(tokens) and tokens[at] in ("?", "*"):
            item, at = (tokens[at], item), at + 1
        items.append(item)
    return ("seq", tuple(items)), at


def parse_grammar(text: str) -> dict[str, Any]:
    rules = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, body = line.partition("::=")
        tokens = _TOKEN.findall(body)
        expr, at = _parse_alt(tokens, 0)
        assert at == len(tokens), line
        rules[name.strip()] = expr
    return rules


def admits(grammar: str, text: str) -> bool:
    """True when ``grammar`` (root rule ``root``) matches all of ``text``."""
    rules = parse_grammar(grammar)

    @cache
    def ends(expr: Any, pos: int) -> frozenset[int]:
        kind = expr[0]
        if kind == "lit":
            return frozenset([pos + len(expr[1])]) if text.startswith(expr[1], pos) \
                else frozenset()
        if kind == "cls":
            if pos >= len(text):
                return frozenset()
            hit = any(a <= text[pos] <= b for a, b in expr[2])
            return frozenset([pos + 1]) if hit != expr[1] else frozenset()
        if kind == "ref":
            return ends(rules[expr[1]], pos)
        if kind == "alt":
            return frozenset().union(*(ends(s, pos) for s in expr[1]))
        if kind == "seq":
            current = frozenset([pos])
            for item in expr[1]:
                current = frozenset().union(*(ends(item, p) for p in current))
                if not current:
                    break
            return current
        if kind == "?":
            return frozenset([pos]) | ends(expr[1], pos)
        if kind == "*":
            seen, frontier = {pos}, {pos}
            while frontier:
                frontier = {e for p in frontier for e in ends(expr[1], p)} - seen
                seen |= frontier
            return frozenset(seen)
        raise AssertionError(kind)

    return len(text) in ends(("ref", "root"), 0)
