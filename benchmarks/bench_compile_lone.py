"""CPU time of `compiled` packets on the devset corpora: each task alone at 2048 tokens, and
each task's budget ladder in order, with the index cached in the process.

Run: .venv/bin/python benchmarks/bench_compile_lone.py [--sets dev-nl,held-out-nl]
[--corpora dev-cli] [--budget 2048]

"Alone" is a packet with no smaller step of its ladder built before it (the step cache is
cleared), so a 2048-token packet builds every step below it, as a single `ctxbench
compile` does; the ladder is 128-2048 in order, as `compile evaluate` builds it. One
warm-up packet per policy first (a query unrelated to the tasks), so the policy's view is
built outside the timings. The corpora are built from the pinned installed packages
(benchmarks/devsets, SHA-256 checked) into a temporary folder. Prints p50 / p99 per
group, in milliseconds of ``time.process_time``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "devsets"))

from devset import CORPORA, build


def _measure(root: Path, names: list[str], budget: int) -> tuple[list[float], list[float]]:
    from ctxbench.compiler import Policy, compile_context
    from ctxbench.compiler.api import benchmark_index
    from ctxbench.compiler.selection import clear_steps

    lone: list[float] = []
    ladder: list[float] = []
    for name in names:
        benchmark, index = benchmark_index(root / name / "benchmark.json", root / name / "corpus")
        warmed: set[str] = set()
        for task in benchmark.tasks:
            policy = Policy.from_task(task)
            if policy.digest() not in warmed:
                warmed.add(policy.digest())
                compile_context(index, query="warm up the policy caches", budget=256,
                                policy=policy, strategy="compiled")
        for task in benchmark.tasks:
            policy = Policy.from_task(task)
            clear_steps()
            start = time.process_time()
            compile_context(index, query=task.query, budget=budget, policy=policy,
                            strategy="compiled")
            lone.append((time.process_time() - start) * 1000)
            clear_steps()
            for step in task.budget_ladder:
                start = time.process_time()
                compile_context(index, query=task.query, budget=step, policy=policy,
                                strategy="compiled")
                ladder.append((time.process_time() - start) * 1000)
    return lone, ladder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="dev-nl,held-out-nl")
    parser.add_argument("--corpora", help="also these corpora (comma-separated), as a group")
    parser.add_argument("--budget", type=int, default=2048)
    args = parser.parse_args()
    sets = set(args.sets.split(","))
    natural = [name for name, (which, _) in CORPORA.items() if which in sets]
    extra = args.corpora.split(",") if args.corpora else []
    unknown = [n for n in extra if n not in CORPORA]
    if unknown:
        parser.error(f"--corpora: expected names of benchmarks/devsets, got {unknown}")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("CTXBENCH_CACHE_DIR", str(Path(tmp) / "cache"))
        root = Path(tmp) / "corpora"
        build(root, natural + extra)
        for label, names in ((args.sets, natural), (args.corpora or "", extra)):
            if not names:
                continue
            lone, ladder = _measure(root, names, args.budget)
            print(f"{label}: lone {args.budget} CPU p50 {np.percentile(lone, 50):.1f} "
                  f"p99 {np.percentile(lone, 99):.1f} ms ({len(lone)} packets) | ladder "
                  f"p50 {np.percentile(ladder, 50):.1f} p99 {np.percentile(ladder, 99):.1f} "
                  f"ms ({len(ladder)} packets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
