"""Without an optional extra, the tests that need it are skipped, never a collection error.

A plain install (``pip install ctxbench``, no extras) must still collect the whole suite:
each module that imports an extra at its top asks ``pytest.importorskip`` first. The check
collects every such module in a fresh interpreter in which the extras cannot be imported.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
EXTRAS = ("ray", "entroly", "bfcl_eval", "inspect_ai", "llama_cpp", "playwright",
          "langchain", "langchain_text_splitters", "rank_bm25")
_IMPORTS = re.compile(rf"^\s*(?:import|from)\s+({'|'.join(EXTRAS)})\b", re.MULTILINE)

# Run in the child: every extra's import fails as a missing package would.
_BLOCKED = f"""
import importlib.abc, sys
class _Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {set(EXTRAS)!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Missing())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def _modules_importing_extras() -> list[str]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path != Path(__file__) and _IMPORTS.search(path.read_text(encoding="utf-8")):
            found.append(str(path.relative_to(TESTS.parent)))
    return found


def test_modules_needing_an_extra_are_skipped_when_it_is_missing() -> None:
    modules = [m for m in _modules_importing_extras() if Path(m).name.startswith("test_")]
    assert len(modules) >= 4  # the entroly and inspect tests at least
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKED, "--collect-only", "-q", "-p", "no:cacheprovider",
         *modules],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300, check=False)
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert errors == [], done.stdout[-3000:]
    assert done.returncode in (0, 5), done.stdout[-3000:]
