"""Entry-point groups read the same way for ctxbench's own entries and third parties'.

ctxbench declares its own strategies, providers and workloads once, in its
``pyproject.toml`` (``[project.entry-points."ctxbench.<kind>"]``), exactly as a third-party
distribution declares its own. Installed, the declarations are the distribution's
metadata; in a source checkout (``src/ctxbench`` beside its ``pyproject.toml``) the
checkout's own file is read instead, so the entries always describe the code that is
imported, even when the installed metadata belongs to another checkout or to none.

    own = own_entries("ctxbench.providers")        # {"openai": "ctxbench....:FACTORY", ...}
    for entry in third_party_entries("ctxbench.providers"): ...

Nothing is imported here: a target is loaded only when its name is asked for.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from ctxbench.core.errors import InputError

__all__ = ["DISTRIBUTION", "EntryPoint", "Registry", "own_entries", "source_pyproject",
           "third_party_entries"]

DISTRIBUTION = "ctxbench"
_PACKAGE = Path(__file__).resolve().parents[1]  # .../ctxbench
_NORMALIZE = re.compile(r"[-_.]+")


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """One entry: its name, ``module:attr``, where it was declared, and (when it cannot be
    used) why."""

    name: str
    target: str
    distribution: str
    version: str
    problem: str | None = None


def source_pyproject() -> Path | None:
    """The ``pyproject.toml`` of the source checkout ctxbench is imported from, if any."""
    if _PACKAGE.parent.name != "src":
        return None
    path = _PACKAGE.parent.parent / "pyproject.toml"
    return path if path.is_file() else None


@cache
def _own_declarations() -> dict[str, dict[str, str]]:
    """Every ctxbench entry-point group, as its own declaration says."""
    path = source_pyproject()
    if path is not None:
        import tomllib

        with path.open("rb") as handle:
            project: Any = tomllib.load(handle).get("project", {})
        if isinstance(project, dict) and project.get("name") == DISTRIBUTION:
            groups = project.get("entry-points", {})
            return {str(g): {str(k): str(v) for k, v in table.items()}
                    for g, table in groups.items() if isinstance(table, dict)}
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, dict[str, str]] = {}
    for ep in dist.entry_points:
        found.setdefault(ep.group, {})[ep.name] = ep.value
    return found


def own_entries(group: str) -> dict[str, str]:
    """ctxbench's own entries of ``group``: name -> ``module:attr``, in declared order."""
    return dict(_own_declarations().get(group, {}))


def _is_own(name: str) -> bool:
    return _NORMALIZE.sub("-", name).lower() == DISTRIBUTION


def third_party_entries(group: str) -> list[EntryPoint]:
    """Every installed distribution's entries of ``group`` except ctxbench's own."""
    out: list[EntryPoint] = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "unknown"
        if dist_name is not None and _is_own(str(dist_name)):
            continue  # ctxbench's own, read from its declaration above
        out.append(EntryPoint(ep.name, ep.value, str(dist_name),
                              dist.version if dist is not None else "unknown"))
    return out


class Registry:
    """The names of one entry-point group: ctxbench's own first (declared order), then
    third parties' by name. A third party may not take one of ctxbench's names, and a
    name two distributions declare is refused; either is said when the name is asked for.

        PROVIDERS = Registry("ctxbench.providers", "provider")
        PROVIDERS.names()              # ["openai", "anthropic", "llamacpp", "fixture", ...]
        factory = PROVIDERS.load("openai")
    """

    def __init__(self, group: str, what: str, version: str) -> None:
        self.group = group
        self.what = what
        self._version = version
        self._entries: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, Any] = {}

    def entries(self) -> dict[str, EntryPoint]:
        """Every entry by name (nothing is imported)."""
        if self._entries is None:
            found = {name: EntryPoint(name, target, DISTRIBUTION, self._version)
                     for name, target in own_entries(self.group).items()}
            third: dict[str, list[EntryPoint]] = {}
            for entry in third_party_entries(self.group):
                third.setdefault(entry.name, []).append(entry)
            for name in sorted(third):
                items = third[name]
                first = items[0]
                if name in found:
                    found[f"{name} ({first.distribution})"] = _with(
                        first, f"the name is ctxbench's own {self.what}; a third party "
                        "cannot take it")
                    continue
                if len(items) > 1:
                    who = ", ".join(sorted(f"{i.distribution} {i.version}" for i in items))
                    first = _with(first, f"declared by several distributions ({who})")
                found[name] = first
            self._entries = found
        return self._entries

    def names(self) -> list[str]:
        """The usable names, ctxbench's own first."""
        return [n for n, e in self.entries().items() if e.problem is None]

    def load(self, name: str) -> Any:
        """The object ``name`` names (a class is instantiated with no arguments); an
        unknown name raises InputError listing the known ones."""
        if name in self._loaded:
            return self._loaded[name]
        entry = self.entries().get(name)
        if entry is None:
            raise InputError(f"{self.what}: expected one of {', '.join(self.names())}, "
                             f"got {name[:80]!r}")
        if entry.problem is not None:
            raise InputError(f"{self.what} {name} ({self.group}: {name} = {entry.target}, "
                             f"{entry.distribution}): {entry.problem}")
        module_name, _, attr = entry.target.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
            if isinstance(obj, type):
                obj = obj()
        except Exception as exc:  # any import-time failure of a plugin is the plugin's
            raise InputError(f"{self.what} {name}: cannot load {entry.target}: "
                             f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        self._loaded[name] = obj
        return obj

    def clear(self) -> None:
        """Forget what was found and loaded (after installing a distribution)."""
        self._entries = None
        self._loaded.clear()
        _own_declarations.cache_clear()


def _with(entry: EntryPoint, problem: str) -> EntryPoint:
    return EntryPoint(entry.name, entry.target, entry.distribution, entry.version, problem)
