"""An ECEB run of the enterprise seed with every shipped strategy, on the fixture reader.

Writes the experiment to OUT/seed-strategies.toml, runs it (``ctxbench run``'s library
function), then prints, per strategy and budget, the mean answer score (answer_terms of
the deterministic extractive reader's answer) and the mean evidence recall (share of
required artifacts in the packet), and the run's verdict lines. Run:

    python benchmarks/bench_strategies_run.py OUT
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

from ctxbench.core import iter_jsonl
from ctxbench.runner.experiment import run_experiment

SPEC = """name = "seed-strategies"
seed = 20261201
replicates = 1
output = "run"

[workload]
source = "builtin:enterprise-seed"

[model]
provider = "fixture"

[[conditions]]
strategy = "full_permitted_context"
""" + "".join(f'\n[[conditions]]\nstrategy = "{name}"\nbudgets = "ladder"\n' for name in (
    "compiled", "naive_top_k", "entroly", "truncate-head", "truncate-tail", "middle-out",
    "chunk-bm25"))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "seed-strategies.toml"
    spec.write_text(SPEC, encoding="utf-8")
    started = time.perf_counter()
    summary = run_experiment(spec, resume=(out / "run" / "trials.jsonl").exists())
    wall = time.perf_counter() - started
    cells: dict[tuple[str, int | None], list[tuple[float, float, int, bool]]] = \
        defaultdict(list)
    for item in iter_jsonl(summary.output / "trials.jsonl"):
        r = item.value
        cells[(r["strategy"], r["budget"])].append(
            (r["task_score"], r["evidence_recall"], r["context_tokens"],
             r["outcome"] == "error"))
    budgets = sorted({b for _, b in cells if b is not None})
    names = list(dict.fromkeys(s for s, _ in cells))
    print(f"{summary.completed} trials in {wall:.0f} s; cell = mean answer score / mean "
          "evidence recall (mean context tokens, provider-reported word count)\n")
    print("| strategy | " + " | ".join(f"budget {b}" for b in budgets) + " |")
    print("|---|" + "---:|" * len(budgets))
    for name in names:
        row = []
        for budget in budgets if name != "full_permitted_context" else [None]:
            got = cells[(name, budget)]
            failed = sum(g[3] for g in got)
            text = (f"{sum(g[0] for g in got) / len(got):.2f} / "
                    f"{sum(g[1] for g in got) / len(got):.2f} "
                    f"({sum(g[2] for g in got) // len(got)})")
            row.append(text + (f", {failed} failed" if failed else ""))
        if name == "full_permitted_context":
            row = [f"{row[0]} (unbudgeted)"] + [""] * (len(budgets) - 1)
        print(f"| {name} | " + " | ".join(row) + " |")
    print()
    for line in summary.verdicts:
        print(line)


if __name__ == "__main__":
    main()
