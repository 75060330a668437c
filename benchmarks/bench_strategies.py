"""Evidence coverage of every installed strategy on the enterprise seed, per ladder budget.

The same measure as the demo's compiler seed table (ctxbench.compiler.quality): a task is
covered at a budget when the packet holds all of its required artifacts and none of its
denied ones (abstention tasks: no denied artifact). Token counts are local counts with
the declared tokenizer. Run:

    python benchmarks/bench_strategies.py [--tokenizer cl100k_base] [STRATEGY ...]
"""

from __future__ import annotations

import argparse
import time

from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.plugins import StrategyFailure
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import compile_context
from ctxbench.protocols.eceb import seed_paths

DEFAULT = ("compiled", "naive_top_k", "truncate-head", "truncate-tail", "middle-out",
           "chunk-bm25", "entroly")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("strategies", nargs="*", default=list(DEFAULT))
    parser.add_argument("--tokenizer", default="cl100k_base")
    args = parser.parse_args()
    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus, args.tokenizer)
    budgets = sorted({b for t in benchmark.tasks for b in t.budget_ladder})
    print(f"enterprise seed: {len(benchmark.tasks)} tasks; tokenizer {index.tokenizer.id}; "
          "cell = tasks covered (all required artifacts, no denied one) / tasks whose "
          "ladder has the budget; mean packet tokens in brackets\n")
    print("| strategy | " + " | ".join(f"budget {b}" for b in budgets) + " | s/packet |")
    print("|---|" + "---:|" * (len(budgets) + 1))
    for name in args.strategies:
        cells = []
        started, packets = time.perf_counter(), 0
        for budget in budgets:
            covered = tasks = tokens = failed = 0
            for task in benchmark.tasks:
                if budget not in task.budget_ladder:
                    continue
                tasks += 1
                try:
                    packet = compile_context(index, query=task.query, budget=budget,
                                             policy=Policy.from_task(task), strategy=name)
                except StrategyFailure:
                    failed += 1
                    continue
                packets += 1
                got = set(packet.artifact_ids)
                covered += set(task.required_artifacts) <= got and not (
                    set(task.denied_artifacts) & got)
                tokens += packet.token_count
            shown = f"{covered}/{tasks} ({tokens // max(1, tasks - failed)})"
            cells.append(shown + (f", {failed} failed" if failed else ""))
        per = (time.perf_counter() - started) / max(1, packets)
        print(f"| {name} | " + " | ".join(cells) + f" | {per:.2f} |")


if __name__ == "__main__":
    main()
