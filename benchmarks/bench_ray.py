"""Ray backend: throughput scaling from 1 to 4 workers, and the per-trial overhead.

A fixture provider with a fixed latency stands in for a model that serves one request at
a time (each request holds its worker's process for ``--latency-ms``). The same QA
workload runs

* on the local asyncio backend (one process: its throughput is 1 / latency), and
* on a local Ray cluster with 1, 2 and 4 provider workers,

and the trial phase of each run is timed (worker start-up excluded: it is paid once per
run, not per trial). Scaling efficiency at k workers = throughput(k) / (k x throughput(1)).
The per-trial overhead of the Ray backend is the wall time per trial at 1 worker minus
the provider's own latency, and is also measured directly with zero latency against the
local backend. Then the cluster-wide limiter's journal call (one per attempt) is timed
on its own.

    python benchmarks/bench_ray.py            # about 2 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import ray

from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.ray_backend import WorkerConfig, _Coordinator


def _workload(folder: Path, tasks: int) -> None:
    rows = [{"_id": f"q{i}", "input": f"Which port does service {i} use?",
             "context": f"Service {i} listens on port {8000 + i}. Metrics use port 9100.",
             "answers": [str(8000 + i)]} for i in range(tasks)]
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


def _spec(folder: Path, name: str, *, tasks: int, execution: str, concurrency: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _workload(folder, tasks)
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "bench-{name}"\nseed = 1\nreplicates = 2\noutput = "out-{name}"\n\n'
        '[workload]\nsource = "qa.jsonl"\n\n[model]\nprovider = "fixture"\n'
        "max_output_tokens = 16\n\n"
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [200]\n\n'
        f"[limits]\nconcurrency = {concurrency}\n\n{execution}\n", encoding="utf-8")
    return path


def _run(folder: Path, name: str, *, tasks: int, latency_ms: float, workers: int | None,
         address: str, concurrency: int | None = None) -> dict[str, Any]:
    execution = ("" if workers is None else
                 f'[execution]\nbackend = "ray"\naddress = "{address}"\nworkers = {workers}\n'
                 "num_cpus = 0\n")
    if concurrency is None:  # enough in flight to keep every worker busy
        concurrency = 1 if workers is None else 2 * workers
    spec = _spec(folder, name, tasks=tasks, execution=execution, concurrency=concurrency)
    summary = run_experiment(spec, provider_options={"latency_ms": latency_ms})
    assert summary.completed == summary.planned == tasks * 4, summary
    trials = summary.completed
    return {"name": name, "workers": workers, "latency_ms": latency_ms, "trials": trials,
            "trial_phase_s": summary.trial_phase_s,
            "driver_cpu_ms_per_trial": summary.trial_phase_cpu_s * 1000 / trials,
            "trials_per_s": trials / summary.trial_phase_s,
            "ms_per_trial": summary.trial_phase_s * 1000 / trials}


def _limiter_calls(calls: int) -> float:
    """Mean milliseconds of one journal call through the cluster-wide limiter actor."""
    from ctxbench.runner.spec import load_spec

    with tempfile.TemporaryDirectory() as tmp:
        spec = load_spec(_spec(Path(tmp), "lim", tasks=1, execution="", concurrency=1))
    # The coordinator reads only the spec's limits; the rest of the config is not used.
    config = WorkerConfig(spec=spec, workload=None, tokenizer="",  # type: ignore[arg-type]
                          ident=None, cost=None,  # type: ignore[arg-type]
                          pricing=None, provider_options={})
    actor = ray.remote(_Coordinator).options(num_cpus=0).remote(config)

    async def drive() -> float:
        await actor.acquire.remote(("t", "c", 0), 0)
        started = time.perf_counter()
        for i in range(calls):
            await actor.acquire.remote(("t", "c", i), 0)
        return (time.perf_counter() - started) * 1000 / calls

    result = asyncio.run(drive())
    ray.kill(actor)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50, help="tasks (4 trials each)")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    address = str(ray.get_runtime_context().gcs_address)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(_run(folder, "local", tasks=args.tasks, latency_ms=args.latency_ms,
                         workers=None, address=address))
        for workers in (1, 2, 4):
            rows.append(_run(folder, f"ray{workers}", tasks=args.tasks,
                             latency_ms=args.latency_ms, workers=workers, address=address))
        zero_local = _run(folder, "local0", tasks=args.tasks, latency_ms=0.0, workers=None,
                          address=address)
        zero_ray = _run(folder, "ray0", tasks=args.tasks, latency_ms=0.0, workers=1,
                        address=address, concurrency=1)
    journal_ms = statistics.median(_limiter_calls(500) for _ in range(3))
    ray.shutdown()
    one = next(r for r in rows if r["workers"] == 1)["trials_per_s"]
    print(f"fixed provider latency {args.latency_ms:g} ms, {rows[0]['trials']} trials per run"
          f", machine: {os.cpu_count()} cores\n")
    print("| backend | workers | trials/s | ms/trial | driver CPU ms/trial | scaling vs 1 worker |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        workers = r["workers"] or 1
        scaling = "" if r["workers"] is None else f"{r['trials_per_s'] / (workers * one):.2f}"
        print(f"| {'local' if r['workers'] is None else 'ray'} | {r['workers'] or '-'} | "
              f"{r['trials_per_s']:.1f} | {r['ms_per_trial']:.2f} | "
              f"{r['driver_cpu_ms_per_trial']:.2f} | {scaling} |")
    overhead = one and (1000 / one - args.latency_ms)
    print(f"\nRay per-trial overhead at 1 worker (ms/trial minus the provider latency): "
          f"{overhead:.2f} ms")
    print(f"zero latency, one request at a time: local {zero_local['ms_per_trial']:.2f} ms/trial,"
          f" Ray 1 worker {zero_ray['ms_per_trial']:.2f} ms/trial (difference: "
          f"{zero_ray['ms_per_trial'] - zero_local['ms_per_trial']:.2f} ms); driver CPU "
          f"{zero_local['driver_cpu_ms_per_trial']:.2f} vs "
          f"{zero_ray['driver_cpu_ms_per_trial']:.2f} ms/trial")
    print(f"cluster-wide limiter journal call: {journal_ms:.3f} ms (median of 3 x 500 calls)")


if __name__ == "__main__":
    main()
