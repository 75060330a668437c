"""Every example of docs/library.md runs as written, and the page names every face export.

The page's ``python`` blocks run in order, as one script, in an empty folder, with this
checkout's ``src`` first on the path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from test_exported_members import FACES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "library.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_every_library_example_runs(tmp_path: Path) -> None:
    blocks = _blocks()
    assert len(blocks) >= 7
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "conformance_fixture ['entroly']" in out
    assert "eceb-report.json: /schema: expected a CEF report, got an ECEB report" in out
    for name, kind in (("cef", "CefReport"), ("pe", "PublicEvalReport"), ("eceb", "Report")):
        assert f"{name}-report.json {kind}\n" in out
    assert (tmp_path / "side-by-side.html").exists()


def test_the_page_names_every_export_of_every_face() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("## Names"):]
    for module, names in FACES.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{module}` |"))
        assert re.findall(r"`([A-Za-z_]+)`", row.split("|")[2]) == names, module
