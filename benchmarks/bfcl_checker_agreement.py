"""BFCL checker agreement: ctxbench's decoder and checker beside BFCL's own, per category.

    .venv/bin/python benchmarks/bfcl_checker_agreement.py [PER_TASK]

Every task of every supported category yields its ground truth, other allowed values and
PER_TASK (default 6, as tests/workloads/test_bfcl_agreement.py) mutated outputs
(tests/workloads/bfcl_outputs.py, seed 20261201); each is judged by BFCL's own
evaluation from the installed wheel (tests/workloads/bfcl_reference.py) and by ctxbench.
Prints a Markdown table and every disagreement.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "workloads"))

from bfcl_reference import compare, load_reference, table

from ctxbench.workloads.bfcl import BFCL_CATEGORIES

SEED = 20261201


def main() -> None:
    per_task = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    print(f"bfcl-eval {importlib.metadata.version('bfcl-eval')}, {per_task} mutations "
          f"per task, seed {SEED}\n")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        reference = load_reference(Path(scratch))
        rows, differ = table(compare(reference, BFCL_CATEGORIES, per_task, SEED))
    print("| category | outputs | correct (BFCL) | BFCL raised | agree | agreement |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{time.perf_counter() - started:.1f} s")
    for o in differ:
        print(f"differ: {o.task_id} {o.kind}: BFCL {o.bfcl}, ctxbench {o.ctxbench}: "
              f"{o.text[:200]}")


if __name__ == "__main__":
    main()
