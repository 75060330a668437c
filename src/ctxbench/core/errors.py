"""The one exception tree of ctxbench; every error a user can cause names its place.

    CtxbenchError (exit 2)                  root; ``exit_code`` tells the CLI what to return
    ├── InputError (exit 2)                 invalid input or usage
    │   ├── FieldError                      ``file:line: field: expected ..., got ...``
    │   │   ├── TornLineError               core.jsonl: a last line a writer left unfinished
    │   │   └── TrialLogPredates            protocols.cef.trial_format: a trial log written
    │   │                                   before a member the reader needs
    │   ├── PointerError                    ``file: /json/pointer: message`` (JSON documents)
    │   │   └── LocatedPointerError         core.tomllocate: the same, with the TOML line
    │   ├── IntegrityError                  a digest, root or commit that does not match
    │   ├── InputErrors                     several of the above, listed together
    │   ├── SettingError                    ``setting: expected ..., got ...`` (a keyword
    │   │                                   argument; the CLI names its option instead)
    │   └── OverrideError                   protocols.cef.prereg: settings beside a
    │                                       supplied preregistration, which pins them
    ├── CallParseError                      workloads.calls: text that is not a list of
    │                                       function calls (a provider turns it into a
    │                                       trial's error class)
    └── RuntimeFailure (exit 3)             a provider or runtime failure
        ├── ProviderError                   a provider request that did not succeed
        │   └── RequestFailed               runner.providers.base: no usable response
        ├── StrategyFailure                 compiler.plugins: a packet refused or never sent
        ├── ContextManagerFailure           compiler.context_managers: a decision refused
        │                                   (that agent trial's failure)
        ├── TrialAbandoned                  runner.execute: a trial not sent for a reason
        │                                   outside it (the run stops, resumable)
        ├── RunStopped                      runner.experiment: the trial phase stopped;
        │                                   finished trials are recorded (the original
        │                                   error's exit code)
        └── ClusterLost                     runner.ray_cluster: the Ray cluster stopped
                                            answering

Classes defined outside this module live where they are raised, beside the code that
knows their cause; ``tests/core/test_errors.py`` checks that every subclass of
:class:`CtxbenchError` anywhere in the package is drawn here.

Third-party exceptions (json, tomllib, rfc8785, httpx) are translated into these at
exactly one boundary each, with ``raise ... from``.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import Any

from ctxbench.core.limits import MAX_MESSAGE_CHARS, MAX_QUOTED_CHARS

__all__ = [
    "CtxbenchError",
    "FieldError",
    "InputError",
    "InputErrors",
    "IntegrityError",
    "PointerError",
    "ProviderError",
    "RuntimeFailure",
    "SettingError",
    "clip",
    "describe_value",
    "printable",
]

_MAX_SHOWN = MAX_QUOTED_CHARS
# A field name or pointer is quoted up to this many characters (a key can be any size).
_MAX_NAME = 200


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was when cut.

    >>> clip("abcdef", 3)
    'abc... (6 characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def describe_value(value: Any) -> str:
    """Describe a decoded JSON/TOML value the way an error message should show it.

    >>> describe_value("false")
    'the string "false"'
    >>> describe_value(True)
    'the boolean true'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        if value.bit_length() > 200:
            digits = len(str(abs(value))) if value.bit_length() < 14000 else None
            size = f"{digits} digits" if digits is not None else "over 4,000 digits"
            return f"an integer of {size}"
        return f"the integer {value}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"the non-finite number {value}"
        return f"the number {value!r}"
    if isinstance(value, str):
        if len(value) <= _MAX_SHOWN:
            return "the string " + _quote(value)
        return (f"the string {_quote(value[:_MAX_SHOWN] + '...')} "
                f"({len(value)} characters)")
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def _quote(text: str) -> str:
    return '"' + printable(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


_ESCAPES = {"\n": "\\n", "\r": "\\r"}


def printable(text: str) -> str:
    """``text`` with every line break and control character but tab escaped (``\\n``,
    ``\\u2028``), so a name or value from the input cannot split an error into lines.

    >>> printable("a\\nb")
    'a\\\\nb'
    """
    if text.isprintable():
        return text
    return "".join(
        _ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
        if c != "\t" and unicodedata.category(c) in _HIDDEN else c
        for c in text)


# Control, format, line and paragraph separators, surrogates, unassigned: never shown raw.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


class CtxbenchError(Exception):
    """Root of every error ctxbench raises on purpose.

    Its message is bounded: each line is cut to ``MAX_MESSAGE_CHARS`` characters (saying
    how long it was), so no input can make an error message arbitrarily large.
    """

    exit_code: int = 2

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], str):
            lines = args[0].split("\n")
            if any(len(line) > MAX_MESSAGE_CHARS for line in lines):
                args = ("\n".join(clip(line) for line in lines), *args[1:])
        super().__init__(*args)


