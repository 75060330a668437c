"""The library face is pinned: each face module's ``__all__``, that every name in it exists,
and that the faces import nothing private (after httpx's tests/test_exported_members.py).

Changing a face is an API change: update the pinned list here and docs/library.md.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ctxbench

SRC = Path(ctxbench.__file__).parent
FACES = {
    "ctxbench": ["__version__", "read_report", "write_html"],
    "ctxbench.cef": ["CefReport", "Preregistration", "TrialTable", "analyze", "example_paths",
                     "read_inputs", "read_preregistration", "read_report", "render_html",
                     "render_markdown", "write_report"],
    "ctxbench.public_eval": ["PairedCells", "PublicEvalReport", "Settings", "analyze",
                             "convert_cef", "read_inputs", "read_report", "render_html",
                             "render_markdown", "write_report"],
    "ctxbench.eceb": ["Inputs", "Report", "SeedPaths", "analyze", "benchmark_root", "read_inputs",
                      "read_report", "render_html", "render_markdown", "seed_paths",
                      "write_report"],
    "ctxbench.run": ["ExperimentSpec", "RunStopped", "RunSummary", "example_spec",
                     "read_spec", "resume", "run"],
    "ctxbench.testing": ["ConditionEffect", "LoopbackServer", "SeenRequest", "base_record",
                         "generate_records"],
    "ctxbench.compile": ["CompiledContext", "EvaluationReport", "Policy", "VerifiedCommit",
                         "compile_packet", "compile_task", "evaluate", "read_report",
                         "render_markdown", "verify_commit", "write_report"],
}


@pytest.mark.parametrize("name", sorted(FACES))
def test_face_exports_exactly_its_pinned_names_and_each_exists(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == FACES[name]
    for member in module.__all__:
        value = getattr(module, member)
        if callable(value) and not isinstance(value, type):
            assert value.__doc__, f"{name}.{member} has no docstring"
    assert sorted(dir(module)) == sorted(module.__all__)


def _source(name: str) -> Path:
    parts = name.split(".")[1:]
    if not parts:
        return SRC / "__init__.py"
    package = SRC.joinpath(*parts, "__init__.py")
    return package if package.exists() else SRC.joinpath(*parts[:-1], f"{parts[-1]}.py")


@pytest.mark.parametrize("name", sorted(FACES))
def test_face_imports_nothing_private(name: str) -> None:
    tree = ast.parse(_source(name).read_text(encoding="utf-8"))
    private = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            private += [a.name for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        private += [m for m in modules if any(p.startswith("_") for p in m.split("."))
                    and m != "__future__"]
    assert private == []


def test_lazy_names_point_at_modules_that_define_them() -> None:
    for name in FACES:
        module = importlib.import_module(name)
        where = getattr(module, "_WHERE", {})
        for member, home in where.items():
            full = home if "." in home else f"{name}.{home}"
            assert getattr(importlib.import_module(full), member) is getattr(module, member)


@pytest.mark.parametrize(("command", "face"), [
    ("cef", "ctxbench.cef"), ("public_eval", "ctxbench.public_eval"),
    ("eceb", "ctxbench.eceb"), ("report", "ctxbench")])
def test_the_cli_analyzes_and_renders_through_the_faces(command: str, face: str) -> None:
    """``cef analyze/render``, ``public-eval``, ``eceb evaluate/render`` and ``report``
    call the face, not the protocol's implementation modules or the renderers."""
    text = (SRC / "cli" / f"{command}.py").read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert face in imported
    assert not {m for m in imported if m.startswith("ctxbench.render")
                or m.endswith((".api", ".analysis", ".convert"))}, imported


def _defined(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level (TYPE_CHECKING imports and lazy names too)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == "_WHERE" for t in node.targets):
            names.update(k.value for k in node.value.keys
                         if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def test_every_all_list_names_only_what_its_module_defines() -> None:
    """No stale name in any ``__all__`` of the package (read from source, so that no
    optional extra needs importing), and no name twice."""
    stale = []
    for path in sorted(SRC.rglob("*.py")):
        if "data" in path.relative_to(SRC).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                assert isinstance(node.value, ast.List | ast.Tuple), path
                names = [e.value for e in node.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                assert len(names) == len(node.value.elts), path
                assert len(names) == len(set(names)), path
                stale += [f"{path.relative_to(SRC)}: {n}" for n in names
                          if n not in _defined(tree)]
    assert stale == []
