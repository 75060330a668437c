"""A context manager's parameters: declared once, with their defaults, set per condition.

A manager declares what it takes as ``params``, a tuple of :class:`ManagerParam`::

    class KeepRecent:
        name = "keep-recent"
        params = (ManagerParam("k", 2, "steps kept whole", minimum=1),)
        ...
        def manage(self, request):
            k = param(request, self.params, "k")

A spec sets them per condition (``[[conditions]] params = { k = 4 }``);
:func:`resolve_params` checks the names and types against the declaration (the type is
the default's: integer, number, boolean or string; an integer is a number too, a boolean
is neither) and fills in the defaults, and the result reaches the manager as
``ContextRequest.params``, in-process, in its worker process and in an ``external:``
command's JSON request. A manager that declares none takes none; an ``external:`` command
declares nothing, so it takes any scalar parameters as given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_PARAMS", "ManagerParam", "ParamError", "Scalar", "declared_params",
           "param", "params_from_json", "params_text", "resolve_params"]

Scalar = int | float | bool | str
#: The most parameters a condition may set (and a manager declare).
MAX_PARAMS = 32
_MAX_TEXT = 1000


class ParamError(ValueError):
    """A parameter a condition may not set: ``name`` (None: the table itself), what was
    expected and the value given."""

    def __init__(self, name: str | None, expected: str, got: Any) -> None:
        self.name = name
        self.expected = expected
        self.got = got
        super().__init__(f"{name or 'params'}: expected {expected}, got "
                         f"{json.dumps(got, default=repr)[:60]}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _a(kind: str) -> str:
    return f"an {kind}" if kind == "integer" else f"a {kind}"


@dataclass(frozen=True, slots=True)
class ManagerParam:
    """One parameter: its name, its default (whose type is the parameter's), what it does,
    and optional bounds for a number."""

    name: str
    default: Scalar
    summary: str
    minimum: int | float | None = None
    maximum: int | float | None = None

    @property
    def kind(self) -> str:
        return _kind(self.default)

    def check(self, value: Any) -> Scalar:
        """``value`` if it has this parameter's type and bounds, else ParamError."""
        kind = _kind(value)
        ok = isinstance(value, bool | int | float | str) and (
            kind == self.kind or (self.kind == "number" and kind == "integer"))
        if not ok:
            raise ParamError(self.name, f"{_a(self.kind)} (the {self.name} parameter)", value)
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            raise ParamError(self.name, f"at most {_MAX_TEXT} characters", value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            low = self.minimum if self.minimum is not None else float("-inf")
            high = self.maximum if self.maximum is not None else float("inf")
            if not low <= value <= high:
                raise ParamError(self.name, f"{_a(self.kind)} in [{self.minimum}, "
                                 f"{self.maximum}]", value)
        return value  # type: ignore[no-any-return]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "default": self.default, "summary": self.summary,
                "minimum": self.minimum, "maximum": self.maximum}


def params_from_json(value: Any) -> tuple[ManagerParam, ...]:
    """Declarations from their JSON form (a worker's description); ValueError if not."""
    if not isinstance(value, list) or len(value) > MAX_PARAMS:
        raise ValueError("params: expected an array of declarations")
    out = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"name", "default", "summary",
                                                       "minimum", "maximum"} \
                or not isinstance(item["name"], str) or not isinstance(item["summary"], str) \
                or not isinstance(item["default"], bool | int | float | str) or not all(
                    v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                    for v in (item["minimum"], item["maximum"])):
            raise ValueError("params: expected {name, default, summary, minimum, maximum}")
        out.append(ManagerParam(item["name"], item["default"], item["summary"][:300],
                                item["minimum"], item["maximum"]))
    return tuple(out)


def declared_params(manager: Any) -> tuple[ManagerParam, ...] | None:
    """What ``manager`` declares (``()`` when it declares nothing); None for an
    ``external:`` command, which declares nothing and takes any scalar."""
    if getattr(manager, "accepts_any_params", False):
        return None
    declared = getattr(manager, "params", ())
    if not isinstance(declared, tuple) or not all(isinstance(p, ManagerParam)
                                                  for p in declared):
        raise ValueError(f"context manager {getattr(manager, 'name', '?')}: params: expected "
                         "a tuple of ManagerParam")
    return declared


def resolve_params(declared: Sequence[ManagerParam] | None, given: Mapping[str, Any]
                   ) -> dict[str, Scalar]:
    """The parameters a manager receives: ``given`` checked against ``declared`` (see the
    module), then every declared default not given; ParamError at the first bad one."""
    if not isinstance(given, Mapping):
        raise ParamError(None, "a table of parameters ({ name = value })", given)
    if len(given) > MAX_PARAMS:
        raise ParamError(None, f"at most {MAX_PARAMS} parameters", len(given))
    if declared is None:
        out: dict[str, Scalar] = {}
        for key, value in given.items():
            if isinstance(value, dict | list) or value is None:
                raise ParamError(str(key), "a scalar (integer, number, boolean or string)",
                                 value)
            out[str(key)] = value
        return dict(sorted(out.items()))
    by_name = {p.name: p for p in declared}
    for key in given:
        if key not in by_name:
            names = ", ".join(by_name) or "none: the manager declares no parameters"
            raise ParamError(str(key), f"a parameter the manager declares ({names})",
                             str(key))
    return {p.name: p.check(given[p.name]) if p.name in given else p.default
            for p in declared}


def param(request: Any, declared: Sequence[ManagerParam], name: str) -> Any:
    """The value of ``name`` for this turn: the condition's, else the declared default."""
    params = getattr(request, "params", None) or {}
    if name in params:
        return params[name]
    return next(p.default for p in declared if p.name == name)


def params_text(declared: Sequence[ManagerParam] | None) -> str:
    """``k=2, head_lines=1`` (the defaults), ``-`` for none, ``any`` for an external one."""
    if declared is None:
        return "any"
    return ", ".join(f"{p.name}={json.dumps(p.default)}" for p in declared) or "-"
