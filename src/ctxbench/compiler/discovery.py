"""Find context strategies: the ``ctxbench.strategies`` entry points, and ``module:attr``.

A distribution offers strategies by declaring entry points in that group::

    [project.entry-points."ctxbench.strategies"]
    my-packer = "my_package.packer:MyPacker"

The object may be a :class:`~ctxbench.compiler.plugins.Strategy` instance, a class
building one with no arguments, or a plain function ``build(request) -> StrategyResult``
(then budgeted, named after the entry point). ctxbench's own strategies are declared the
same way, once, in its ``pyproject.toml`` (:mod:`ctxbench.compiler.strategy_registry`
reads them; a source checkout reads its own file), and a third-party entry point may not
take a built-in name. Names are slugs
(``[a-z0-9][a-z0-9_.+-]{0,47}``), since a strategy names experiment conditions.
"""

from __future__ import annotations

from typing import Any

from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.packet import CompiledContext
from ctxbench.compiler.plugins import Strategy, StrategyRequest, StrategyResult
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategy_registry import (
    NAME,
    STRATEGY_GROUP,
    InstalledStrategy,
    builtin_strategies,
    get_strategy,
    installed_strategies,
    installed_version,
    is_builtin,
    is_strategy_name,
    is_target,
)
from ctxbench.core import InputError, RuntimeFailure

__all__ = [
    "NAME",
    "STRATEGY_GROUP",
    "InstalledStrategy",
    "builtin_strategies",
    "compile_named",
    "external_strategy",
    "get_strategy",
    "installed_strategies",
    "installed_version",
    "is_builtin",
    "is_strategy_name",
    "is_target",
    "strategy_facts",
    "strategy_source",
    "strategy_table",
]


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
    if is_target(name):
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
        info["requires"] = {dist: installed_version(dist) for dist in requires}
    return info


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
