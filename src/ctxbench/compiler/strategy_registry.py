"""Installed context strategies by name: the ``ctxbench.strategies`` entry points.

ctxbench's own strategies are its own entry points in that group (declared once, in
``pyproject.toml``), read like every third party's; a third-party entry point may not
take a built-in name. Loading a name imports its target; what a strategy's facts are and
where it runs (a worker process for third parties) is :mod:`ctxbench.compiler.discovery`.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from ctxbench import __version__
from ctxbench.compiler.plugins import Strategy, StrategyRequest, StrategyResult
from ctxbench.core import InputError
from ctxbench.core.entrypoints import own_entries, third_party_entries

__all__ = [
    "NAME",
    "STRATEGY_GROUP",
    "InstalledStrategy",
    "builtin_strategies",
    "get_strategy",
    "installed_strategies",
    "installed_version",
    "is_builtin",
    "is_strategy_name",
    "is_target",
]

STRATEGY_GROUP = "ctxbench.strategies"
NAME = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,47}")
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def builtin_strategies() -> dict[str, str]:
    """ctxbench's own strategies, name -> ``module:attr``: its ``ctxbench.strategies``
    entry points, the one declaration (:mod:`ctxbench.core.entrypoints`)."""
    return own_entries(STRATEGY_GROUP)


@dataclass(frozen=True, slots=True)
class InstalledStrategy:
    """Where a strategy name comes from; ``problem`` says why it cannot be used, if so."""

    name: str
    target: str
    origin: str  # "built-in" or "third-party"
    distribution: str
    version: str
    problem: str | None = None

    @property
    def entry_point(self) -> str:
        return f"{STRATEGY_GROUP}: {self.name} = {self.target}"


class _FunctionStrategy:
    """A plain ``build(request)`` function as a budgeted strategy."""

    budgeted = True

    def __init__(self, name: str, function: Any) -> None:
        self.name = name
        self._function = function
        doc = (getattr(function, "__doc__", None) or "").strip().splitlines()
        self.summary = doc[0] if doc else "a function strategy"

    def build(self, request: StrategyRequest) -> StrategyResult:
        return self._function(request)  # type: ignore[no-any-return]


@cache
def installed_strategies() -> tuple[InstalledStrategy, ...]:
    """Every strategy name offered here, built-ins first, then third parties by name.

    Nothing is imported: a broken plugin only fails when it is asked for.
    """
    found: dict[str, InstalledStrategy] = {
        name: InstalledStrategy(name, target, "built-in", "ctxbench", __version__)
        for name, target in builtin_strategies().items()}
    third: dict[str, list[InstalledStrategy]] = {}
    for ep in third_party_entries(STRATEGY_GROUP):
        item = InstalledStrategy(ep.name, ep.target, "third-party", ep.distribution,
                                 ep.version)
        if not NAME.fullmatch(ep.name):
            item = _problem(item, "the name is not a slug [a-z0-9][a-z0-9_.+-]{0,47}")
        elif ep.name in found or ep.name == "external":
            item = _problem(item, "the name is ctxbench's own; a third party cannot take it")
        third.setdefault(ep.name, []).append(item)
    out = list(found.values())
    for name in sorted(third):
        items = third[name]
        if len(items) > 1:
            who = ", ".join(sorted(f"{i.distribution} {i.version}" for i in items))
            items = [_problem(i, f"declared by several distributions ({who})")
                     for i in items]
        out.extend(items)
    return tuple(out)


def _problem(item: InstalledStrategy, problem: str) -> InstalledStrategy:
    return InstalledStrategy(item.name, item.target, item.origin, item.distribution,
                             item.version, item.problem or problem)


def is_strategy_name(name: str) -> bool:
    """True when ``name`` is an installed strategy that can be used."""
    return any(i.name == name and i.problem is None for i in installed_strategies())


def is_target(name: str) -> bool:
    """True when ``name`` is a ``module:attr`` target rather than an installed name."""
    return _TARGET.fullmatch(name) is not None


def _load(target: str, name: str, function_name: str | None = None) -> Strategy:
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # any import-time failure of a plugin is the plugin's
        raise InputError(f"strategy {name}: cannot load {target}: "
                         f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(f"strategy {name}: {target}() failed: "
                             f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    if isinstance(obj, Strategy):
        return obj
    if callable(obj):
        return _FunctionStrategy(function_name or name, obj)
    raise InputError(f"strategy {name}: {target} is neither a strategy nor callable")


@cache
def get_strategy(name: str) -> Strategy:
    """The strategy an installed name (or a ``module:attr`` target) names.

    Raises InputError naming what is installed when nothing matches.
    """
    if _TARGET.fullmatch(name):
        # A plain function has no name of its own: it takes its target's, ":" read as ".".
        strategy = _load(name, name, name.replace(":", ".").lower())
        if not NAME.fullmatch(strategy.name):
            raise InputError(f"strategy {name}: name: expected a slug "
                             f"[a-z0-9][a-z0-9_.+-]{{0,47}}, got {strategy.name[:60]!r}")
        return strategy
    matches = [i for i in installed_strategies() if i.name == name]
    if not matches:
        known = ", ".join(i.name for i in installed_strategies() if i.problem is None)
        raise InputError(f"strategy: expected one of {known} (installed), or "
                         f"module:attr, got {name[:80]!r}")
    if matches[0].problem is not None:
        raise InputError(f"strategy {name} ({matches[0].entry_point}, "
                         f"{matches[0].distribution}): {matches[0].problem}")
    strategy = _load(matches[0].target, name)
    if strategy.name != name:
        raise InputError(f"strategy {name}: {matches[0].target} names itself "
                         f"{strategy.name[:60]!r}; expected {name!r}")
    return strategy


def is_builtin(name: str) -> bool:
    """True when ``name`` is one of ctxbench's own strategies (run in-process); any other
    runs in a worker process (:mod:`ctxbench.compiler.isolation`)."""
    return name in builtin_strategies()


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``not installed``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