class InputError(CtxbenchError):
    """Invalid input or usage: the CLI prints the message and exits 2."""

    exit_code = 2


class FieldError(InputError):
    """A value in a line-oriented file (JSONL, TOML) that breaks a rule.

    Renders as ``path:line: field: expected EXPECTED, got GOT``. ``got`` is either a
    described value (see :func:`describe_value`) or free text when ``got_text`` is set.
    """

    def __init__(
        self,
        path: str,
        line: int | None,
        field: str | None,
        expected: str,
        got: Any = None,
        *,
        got_text: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.expected = expected
        self.got = got_text if got_text is not None else describe_value(got)
        super().__init__(self.render())

    def render(self) -> str:
        path = printable(self.path)
        where = path if self.line is None else f"{path}:{self.line}"
        # An empty name (a duplicated "" key) is still named, as an empty field.
        field = f" {clip(printable(self.field), _MAX_NAME)}:" if self.field is not None else ""
        return f"{where}:{field} expected {self.expected}, got {self.got}"


class PointerError(InputError):
    """A problem in a JSON document, located by RFC 6901 pointer: ``file: /a/0/b: message``."""

    def __init__(self, path: str, pointer: str, message: str) -> None:
        self.path = path
        self.pointer = pointer or "/"
        self.message = message
        super().__init__(
            f"{printable(path)}: {clip(printable(self.pointer), _MAX_NAME)}: {message}")


class IntegrityError(InputError):
    """Bytes, a root or a commit whose digest does not match what was declared."""


class InputErrors(InputError):
    """Several input errors found in one pass; the message lists them (up to a cap)."""

    def __init__(self, errors: Sequence[InputError], *, total: int | None = None) -> None:
        if not errors:
            raise ValueError("InputErrors needs at least one error")
        self.errors = tuple(errors)
        self.total = total if total is not None else len(self.errors)
        lines = [str(e) for e in self.errors]
        hidden = self.total - len(lines)
        if hidden > 0:
            lines.append(f"... and {hidden} more error(s)")
        super().__init__("\n".join(lines))


class SettingError(InputError):
    """A setting given to a library call with a value it does not take.

    Renders as ``setting: detail`` with the setting's keyword name (``confidence_level``);
    the command line, which knows which option set it, renders ``--option: detail``.
    """

    def __init__(self, setting: str, detail: str) -> None:
        self.setting = setting
        self.detail = detail
        super().__init__(f"{setting}: {detail}")


class RuntimeFailure(CtxbenchError):
    """A provider or runtime failure: the CLI exits 3."""

    exit_code = 3


class ProviderError(RuntimeFailure):
    """A provider request that failed; ``error_class`` is what a trial records."""

    def __init__(self, message: str, *, error_class: str, retryable: bool = False) -> None:
        self.error_class = error_class
        self.retryable = retryable
        super().__init__(message)


def pointer_join(pointer: str, *parts: str | int) -> str:
    """Extend an RFC 6901 pointer, escaping ``~`` and ``/`` in keys."""
    out = pointer.rstrip("/") if pointer != "/" else ""
    for part in parts:
        token = str(part).replace("~", "~0").replace("/", "~1")
        out += "/" + token
    return out or "/"


__all__ += ["pointer_join"]
