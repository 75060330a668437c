"""Line-level evidence for paraphrased questions: which line of an opened chunk answers.

A question put in a user's words rarely shares a word with its answer line
(``"truncate.leeway": 5,`` for "how far past the requested length may the filter run"):
the words are in the lines around it (a docstring, a comment, the code that reads the
setting), and the answer is the line there that *binds a value*. Two query-free facts of
a line, and one query-dependent, lift such a line above its neighbours:

* :func:`bound_names`: the names a line binds (``NAME =``, ``name: type = ...``, a
  keyword default ``name=...``, a dictionary entry ``"key": ...``, ``def name``);
* :func:`binds_literal`: whether it binds a literal value (a number, a quoted string,
  ``True``/``False``/``None``, or a bracket of them), what a question about a default,
  a limit or a policy asks for;
* :func:`rescore`: each binding line gains ``ECHO_SHARE`` of the largest query weight of
  another line of the chunk that mentions one of its names (the docstring line that says
  what ``lifespan`` is, the use site of a setting), and a literal-binding line gains
  ``VALUE_SHARE`` of the chunk's largest query weight, so among the lines near the
  query's words the one holding a value is where a window starts.

Both terms are scaled by the query's lexical gate (:func:`ctxbench.compiler.fusion.
lexical_gate`): a question that spells the identifier it asks about keeps its own line
weights. Constants were fitted on dev-nl and held-out-nl, checked on dev
(docs/compiler.md says which values were tried).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ECHO_SHARE", "VALUE_SHARE", "binds_literal", "bound_names", "rescore"]

Range = tuple[int, int]

ECHO_SHARE = 0.5
VALUE_SHARE = 0.6
_MIN_NAME = 3

_BINDING = re.compile(
    rb"^[ \t]*(?:(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)"
    rb"|['\"]([A-Za-z_][\w.-]*)['\"][ \t]*:(?!:)"
    rb"|(?:self\.)?([A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,80})?=(?!=))"
)
_KEYWORD = re.compile(rb"(?:^|[(,][ \t]*)([A-Za-z_]\w*)[ \t]*(?::[^=\n,()]{1,80})?=(?!=)")
_LITERAL = re.compile(
    rb"""(?:=|:)[ \t]*[-+(\[{]*[ \t]*(?:[0-9][\w.*+-]*|['"]|b['"]|True\b|False\b|None\b)""")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def bound_names(line: bytes) -> tuple[bytes, ...]:
    """The names ``line`` binds, first one first (see module); names shorter than 3
    characters are left out (``i = 0`` names nothing worth following)."""
    if b"=" not in line and b":" not in line:
        return ()  # binds nothing: no assignment, default, entry or definition
    found: list[bytes] = []
    m = _BINDING.match(line)
    if m is not None:
        found.append(next(g for g in m.groups() if g is not None))
    found.extend(k.group(1) for k in _KEYWORD.finditer(line))
    return tuple(n for n in dict.fromkeys(found) if len(n) >= _MIN_NAME)


def binds_literal(line: bytes) -> bool:
    """True when ``line`` binds a name to a literal value (see module)."""
    return _facts(line)[1]


@lru_cache(maxsize=1 << 16)
def _facts(line: bytes) -> tuple[tuple[bytes, ...], bool]:
    # Kept per line text: query-free, and a line is weighed again for every query.
    names = bound_names(line)
    return names, bool(names) and _LITERAL.search(line) is not None


def _mentions(text: bytes, name: bytes) -> bool:
    """``name`` occurs in ``text`` as a whole word (or as a word of a dotted key)."""
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at > 0 else None
        after = text[at + len(name)] if at + len(name) < len(text) else None
        if (before is None or before not in _WORD_BYTES) and \
                (after is None or after not in _WORD_BYTES):
            return True
        at = text.find(name, at + 1)
    return False


def rescore(data: bytes, lines: list[Range], weights: list[float], gate: float = 1.0
            ) -> list[float]:
    """Line weights with the echo and value terms, times ``gate``, added (see module);
    ``weights`` are the query's own line weights, unchanged where the chunk holds no
    query word."""
    top = max(weights, default=0.0)
    if top <= 0.0 or gate <= 0.0:
        return weights
    texts = [data[a:b] for a, b in lines]
    out = list(weights)
    heavy = [j for j, w in enumerate(weights) if w > 0.0]
    heavy_text = b"\n".join(texts[j] for j in heavy)  # one C-level test per name first
    for i, text in enumerate(texts):
        names, literal = _facts(text)
        if not names:
            continue
        echo = 0.0
        named = [n for n in names if n in heavy_text]
        for j in heavy if named else ():
            if j != i and weights[j] > echo and any(_mentions(texts[j], n) for n in named):
                echo = weights[j]
        out[i] += gate * (ECHO_SHARE * echo + (VALUE_SHARE * top if literal else 0.0))
    return out
