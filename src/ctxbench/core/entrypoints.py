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

import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["DISTRIBUTION", "EntryPoint", "own_entries", "source_pyproject",
           "third_party_entries"]

DISTRIBUTION = "ctxbench"
_PACKAGE = Path(__file__).resolve().parents[1]  # .../ctxbench
_NORMALIZE = re.compile(r"[-_.]+")


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """One third-party entry: its name, ``module:attr`` and where it was declared."""

    name: str
    target: str
    distribution: str
    version: str


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
