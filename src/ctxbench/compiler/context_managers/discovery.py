"""Find context managers: ``ctxbench.context_managers`` entry points, ``module:attr``, or
``external:COMMAND`` (a command speaking JSON on stdin and stdout).

A distribution offers managers by declaring entry points in that group::

    [project.entry-points."ctxbench.context_managers"]
    my-manager = "my_package.manager:MyManager"

The object may be a :class:`~ctxbench.compiler.context_managers.interface.ContextManager`
instance, a class building one with no arguments, or a plain function
``manage(request) -> ContextDecision`` (then budgeted, named after the entry point).
ctxbench's own managers are declared the same way and are known without installed
metadata; a third party may not take a built-in name. Names are slugs, as strategies'.

``external:COMMAND`` runs COMMAND once per turn (:mod:`ctxbench.compiler.external`'s
subprocess runner, killed at its deadline) with the request
``{"task_id", "turn", "budget", "tokenizer", "tools", "messages", "params"}`` on stdin
(``params``: the condition's parameters; an external command declares none, so a
condition may give it any scalars) and reads
``{"messages": [...], "details"?: {name: value}}`` from stdout (messages in the JSON form
of :func:`~ctxbench.compiler.context_managers.interface.messages_to_json`).
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib import metadata
from typing import Any

from ctxbench.compiler.context_managers.interface import (
    ContextDecision,
    ContextManager,
    ContextManagerFailure,
    ContextRequest,
    messages_from_json,
    messages_to_json,
)
from ctxbench.compiler.discovery import NAME
from ctxbench.core import InputError, RuntimeFailure
from ctxbench.core.entrypoints import own_entries

__all__ = ["BUILTIN", "GROUP", "context_manager_table", "get_context_manager",
           "installed_context_managers", "load_context_manager", "manager_source"]

GROUP = "ctxbench.context_managers"
# ctxbench's own managers: their one declaration is pyproject.toml's entry points (read
# from the source checkout, or from the installed distribution's metadata).
BUILTIN: dict[str, str] = own_entries(GROUP)
EXTERNAL_TIMEOUT_S = 120.0


@cache
def installed_context_managers() -> dict[str, tuple[str, str, str]]:
    """Name -> (target, distribution, version) of every manager offered here, built-ins
    first; a third-party entry point with a built-in's name is ignored, and a name that
    cannot be used maps to a target of ``""`` and the reason in place of the version."""
    from ctxbench import __version__

    found = {name: (target, "ctxbench", __version__) for name, target in BUILTIN.items()}
    for ep in metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "unknown"
        if dist_name == "ctxbench" and ep.name in BUILTIN:
            continue
        if ep.name in BUILTIN or ep.name.startswith("external"):
            continue  # ctxbench's own name: the built-in keeps it
        if ep.name in found:
            found[ep.name] = ("", dist_name, "declared by several distributions")
        elif not NAME.fullmatch(ep.name):
            found[ep.name] = ("", dist_name, "the name is not a slug")
        else:
            found[ep.name] = (ep.value, dist_name,
                              dist.version if dist is not None else "unknown")
    return found


class _Function:
    budgeted = True
    summarizes = False
    params: tuple[Any, ...] = ()

    def __init__(self, name: str, function: Any) -> None:
        self.name = name
        self._function = function
        doc = (getattr(function, "__doc__", None) or "").strip().splitlines()
        self.summary = doc[0] if doc else "a function context manager"

    def manage(self, request: ContextRequest) -> Any:
        return self._function(request)


class _External:
    budgeted = True
    summarizes = False
    accepts_any_params = True  # it declares none: the condition's go through as given

    def __init__(self, command: str) -> None:
        from ctxbench.compiler.external import load_external_strategy

        self.name = "external"
        self.summary = f"external command {command[:80]}"
        self._run = load_external_strategy(command, timeout_s=EXTERNAL_TIMEOUT_S)

    def manage(self, request: ContextRequest) -> ContextDecision:
        payload = {"task_id": request.task_id, "turn": request.turn, "budget": request.budget,
                   "tokenizer": request.tokenizer.id, "tools": list(request.tools),
                   "messages": messages_to_json(request.messages),
                   "params": dict(request.params)}
        try:
            answer = self._run(payload)
        except RuntimeFailure as exc:
            kind = "timeout" if "no answer within" in str(exc) else "exception"
            raise ContextManagerFailure(self.name, kind, str(exc)) from exc
        if not isinstance(answer, dict) or not set(answer) <= {"messages", "details"} \
                or "messages" not in answer:
            raise ContextManagerFailure(self.name, "invalid_output", "expected an object "
                                        "with messages and optional details")
        details = answer.get("details", {})
        if not isinstance(details, dict):
            raise ContextManagerFailure(self.name, "invalid_output", "/details: expected an "
                                        "object")
        return ContextDecision(messages_from_json(self.name, answer["messages"]),
                               tuple((str(k), str(v)) for k, v in details.items()))


def _load(target: str, name: str) -> ContextManager:
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type):
            obj = obj()
    except Exception as exc:  # any import-time failure of a plugin is the plugin's
        raise InputError(f"context manager {name}: cannot load {target}: "
                         f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    if isinstance(obj, ContextManager):
        return obj
    if callable(obj):
        return _Function(name, obj)
    raise InputError(f"context manager {name}: {target} is neither a context manager nor "
                     "callable")


@cache
def get_context_manager(name: str) -> ContextManager:
    """The manager an installed name, ``module:attr`` or ``external:COMMAND`` names; one
    that is not ctxbench's own runs in a worker process
    (:mod:`ctxbench.compiler.context_managers.isolation`).

    Raises InputError naming what is installed when nothing matches.
    """
    if name in BUILTIN or name.startswith("external:"):
        return load_context_manager(name)
    if ":" not in name:
        found = installed_context_managers()
        if name not in found:
            raise InputError(f"context manager: expected one of {', '.join(found)} "
                             f"(installed), module:attr or external:COMMAND, got "
                             f"{name[:80]!r}")
        if not found[name][0]:
            raise InputError(f"context manager {name} ({found[name][1]}): {found[name][2]}")
    from ctxbench.compiler.context_managers.isolation import IsolatedContextManager

    return IsolatedContextManager(name)


def load_context_manager(name: str) -> ContextManager:
    """The manager ``name`` names, loaded in this process (a worker process calls this)."""
    if name.startswith("external:"):
        return _External(name[len("external:"):])
    if ":" in name:
        manager = _load(name, name)
        if not NAME.fullmatch(manager.name):
            raise InputError(f"context manager {name}: name: expected a slug, got "
                             f"{str(manager.name)[:60]!r}")
        return manager
    found = installed_context_managers()
    if name not in found:
        raise InputError(f"context manager: expected one of {', '.join(found)} (installed), "
                         f"module:attr or external:COMMAND, got {name[:80]!r}")
    target, dist, version = found[name]
    if not target:
        raise InputError(f"context manager {name} ({dist}): {version}")
    manager = _load(target, name)
    if manager.name != name:
        raise InputError(f"context manager {name}: {target} names itself "
                         f"{str(manager.name)[:60]!r}; expected {name!r}")
    return manager


def manager_source(name: str) -> dict[str, str]:
    """Where a manager came from, for the trial record."""
    if name.startswith("external:"):
        return {"origin": "external", "command": name[len("external:"):]}
    if ":" in name:
        return {"origin": "module:attr", "target": name}
    target, dist, version = installed_context_managers()[name]
    origin = "built-in" if name in BUILTIN else "third-party"
    return {"origin": origin, "distribution": dist, "version": version, "target": target}


def context_manager_table() -> str:
    """One line per installed context manager: name, origin (built-in or entry point),
    distribution and version, target, budgeted, and what it does (or why it cannot be
    used), and the parameters it declares with their defaults. A ``module:attr`` or
    ``external:COMMAND`` manager is named in a spec, not installed, so it is not
    listed."""
    from ctxbench.compiler.context_managers.params import declared_params, params_text

    rows = [("name", "origin", "distribution", "target", "budgeted", "params (defaults)",
             "what it does")]
    for name, (target, dist, version) in installed_context_managers().items():
        origin = "built-in" if name in BUILTIN else "entry point"
        budgeted, shown, params = "-", version, "-"
        if not target:
            what, shown = f"UNUSABLE: {version}", ""
        else:
            try:
                manager = get_context_manager(name)
                what = str(getattr(manager, "summary", "") or "")
                budgeted = "yes" if manager.budgeted else "no"
                params = params_text(declared_params(manager))[:120]
            except (InputError, ValueError) as exc:
                what = f"UNUSABLE: {exc}"
        rows.append((name, origin, f"{dist} {shown}".strip(), target or "-", budgeted, params,
                     " ".join(what.split())[:160]))
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(6)) + "  " + r[6]
                     for r in rows)
