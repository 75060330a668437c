"""Runner overhead per trial at concurrency 32 against an instant loopback server.

    .venv/bin/python benchmarks/bench_runner.py [--trials-per-task 50] [--demo DIR]

The OpenAI-compatible loopback server (ctxbench.testing.loopback) runs in a separate
process and answers at once, so the wall time per trial is an upper bound on the runner's
own overhead (it also holds HTTP and the server's work); the runner process's CPU time
per trial is its own cost. With --demo DIR it also times `ctxbench demo --output DIR`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def serve(port_queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from ctxbench.testing.loopback import LoopbackServer

    server = LoopbackServer().start()
    port_queue.put(server.port)
    while True:
        time.sleep(3600)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_overhead(tasks: int, replicates: int) -> dict[str, float]:
    from ctxbench.core import iter_jsonl
    from ctxbench.runner.experiment import run_experiment

    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=serve, args=(queue,), daemon=True)
    server.start()
    port = queue.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            rows = [{"_id": f"t{i}", "input": f"What is item {i}?",
                     "context": f"Item {i} is the number {i * 7}. " * 20, "answers": [str(i * 7)]}
                    for i in range(tasks)]
            (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                           encoding="utf-8")
            (root / "exp.toml").write_text(
                f'name = "bench"\nseed = 1\nreplicates = {replicates}\noutput = "out"\n'
                'pricing = "self_hosted"\n[workload]\nsource = "qa.jsonl"\n'
                f'[model]\nprovider = "openai"\nmodel = "loop"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nmax_output_tokens = 8\n'
                '[[conditions]]\nstrategy = "full_permitted_context"\n'
                '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = [200]\n'
                '[limits]\nconcurrency = 32\nretries = 0\n', encoding="utf-8")
            cpu0, wall0 = cpu_seconds(), time.perf_counter()
            summary = run_experiment(root / "exp.toml")
            total_wall, total_cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
            wall, cpu = summary.trial_phase_s, summary.trial_phase_cpu_s
            trials = [i.value for i in iter_jsonl(root / "out" / "trials.jsonl")]
            # compile time is shared by replicates of one (task, condition); count each once
            unique_compile_ms = sum({(t["task_id"], t["condition"]): float(t["compile_ms"])
                                     for t in trials}.values())
            assert all(t["outcome"] == "success" for t in trials)
            n = summary.completed
            return {"trials": n, "wall_s": wall, "total_wall_s": total_wall,
                    "total_cpu_s": total_cpu, "wall_ms_per_trial": wall * 1000 / n,
                    "runner_cpu_ms_per_trial": cpu * 1000 / n,
                    "compile_ms_total": unique_compile_ms}
    finally:
        server.terminate()


def bench_demo(output: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ctxbench", "demo", "--output", output], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--trials-per-task", type=int, default=50,
                        help="replicates (each task runs 2 conditions x this many)")
    parser.add_argument("--demo", default=None, help="also time `ctxbench demo` into DIR")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    result = bench_overhead(args.tasks, args.trials_per_task)
    print(f"runner at concurrency 32, {result['trials']:.0f} trials against an instant "
          f"loopback server: wall {result['wall_s']:.2f} s = "
          f"{result['wall_ms_per_trial']:.3f} ms/trial (upper bound, includes HTTP and the "
          f"server); runner process CPU {result['runner_cpu_ms_per_trial']:.3f} ms/trial "
          f"(includes {result['compile_ms_total']:.0f} ms of context compilation in total); "
          f"whole run with setup and the CEF report: {result['total_wall_s']:.1f} s wall, "
          f"{result['total_cpu_s']:.1f} s CPU")
    if args.demo:
        print(f"ctxbench demo wall time: {bench_demo(args.demo):.0f} s")


if __name__ == "__main__":
    main()
