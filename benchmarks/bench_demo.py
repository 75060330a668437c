"""The demo on the embedded model: its work in tokens, the model's speed here, the time.

    .venv/bin/python benchmarks/bench_demo.py [--run DIR]

1. Counts the demo's work without the model: for every (task, condition) of the demo
   handbook, the prompt tokens the model must process once (the first replicate; the
   others repeat the same prompt, whose state llama.cpp keeps), and the trials.
2. Measures the embedded model's prompt tokens/s (a 1-token answer to a demo prompt) and
   generation tokens/s (24 tokens after a prompt already processed), with the load
   average before and after: on a shared machine both depend on the load.
3. Prints the demo's estimated wall time from those; with --run DIR it also times
   `ctxbench demo --output DIR` itself and prints its baseline line and verdicts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ctxbench.runner.contexts import ContextBuilder
from ctxbench.runner.demo import demo_spec_text
from ctxbench.runner.prompt import build_messages
from ctxbench.runner.scheduler import plan_trials
from ctxbench.runner.spec import parse_spec
from ctxbench.runner.workload import load_workload

OUTPUT_TOKENS = 24  # the demo's max_output_tokens: an upper bound per trial


def demo_work() -> tuple[int, int, list[str]]:
    """(cold prompt tokens, trials, one prompt's text) of the full demo (3 replicates)."""
    import tomllib

    text = demo_spec_text("llamacpp", 3, OUTPUT_TOKENS, 2)
    spec = parse_spec(tomllib.loads(text), path=Path("demo.toml").resolve())
    workload = load_workload(spec.workload)
    builder = ContextBuilder(workload, "smollm2")
    plan = plan_trials(spec, workload)
    cold = 0
    seen: set[tuple[str, str]] = set()
    sample = ""
    for trial in plan:
        key = (trial.task.task_id, trial.condition)
        if key in seen:
            continue
        seen.add(key)
        context = builder.build(trial.task, trial.spec, trial.budget)
        cold += context.token_count + builder.overhead(trial.task)
        if trial.condition == "full_permitted_context" and not sample:
            sample = context.text + "\0" + trial.task.query
    return cold, len(plan), [sample]


def model_speed(sample: str) -> tuple[float, float]:
    """(prompt tokens/s, generation tokens/s) of the embedded model, 2 threads."""
    import llama_cpp

    from ctxbench.runner.providers.llamacpp import embedded_model_path

    threads = max(1, min(os.cpu_count() or 1, 16))
    llm = llama_cpp.Llama(model_path=str(embedded_model_path()), n_ctx=4096,
                          n_threads=threads, n_threads_batch=threads, verbose=False, seed=0)
    context, question = sample.split("\0")
    messages = [{"role": m.role, "content": m.content}
                for m in build_messages(context, question)]
    started = time.perf_counter()
    first = llm.create_chat_completion(messages=messages, max_tokens=1,  # type: ignore[arg-type]
                                       temperature=0.0)
    prompt_s = time.perf_counter() - started
    prompt_tokens = first["usage"]["prompt_tokens"]  # type: ignore[index]
    started = time.perf_counter()
    again = llm.create_chat_completion(messages=messages, max_tokens=OUTPUT_TOKENS,  # type: ignore[arg-type]
                                       temperature=0.0, stop=[])
    gen_s = time.perf_counter() - started
    generated = again["usage"]["completion_tokens"]  # type: ignore[index]
    llm.close()
    return prompt_tokens / prompt_s, generated / gen_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default=None, help="also time `ctxbench demo` into DIR")
    args = parser.parse_args()
    cold, trials, sample = demo_work()
    load_before = os.getloadavg()[0]
    prompt_tps, gen_tps = model_speed(sample[0])
    load_after = os.getloadavg()[0]
    print(f"demo work: {trials} trials, {cold} cold prompt tokens "
          f"(first replicate of each task x condition), at most {trials * OUTPUT_TOKENS} "
          "output tokens")
    print(f"embedded model here: {prompt_tps:.0f} prompt tokens/s, {gen_tps:.1f} generated "
          f"tokens/s (load average {load_before:.1f} before, {load_after:.1f} after, "
          f"{os.cpu_count()} cores)")
    estimate = cold / prompt_tps + trials * OUTPUT_TOKENS / gen_tps
    print(f"estimated demo wall time at this speed: {estimate:.0f} s (upper bound on output: "
          f"every answer {OUTPUT_TOKENS} tokens; plus ~10 s of model load and reports)")
    if args.run:
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "ctxbench", "demo", "--output",
                                 args.run], check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        tail = result.stdout[result.stdout.index("demo finished in"):]
        print(tail.rstrip())
        print(f"ctxbench demo wall time: {wall:.0f} s (load average now "
              f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
