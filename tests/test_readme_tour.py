"""Every command of the README's quick tour runs as written, from a source checkout.

The tour's shell blocks are run in order by bash with ``set -e`` in a scratch folder
that sees the checkout's ``src`` and ``tests`` (the shipped inputs the tour names);
``ctxbench`` and ``python`` are this interpreter's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tour() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quick tour"):text.index("Exit codes, for every command:")]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and "eceb register" in blocks[1]
    # A plugin module beside the spec: keep this checkout's ctxbench on the path too.
    return "\n".join(blocks).replace("PYTHONPATH=. ", "PYTHONPATH=.:$PYTHONPATH ")


def test_every_quick_tour_command_runs(tmp_path: Path) -> None:
    for name in ("src", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    script = (f'ctxbench() {{ "{sys.executable}" -m ctxbench "$@"; }}\n'
              f'python() {{ "{sys.executable}" "$@"; }}\nset -e\n' + _tour())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "claim_class conformance_seed (from --claim-class)" in out
    assert "budget my-packer@192: prompt 192 tokens = packet 88 + prompt overhead 104" in out
    mine_out = out[out.index("claim_class conformance_seed (from --claim-class)"):]
    assert re.search(r"^ECEB my-packer: 1/1 tasks qualified", mine_out, re.M), mine_out
    # Only the conditions that ran: that spec has neither compiled nor naive_top_k.
    assert not re.search(r"^ECEB (compiled|naive_top_k)", mine_out, re.M)
    mine = tmp_path / "tour" / "mine" / "run"
    assert (mine / "eceb-my-packer" / "eceb-report.json").exists()
    assert (tmp_path / "tour" / "run.html").exists()
