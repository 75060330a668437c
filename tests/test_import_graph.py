"""The import graph of src/ctxbench, read with ast: each layer imports only from the
layers above it (DESIGN.md's table), no private name crosses a file, and no package's
modules import each other in a circle.

An import inside a function counts like one at the top of the module: deferring it
only postpones the circle to the first call. Imports under ``if TYPE_CHECKING:`` are
annotations, not imports, and do not count.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted((SRC / "ctxbench").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if "data" in parts[1:2]:
            continue
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


MODULES = _modules()


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit_one(other)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        visit(node)

    visit(tree)
    return out


def _base(module: str, package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = (module if package else module.rpartition(".")[0]).split(".")
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


@cache
def _edges() -> dict[str, dict[str, int]]:
    """module -> {module it imports: line}, ctxbench modules only."""
    graph: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for module, (path, package) in MODULES.items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _base(module, package, node)
                targets = [base] + [f"{base}.{a.name}" for a in node.names
                                    if f"{base}.{a.name}" in MODULES]
            for target in targets:
                if target in MODULES and target != module:
                    graph[module].setdefault(target, node.lineno)
    return graph


def _private_module(name: str) -> str | None:
    """The package a private module (``pkg._mod``) belongs to, if ``name`` has one."""
    parts = name.split(".")
    for at, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:at])
    return None


def test_no_module_imports_a_private_name_of_another() -> None:
    """No ``from m import _name`` across files, and a private module (``pkg._mod``) is
    imported only inside its own package."""
    found = []
    for module, (path, package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = _base(module, package, node)
                names = [a.name for a in node.names]
                paths = [base]
            elif isinstance(node, ast.Import):
                base, names = "", []
                paths = [a.name for a in node.names]
            else:
                continue
            if not any(p.startswith("ctxbench") for p in paths):
                continue
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {base} {name}")
            for imported in paths:
                owner = _private_module(imported)
                if owner is not None and not (module + ".").startswith(owner + "."):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {imported}")
    assert found == []


def _cycles(package: str, graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), within ``package``."""
    inside = {m for m in graph if m == package or m.startswith(package + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in inside:
                continue
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(inside):
        if v not in index:
            connect(v)
    return out


PACKAGES = sorted(m for m, (_, package) in MODULES.items() if package and m != "ctxbench")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle_within_a_package(package: str) -> None:
    graph = _edges()
    described = [
        [f"{m} -> " + ", ".join(f"{t} (line {graph[m][t]})" for t in sorted(graph[m])
                                if t in cycle) for m in cycle]
        for cycle in _cycles(package, graph)]
    assert described == []


def test_the_graph_sees_deferred_imports() -> None:
    """A circle held by an import inside a function is found (the scan is not vacuous)."""
    graph = {"p.a": {"p.b": 1}, "p.b": {"p.a": 9}, "p": {}}
    assert _cycles("p", graph) == [["p.a", "p.b"]]
    tree = ast.parse("def f():\n    from ctxbench.x import y\nif TYPE_CHECKING:\n"
                     "    from ctxbench.z import w\n")
    assert [n.module for n in _runtime_imports(tree)] == ["ctxbench.x"]  # type: ignore[union-attr]
    assert _private_module("ctxbench.stats._score_one") == "ctxbench.stats"
    assert _private_module("ctxbench.stats.score") is None


# DESIGN.md's layers in order; a module may import its own layer and those before it.
# Placed beside them, each for a stated reason:
# - ``ctxbench.schemas`` (the JSON Schemas shipped as data, and their validator) imports
#   only ``ctxbench.core``: it sits with core, so any layer may validate against them;
# - ``ctxbench.calibration`` (simulations of the protocols' gates, run by ``ctxbench
#   calibrate``) computes on ``stats`` and ``protocols`` only: it sits right after them;
# - the faces (``ctxbench.cef``, ``.public_eval``, ``.eceb``, ``.run``, ``.compile``,
#   ``.report_reader``, ``.testing`` and the package itself) sit after the runner and before
#   the CLI, which calls only them; ``__main__`` runs the CLI.
LAYERS = ("core", "stats", "protocols", "calibration", "importers", "render", "compiler",
          "workloads", "runner", "<face>", "cli", "__main__")
_WITH = {"schemas": "core"}


def _layer(module: str) -> int:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "<face>"
    name = _WITH.get(name, name)
    return LAYERS.index(name) if name in LAYERS else LAYERS.index("<face>")


def _upward_imports() -> list[str]:
    """Each import (module level or deferred; not TYPE_CHECKING) of a later layer."""
    found = []
    for module, (path, package) in MODULES.items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [(a.name, "") for a in node.names]
            else:
                base = _base(module, package, node)
                targets = [(f"{base}.{a.name}", "") if f"{base}.{a.name}" in MODULES
                           else (base, a.name) for a in node.names]
            for target, name in targets:
                if target not in MODULES or target == module:
                    continue
                # The package's version constant: ``ctxbench/__init__.py`` holds it and
                # imports only ``ctxbench.core`` when imported (checked below).
                if target == "ctxbench" and name == "__version__":
                    continue
                if _layer(target) > _layer(module):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: "
                                 f"{LAYERS[_layer(module)]} imports {target}")
    return found


def test_each_layer_imports_only_from_the_layers_above_it() -> None:
    assert _upward_imports() == []


def test_the_package_root_imports_only_core_when_imported() -> None:
    """What makes ``from ctxbench import __version__`` safe in every layer."""
    tree = ast.parse(MODULES["ctxbench"][0].read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert all(not isinstance(n, ast.ImportFrom) or not (n.module or "").startswith(
        "ctxbench") or (n.module or "").startswith("ctxbench.core") for n in top)


def test_report_models_are_named_in_the_protocols_layer() -> None:
    """``protocols.reports`` imports models by name (importlib): those names obey the
    layers too."""
    from ctxbench.protocols.reports import REPORT_MODELS

    assert [m for m, _ in REPORT_MODELS.values()
            if _layer(m) > LAYERS.index("protocols")] == []


def test_the_layer_scan_sees_a_deferred_upward_import() -> None:
    assert _layer("ctxbench.core.errors") < _layer("ctxbench.protocols.cef.model")
    assert _layer("ctxbench.cef") == LAYERS.index("<face>") < _layer("ctxbench.cli.main")
    assert _layer("ctxbench.schemas") == _layer("ctxbench.core.errors")
