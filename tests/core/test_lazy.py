"""Package attributes load on first use, once, and unknown names are AttributeErrors."""

from __future__ import annotations

import subprocess
import sys

import pytest

PACKAGES = ("ctxbench.core", "ctxbench.compiler", "ctxbench.protocols.cef",
            "ctxbench.protocols.public_eval", "ctxbench.protocols.eceb")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_and_is_stored(package: str) -> None:
    code = (f"import importlib, sys\nm = importlib.import_module({package!r})\n"
            "assert sorted(dir(m)) == sorted(m.__all__), dir(m)\n"
            "for name in m.__all__:\n"
            "    value = getattr(m, name)\n"
            "    assert m.__dict__[name] is value, name\n"
            "try:\n    m.no_such_name\nexcept AttributeError as exc:\n"
            f"    assert str(exc) == \"module {package!r} has no attribute 'no_such_name'\"\n"
            "else:\n    raise SystemExit('no AttributeError')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr


def test_importing_a_package_imports_none_of_its_modules() -> None:
    code = ("import sys\nimport ctxbench.protocols.cef, ctxbench.protocols.public_eval, "
            "ctxbench.compiler\n"
            "heavy = [m for m in ('numpy', 'ctxbench.protocols.cef.analysis', "
            "'ctxbench.protocols.public_eval.analysis', 'ctxbench.compiler.index') "
            "if m in sys.modules]\nassert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_eceb_package_keeps_evaluate_a_function() -> None:
    # evaluate lives in analysis.py: no submodule of the same name can shadow it
    import ctxbench.protocols.eceb as eceb
    import ctxbench.protocols.eceb.analysis  # noqa: F401  (binds the submodule)

    assert callable(eceb.evaluate) and not isinstance(eceb.evaluate, type(sys))
