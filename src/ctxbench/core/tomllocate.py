"""Where each key of a TOML document is defined: the line behind every located TOML error.

``tomllib`` returns plain dicts without positions, so a validator knows *which* key is
wrong (``[limits].concurrency``) but not *where* it is. :func:`key_lines` scans the text
once (after ``tomllib`` has accepted it) and records the line of every key, table header,
array-of-tables element and array element, under its key path: a tuple of keys and
indices as the decoded document holds them::

    [[conditions]]            # ("conditions",) and ("conditions", 0) -> 1
    strategy = "compiled"     # ("conditions", 0, "strategy") -> 2
    budgets = [               # ("conditions", 0, "budgets") -> 3
      128,                    # ("conditions", 0, "budgets", 0) -> 4
    ]
    model.name = "m"          # dotted keys: ("conditions", 0, "model", "name") -> 6

Dotted, quoted and inline-table keys are resolved to the keys ``tomllib`` decodes; text
inside strings (multi-line ones included) and comments is never read as a key.
:meth:`TomlLines.line_of` answers the deepest defined prefix of a path, so a missing key
is placed on its table's header and a path under no table on line 1.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager

from ctxbench.core.errors import FieldError, InputError, PointerError, clip

__all__ = ["KeyPath", "TomlLines", "field_path", "key_lines"]

KeyPath = tuple[str | int, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\",
            "e": "\x1b"}
_FIELD_TOKEN = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")
_SCALAR = re.compile(r"[^,\]}\r\n#]*")  # a number, boolean or date: up to what ends it


class TomlLines:
    """The line of every key path of one TOML text (see the module docstring)."""

    __slots__ = ("_lines",)

    def __init__(self, lines: dict[KeyPath, int]) -> None:
        self._lines = lines

    def get(self, path: KeyPath) -> int | None:
        """The line that defines exactly ``path``, or None."""
        return self._lines.get(path)

    def line_of(self, path: KeyPath) -> int:
        """The line of ``path``, else of its deepest defined ancestor, else 1."""
        for size in range(len(path), 0, -1):
            found = self._lines.get(path[:size])
            if found is not None:
                return found
        return 1

    def locate_field(self, field: str | None) -> int:
        """The line of a field as validators name it (see :func:`field_path`)."""
        if not field:
            return 1
        path = field_path(field)
        exact = self._lines.get(path)
        if exact is not None:
            return exact
        # An unknown key may itself hold dots or brackets ("a.b" = 1): try it whole.
        tail = _whole_tail(field)
        if tail is not None and self._lines.get(tail) is not None:
            return self._lines[tail]
        return self.line_of(path)

    def relocate(self, error: InputError, shown: str) -> InputError:
        """``error`` with its line, when it is an unlocated error about this file."""
        if isinstance(error, FieldError) and error.line is None and error.path == shown:
            located = FieldError(shown, self.locate_field(error.field), error.field,
                                 error.expected, got_text=error.got)
            return located
        if isinstance(error, PointerError) and error.path == shown:
            return LocatedPointerError(shown, self.line_of(_pointer_path(error.pointer)),
                                       error.pointer, error.message)
        return error

    @contextmanager
    def locating(self, shown: str) -> Iterator[None]:
        """Re-raise unlocated errors about the file ``shown`` with their line."""
        try:
            yield
        except (FieldError, PointerError) as exc:
            located = self.relocate(exc, shown)
            if located is exc:
                raise
            raise located from exc


class LocatedPointerError(PointerError):
    """A JSON-pointer error about a TOML file, with the line that defines the pointer:
    ``file:line: /pointer: message``."""

    def __init__(self, path: str, line: int, pointer: str, message: str) -> None:
        super().__init__(path, pointer, message)
        self.line = line
        InputError.__init__(self, f"{path}:{line}: {clip(self.pointer, 200)}: {message}")


def field_path(field: str) -> KeyPath:
    """A validator's field name as a key path.

    ``[conditions][0].budgets`` -> ``("conditions", 0, "budgets")``, ``[scoring.judge]``
    -> ``("scoring", "judge")``, ``rule[2].glob`` -> ``("rule", 2, "glob")``, and a JSON
    pointer ``/claims/0`` -> ``("claims", 0)``.
    """
    if field.startswith("/"):
        return _pointer_path(field)
    out: list[str | int] = []
    for match in _FIELD_TOKEN.finditer(field):
        inside, bare = match.groups()
        if inside is not None:
            if inside.isdigit():
                out.append(int(inside))
            else:
                out.extend(part.strip() for part in inside.split("."))
        else:
            out.append(bare.strip())
    return tuple(out)


def _whole_tail(field: str) -> KeyPath | None:
    """The field's table part as a path, then everything after it as one key."""
    head, dot, tail = field.rpartition("].")
    if not dot:
        return (field,)
    return (*field_path(head + "]"), tail)


def _pointer_path(pointer: str) -> KeyPath:
    parts = pointer.split("/")[1:] if pointer.startswith("/") else []
    out: list[str | int] = []
    for part in parts:
        key = part.replace("~1", "/").replace("~0", "~")
        out.append(int(key) if key.isdigit() else key)
    return tuple(out)


def key_lines(text: str) -> TomlLines:
    """Scan a TOML text that ``tomllib`` accepted and record where each key path is."""
    scanner = _Scanner(text)
    scanner.document()
    return TomlLines(scanner.found)


