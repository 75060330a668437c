"""BFCL multi-turn checker agreement: ctxbench's checker beside BFCL's own, per category.

    .venv/bin/python benchmarks/bfcl_multi_turn_agreement.py

Every task of the four multi-turn categories yields its ground truth (one step per turn,
and one call per step) and up to three effective mutants drawn with seed 20261202 (a
dropped call, a wrong argument, two adjacent calls swapped;
tests/workloads/bfcl_multi_turn_reference.py); each trajectory is judged by BFCL's
``multi_turn_checker`` run from the installed wheel and by ctxbench's
``MultiTurnTask.check``. Prints a Markdown table and every disagreement.
"""

from __future__ import annotations

import importlib.metadata
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "workloads"))

from bfcl_multi_turn_reference import compare, table

from ctxbench.workloads.bfcl_multi_turn import MULTI_TURN_CATEGORIES

SEED = 20261202


def main() -> None:
    print(f"bfcl-eval {importlib.metadata.version('bfcl-eval')}, seed {SEED}\n")
    started = time.perf_counter()
    outcomes = list(compare(MULTI_TURN_CATEGORIES, SEED))
    print("| category | kind | trajectories | accepted (BFCL) | accepted (ctxbench) | agree "
          "| agreement |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(table(outcomes)))
    for o in outcomes:
        if o.bfcl != o.ctxbench:
            print(f"DIFFER {o.task_id} {o.kind}: BFCL {o.bfcl}, ctxbench {o.ctxbench}")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
