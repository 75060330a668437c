"""Where the agent demo's time goes: CPU, wall, and llama.cpp's prompt vs generation time.

    .venv/bin/python benchmarks/bench_demo_agent.py --tasks 6 --threads 1 --cache-mb 0
    .venv/bin/python benchmarks/bench_demo_agent.py --tasks 6 --threads 2 --cache-mb 0

Runs the first TASKS built-in agent tasks under the demo's three conditions and limits
(:mod:`ctxbench.runner.demo_agent`) on the embedded model with the given thread count
and saved-state cache, in a fresh output directory, and prints one JSON line: wall and
process CPU seconds, the requests, and llama.cpp's own counters summed over them
(``llama_perf_context``: prompt tokens evaluated and the time taken, generated tokens and
the time taken) beside the prompt tokens sent. Prints the load average too: the machine
may be shared, and the CPU figure is the one that predicts a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from typing import Any

import llama_cpp

from ctxbench.runner import demo_agent
from ctxbench.runner.agent_run import run_agent_experiment
from ctxbench.runner.providers import llamacpp
from ctxbench.workloads.agent_tasks import agent_tasks, workload_version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache-mb", type=int, default=0)
    parser.add_argument("--n-ctx", type=int, default=2048)
    args = parser.parse_args()
    perf: list[dict[str, float]] = []
    generate = llamacpp.LlamaCppProvider._generate

    def counted(self: Any, request: Any) -> Any:
        ctx = self._llama._ctx.ctx
        llama_cpp.llama_perf_context_reset(ctx)
        result = generate(self, request)
        data = llama_cpp.llama_perf_context(ctx)
        perf.append({"prompt_s": data.t_p_eval_ms / 1000, "prompt_eval": data.n_p_eval,
                     "gen_s": data.t_eval_ms / 1000, "generated": data.n_eval,
                     "sent": result[0]["usage"]["prompt_tokens"]})
        return result

    llamacpp.LlamaCppProvider._generate = counted  # type: ignore[method-assign]
    tasks = agent_tasks()[:args.tasks] if args.tasks else agent_tasks()
    options = {"n_threads": args.threads, "n_ctx": args.n_ctx,
               "prompt_cache_mb": args.cache_mb, "timeout_s": 900.0}
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        run_agent_experiment(out, tasks=tasks, conditions=demo_agent.CONDITIONS,
                             provider="llamacpp", provider_options=options,
                             limits=demo_agent.LIMITS, seed=20261202,
                             workload_version=workload_version())
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "tasks": len(tasks), **options, "wall_s": round(wall, 1),
        "user_s": round(usage.ru_utime, 1), "sys_s": round(usage.ru_stime, 1),
        "max_rss_mb": usage.ru_maxrss // 1024, "requests": len(perf),
        **{k: round(sum(p[k] for p in perf), 1) for k in ("prompt_s", "gen_s")},
        **{k: int(sum(p[k] for p in perf)) for k in ("prompt_eval", "generated", "sent")},
        "load_average": [list(load_before), list(os.getloadavg())]}))


if __name__ == "__main__":
    main()