class _Scanner:
    """A position-only TOML reader: it assumes valid input and never raises on it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.found: dict[KeyPath, int] = {}
        self.explicit: set[KeyPath] = set()
        self.arrays: dict[KeyPath, int] = {}  # array-of-tables path -> its last index

    def line(self, position: int) -> int:
        return bisect_left(self.newlines, position) + 1

    def peek(self, size: int = 1) -> str:
        return self.text[self.at:self.at + size]

    def blank(self, newlines: bool = False) -> None:
        """Skip spaces and tabs (and newlines and comments when ``newlines``)."""
        text, size = self.text, len(self.text)
        while self.at < size:
            char = text[self.at]
            if char in " \t" or (newlines and char in "\r\n"):
                self.at += 1
            elif newlines and char == "#":
                self.skip_line()
            else:
                return

    def skip_line(self) -> None:
        end = self.text.find("\n", self.at)
        self.at = len(self.text) if end < 0 else end + 1

    def document(self) -> None:
        table: KeyPath = ()
        size = len(self.text)
        while self.at < size:
            self.blank(newlines=True)
            if self.at >= size:
                return
            start = self.at
            if self.peek() == "[":
                many = self.peek(2) == "[["
                self.at += 2 if many else 1
                keys = self.key()
                self.at += 2 if many else 1
                table = self.header(keys, many, self.line(start))
                self.skip_line()
                continue
            keys = self.key()
            if not keys:
                self.skip_line()  # not a key: cannot happen in valid TOML; move on
                continue
            self.blank()
            if self.peek() == "=":
                self.at += 1
            self.define(table, keys, self.line(start))
            self.value((*table, *keys))

    def header(self, keys: tuple[str, ...], many: bool, line: int) -> KeyPath:
        out: list[str | int] = []
        for n, key in enumerate(keys):
            out.append(key)
            here = tuple(out)
            if many and n == len(keys) - 1:
                index = self.arrays.get(here, -1) + 1
                self.arrays[here] = index
                self.found.setdefault(here, line)
                out.append(index)
            elif here in self.arrays:
                out.append(self.arrays[here])
            else:
                self.found.setdefault(here, line)
        resolved = tuple(out)
        if resolved not in self.explicit:
            self.explicit.add(resolved)
            self.found[resolved] = line  # an explicit header beats an implicit mention
        return resolved

    def define(self, table: KeyPath, keys: tuple[str, ...], line: int) -> None:
        for size in range(1, len(keys)):
            self.found.setdefault((*table, *keys[:size]), line)
        self.found[(*table, *keys)] = line

    def key(self) -> tuple[str, ...]:
        """A (dotted) key: bare, "basic" or 'literal' parts joined by dots."""
        parts: list[str] = []
        while True:
            self.blank()
            char = self.peek()
            if char == '"':
                parts.append(self.basic_string())
            elif char == "'":
                parts.append(self.literal_string())
            else:
                match = _BARE.match(self.text, self.at)
                if match is None:
                    return tuple(parts)
                parts.append(match.group())
                self.at = match.end()
            self.blank()
            if self.peek() != ".":
                return tuple(parts)
            self.at += 1

    def value(self, path: KeyPath) -> None:
        self.blank()
        char = self.peek()
        if self.peek(3) in ('"""', "'''"):
            self.multiline_string(self.peek(3))
        elif char == '"':
            self.basic_string()
        elif char == "'":
            self.literal_string()
        elif char == "[":
            self.array(path)
        elif char == "{":
            self.inline_table(path)
        else:
            match = _SCALAR.match(self.text, self.at)
            self.at = match.end() if match else self.at + 1

    def array(self, path: KeyPath) -> None:
        self.at += 1
        index = 0
        size = len(self.text)
        while self.at < size:
            self.blank(newlines=True)
            if self.peek() == "]":
                self.at += 1
                return
            self.found[(*path, index)] = self.line(self.at)
            self.value((*path, index))
            self.blank(newlines=True)
            if self.peek() == ",":
                self.at += 1
                index += 1
            elif self.peek() != "]":
                return  # not valid TOML: stop rather than guess

    def inline_table(self, path: KeyPath) -> None:
        self.at += 1
        size = len(self.text)
        while self.at < size:
            self.blank(newlines=True)
            if self.peek() == "}":
                self.at += 1
                return
            start = self.at
            keys = self.key()
            if not keys:
                return
            self.blank()
            if self.peek() == "=":
                self.at += 1
            self.define(path, keys, self.line(start))
            self.value((*path, *keys))
            self.blank(newlines=True)
            if self.peek() == ",":
                self.at += 1

    def basic_string(self) -> str:
        text, size = self.text, len(self.text)
        self.at += 1
        out: list[str] = []
        while self.at < size:
            char = text[self.at]
            if char == '"':
                self.at += 1
                break
            if char == "\\":
                code = text[self.at + 1:self.at + 2]
                if code in ("u", "U"):
                    digits = 4 if code == "u" else 8
                    hex_digits = text[self.at + 2:self.at + 2 + digits]
                    try:
                        out.append(chr(int(hex_digits, 16)))
                    except ValueError:
                        out.append(hex_digits)
                    self.at += 2 + digits
                    continue
                out.append(_ESCAPES.get(code, code))
                self.at += 2
                continue
            out.append(char)
            self.at += 1
        return "".join(out)

    def literal_string(self) -> str:
        end = self.text.find("'", self.at + 1)
        end = len(self.text) if end < 0 else end
        found = self.text[self.at + 1:end]
        self.at = end + 1
        return found

    def multiline_string(self, quote: str) -> None:
        text, size = self.text, len(self.text)
        self.at += 3
        while self.at < size:
            if quote == '"""' and text[self.at] == "\\":
                self.at += 2
                continue
            if text.startswith(quote, self.at):
                self.at += 3
                # Up to two quote characters may end the content right before the closer.
                extra = 0
                while extra < 2 and text[self.at:self.at + 1] == quote[0]:
                    self.at += 1
                    extra += 1
                return
            self.at += 1
