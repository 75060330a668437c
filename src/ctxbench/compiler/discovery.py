"""Find context strategies: the ``ctxbench.strategies`` entry points, and ``module:attr``.

A distribution offers strategies by declaring entry points in that group::

    [project.entry-points."ctxbench.strategies"]
    my-packer = "my_package.packer:MyPacker"

The object may be a :class:`~ctxbench.compiler.plugins.Strategy` instance, a class
building one with no arguments, or a plain function ``build(request) -> StrategyResult``
(then budgeted, named after the entry point). ctxbench's own strategies are declared the
same way; they are also known without installed metadata (a source checkout), and a
third-party entry point may not take a built-in name. Names are slugs
(``[a-z0-9][a-z0-9_.+-]{0,47}``), since a strategy names experiment conditions.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from ctxbench import __version__
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.plugins import Strategy, StrategyRequest, StrategyResult
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import CompiledContext
from ctxbench.core import InputError, RuntimeFailure

__all__ = [
    "BUILTIN",
    "STRATEGY_GROUP",
    "InstalledStrategy",
    "compile_named",
    "external_strategy",
    "get_strategy",
    "installed_strategies",
    "is_builtin",
    "is_strategy_name",
    "is_target",
    "strategy_facts",
    "strategy_source",
    "strategy_table",
]

STRATEGY_GROUP = "ctxbench.strategies"
NAME = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,47}")
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
#: ctxbench's own strategies: name -> ``module:attr`` (pyproject.toml declares the same).
BUILTIN: dict[str, str] = {
    "compiled": "ctxbench.compiler.baselines:COMPILED",
    "naive_top_k": "ctxbench.compiler.baselines:NAIVE_TOP_K",
    "full_permitted_context": "ctxbench.compiler.baselines:FULL_PERMITTED_CONTEXT",
    "truncate-head": "ctxbench.compiler.baselines:TRUNCATE_HEAD",
    "truncate-tail": "ctxbench.compiler.baselines:TRUNCATE_TAIL",
    "middle-out": "ctxbench.compiler.baselines:MIDDLE_OUT",
    "chunk-bm25": "ctxbench.compiler.baselines:CHUNK_BM25",
    "entroly": "ctxbench.compiler.entroly_adapter:ENTROLY",
}


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
        for name, target in BUILTIN.items()}
    third: dict[str, list[InstalledStrategy]] = {}
    for ep in metadata.entry_points(group=STRATEGY_GROUP):
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "unknown"
        dist_version = dist.version if dist is not None else "unknown"
        if dist_name == "ctxbench" and found.get(ep.name) is not None:
            continue  # ctxbench's own declaration of a built-in
        item = InstalledStrategy(ep.name, ep.value, "third-party", dist_name, dist_version)
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
    return name in BUILTIN


def strategy_facts(name: str) -> Any:
    """The strategy ``name`` names, for its ``name``, ``budgeted``, ``summary`` and
    ``requires``: the object itself when built-in, else its worker process (so no
    third-party code is imported here)."""
    if is_builtin(name):
        return get_strategy(name)
    from ctxbench.compiler import plugins
    from ctxbench.compiler.isolation import isolated

    return isolated(name, plugins.STRATEGY_TIMEOUT_S)


def strategy_source(name: str) -> dict[str, Any]:
    """Where a strategy came from, for commits and run manifests.

    ``requires`` lists the installed version of each distribution it declares it needs
    (the Entroly adapter: ``entroly`` and ``entroly-core``).
    """
    strategy = strategy_facts(name)
    if _TARGET.fullmatch(name):
        info: dict[str, Any] = {"origin": "module:attr", "target": name}
    else:
        item = next(i for i in installed_strategies() if i.name == name)
        info = {"origin": item.origin, "distribution": item.distribution,
                "version": item.version, "entry_point": item.entry_point}
    requires = getattr(strategy, "requires", ())
    if isinstance(requires, dict):  # a worker's: versions as installed where it runs
        if requires:
            info["requires"] = dict(requires)
    elif requires:
        info["requires"] = {dist: _version(dist) for dist in requires}
    return info


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def compile_named(index: ContextIndex, *, query: str, budget: int | None, policy: Policy,
                  strategy: str, task_id: str | None = None) -> CompiledContext:
    """The packet of an installed strategy (or ``module:attr``), checked and committed.

    A third-party strategy runs in a worker process under
    :data:`ctxbench.compiler.plugins.STRATEGY_TIMEOUT_S` (killed at the deadline); its
    failures raise :class:`~ctxbench.compiler.plugins.StrategyFailure`.
    """
    from ctxbench.compiler import plugins

    found = strategy_facts(strategy)
    source = strategy_source(strategy)
    if found.budgeted and (isinstance(budget, bool) or not isinstance(budget, int)
                           or budget < 1):
        raise InputError(f"budget: expected an integer >= 1 for {strategy}, got {budget!r}")
    if not found.budgeted and budget is not None:
        raise InputError(f"budget: {strategy} takes no budget (pass None), got {budget!r}")
    if not is_builtin(strategy):  # in its worker, under the deadline the worker enforces
        found.timeout_s = plugins.STRATEGY_TIMEOUT_S
    return plugins.compile_with_strategy(index, strategy=found, query=query, budget=budget,
                                         policy=policy, task_id=task_id, timeout_s=None,
                                         source=source)


def strategy_table() -> str:
    """One line per installed strategy: name, origin, distribution and version, entry
    point, and what it does (or why it cannot be used)."""
    rows = [("name", "origin", "distribution", "entry point", "what it does")]
    for item in installed_strategies():
        if item.problem is not None:
            what = f"UNUSABLE: {item.problem}"
        else:
            try:  # a third party's summary comes from its worker process
                what = strategy_facts(item.name).summary
            except (InputError, RuntimeFailure) as exc:
                what = f"UNUSABLE: {exc}"
        rows.append((item.name, item.origin, f"{item.distribution} {item.version}",
                     f"{item.name} = {item.target}", " ".join(str(what).split())[:160]))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4]
                     for r in rows)


class _JsonProtocol:
    """A ``module:function`` or command line speaking the JSON protocol of
    :mod:`ctxbench.compiler.external`, as a strategy (the same checks as any other)."""

    budgeted = True

    def __init__(self, name: str, command: str, timeout_s: float) -> None:
        from ctxbench.compiler.external import load_external_strategy

        self.name = name
        self.summary = f"external system {command[:80]}"
        self._system = load_external_strategy(command, timeout_s=timeout_s)

    def build(self, request: StrategyRequest) -> StrategyResult:
        from ctxbench.compiler.plugins import Selected, StrategyFailure
        from ctxbench.core import RuntimeFailure

        try:
            response = self._system(request.to_json())
        except RuntimeFailure as exc:
            kind = "timeout" if "no answer within" in str(exc) else "exception"
            raise StrategyFailure(self.name, kind, str(exc)) from exc
        if not isinstance(response, dict) or set(response) != {"context", "selected"}:
            raise StrategyFailure(self.name, "invalid_output",
                                  "expected an object with exactly context and selected")
        context, items = response["context"], response["selected"]
        if not isinstance(items, list):
            raise StrategyFailure(self.name, "invalid_output", "selected: expected an array")
        selected = []
        for n, item in enumerate(items):
            ranges = item.get("ranges") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(item.get("artifact_id"), str) or (
                    ranges is not None and not (isinstance(ranges, list) and ranges and all(
                        isinstance(r, list) and len(r) == 2 for r in ranges))):
                raise StrategyFailure(self.name, "invalid_output", f"selected/{n}: expected "
                                      "{artifact_id: string, ranges?: [[start, end], ...]}")
            selected.append(Selected(item["artifact_id"], None if ranges is None else
                                     tuple((r[0], r[1]) for r in ranges)))
        return StrategyResult(context, tuple(selected))


def external_strategy(command: str, name: str = "external",
                      timeout_s: float = 120.0) -> Strategy:
    """A JSON-protocol system (``module:function`` or a command line) as a strategy."""
    return _JsonProtocol(name, command, timeout_s)
