"""BFCL scorer validation: ground-truth answers and mutated calls, counted per category.

    .venv/bin/python benchmarks/bfcl_scorer_validation.py

Every possible_answer entry of each supported category is rendered as a call (first
allowed value of each parameter; tests/workloads/bfcl_mutations.py) and scored by
ctxbench's AST checker, then each mutation of it (wrong function name, missing required
parameter, wrong value, wrong type, extra unknown parameter, dropped parallel call).
Prints a Markdown table; the same checks run in tests/workloads/test_bfcl_validation.py.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "workloads"))

from bfcl_mutations import AST_CATEGORIES, GREEDY_ORDER, MUTATIONS, tally

from ctxbench.workloads import load_bfcl
from ctxbench.workloads.bfcl import BFCL_ERRATA


def main() -> None:
    print(f"bfcl-eval {importlib.metadata.version('bfcl-eval')}\n")
    kinds = ("truth", "truth_reversed", *MUTATIONS)
    print("| category | tasks | " + " | ".join(kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    misjudged: list[str] = []
    for category in AST_CATEGORIES:
        workload = load_bfcl(category)
        cases, correct, wrong = tally(workload.tasks)
        misjudged += wrong
        cells = [f"{correct[k]}/{cases[k]}" if cases[k] else "-" for k in kinds]
        print(f"| {category} | {len(workload.tasks)} | " + " | ".join(cells) + " |")
    greedy = [w for w in misjudged if w.split(":")[0] in GREEDY_ORDER
              and w.endswith(":truth_reversed")]
    other = [w for w in misjudged if w not in greedy]
    print("\ncells: answers scored correct / cases; misjudged:", ", ".join(other) or "none")
    print("reversed orders BFCL's own greedy matching rejects too:", ", ".join(greedy) or "none")
    print(f"BFCL data errata not loaded ({len(BFCL_ERRATA)}):", ", ".join(sorted(BFCL_ERRATA)))


if __name__ == "__main__":
    main()
