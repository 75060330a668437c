"""Benchmark the CEF analyzer: parse + validate + analyze N trials, time and peak memory.

    .venv/bin/python benchmarks/bench_cef.py                 # 100,000 and 1,000,000 trials
    .venv/bin/python benchmarks/bench_cef.py --tasks 25000   # one size

Each size is a file of TASKS tasks x 4 conditions (raw, native_compaction, entroly,
combined) x 1 replicate, written first (not timed). The timed part runs in a fresh
child process: read and validate every record, pair, and bootstrap 2,000 resamples per
condition, as ``ctxbench cef analyze`` does. Peak memory is the child's maximum resident
set size from ``resource.getrusage``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxbench.testing.cef_trials import ConditionEffect, generate_records

TARGETS = {25_000: 10.0, 250_000: 90.0}
MEMORY_TARGET_MB = 2048.0


def write_trials(path: Path, tasks: int) -> int:
    conditions = {
        "native_compaction": ConditionEffect(context_ratio=0.8),
        "entroly": ConditionEffect(context_ratio=0.5, commit=True),
        "combined": ConditionEffect(context_ratio=0.4, failure_rate=0.02, commit=True),
    }
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        batch = []
        for record in generate_records(conditions=conditions, tasks=tasks, seed=1):
            batch.append(json.dumps(record))
            count += 1
            if len(batch) >= 10_000:
                handle.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            handle.write("\n".join(batch) + "\n")
    return count


def child(path: str, samples: int) -> None:
    """The timed part (runs in its own process)."""
    from ctxbench.protocols.cef.api import analyze_files

    start = time.perf_counter()
    cpu = time.process_time()
    report = analyze_files([path], overrides={"bootstrap_samples": samples})
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mb": peak_mb,
                      "trials": report.inputs.trials_analyzed}))


def run_size(tasks: int, samples: int, workdir: Path) -> dict[str, float]:
    path = workdir / f"trials-{tasks}.jsonl"
    t0 = time.perf_counter()
    trials = write_trials(path, tasks)
    gen = time.perf_counter() - t0
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--samples", str(samples)],
        check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(tasks=tasks, file_mb=path.stat().st_size / 1e6, generate_seconds=gen)
    assert result["trials"] == trials
    path.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, action="append",
                        help="tasks per run (4 trials each); default 25000 and 250000")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.samples)
        return
    sizes = args.tasks or sorted(TARGETS)
    with tempfile.TemporaryDirectory(prefix="bench-cef-") as tmp:
        for tasks in sizes:
            r = run_size(tasks, args.samples, Path(tmp))
            target = TARGETS.get(tasks)
            verdict = ""
            if target is not None:
                ok = r["seconds"] < target and r["peak_rss_mb"] < MEMORY_TARGET_MB
                verdict = f"  target < {target:.0f} s, < 2 GB: {'met' if ok else 'MISSED'}"
            print(f"{int(r['trials']):>9,} trials ({tasks:,} tasks x 4, {args.samples} "
                  f"resamples, {r['file_mb']:.0f} MB file): parse+analyze "
                  f"{r['seconds']:.2f} s (CPU {r['cpu_seconds']:.2f} s), "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB{verdict}",
                  flush=True)


if __name__ == "__main__":
    main()
