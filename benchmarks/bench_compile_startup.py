"""Start-up of a second ``ctxbench compile`` on an unchanged corpus (fresh processes).

For each corpus: one ``ctxbench compile`` fills a private index cache, then ``--runs``
fresh processes run the same command; each one's wall time (and the children's CPU
time) is measured around the process, and each must print the same commit. One more run
under ``python -X importtime`` gives the import breakdown, and one in-process run the
time of each phase after the imports.

    .venv/bin/python benchmarks/bench_compile_startup.py --runs 10
    .venv/bin/python benchmarks/bench_compile_startup.py --dev-dir /tmp/dev --corpora seed,dev-cli

Corpora: ``seed`` (the embedded enterprise seed, task late-fee-rule) and any development
corpus of ``benchmarks/devsets`` (built into ``--dev-dir`` when missing; its first task).
Every run uses ``--budget 256``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEED = REPO / "src/ctxbench/data/enterprise-seed"
CTXBENCH = Path(sys.executable).with_name("ctxbench")
PHASES = """
import time
t0 = time.perf_counter()
from ctxbench.compiler.api import _index, compile_benchmark_task
t1 = time.perf_counter()
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.protocols.eceb import load_benchmark
from ctxbench.compiler.corpus import Corpus
from ctxbench.compiler.index import ContextIndex
benchmark = load_benchmark({bench!r})
t2 = time.perf_counter()
corpus = Corpus.from_benchmark(benchmark, {corpus!r})
index = ContextIndex.load_or_build(corpus, get_tokenizer("cl100k_base"))
t3 = time.perf_counter()
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import compile_context
task = benchmark.task({task!r})
packet = compile_context(index, query=task.query, budget=256, policy=Policy.from_task(task),
                         strategy="compiled")
t4 = time.perf_counter()
print(f"{{(t1 - t0) * 1e3:.0f}} {{(t2 - t1) * 1e3:.0f}} {{(t3 - t2) * 1e3:.0f}} "
      f"{{(t4 - t3) * 1e3:.0f}}")
"""
_IMPORTS = ("click", "numpy", "ctxbench.cli.main", "ctxbench.cli.compile",
            "ctxbench.compiler.api", "ctxbench.compiler.bpe", "ctxbench.protocols.eceb")


def _corpus(name: str, dev_dir: Path) -> tuple[Path, Path, str]:
    if name == "seed":
        return SEED / "benchmark.json", SEED / "corpus", "late-fee-rule"
    root = dev_dir / name
    if not (root / "benchmark.json").is_file():
        subprocess.run([sys.executable, str(HERE / "devsets/devset.py"), "build", str(dev_dir)],
                       check=True, stdout=subprocess.DEVNULL)
    bench = json.loads((root / "benchmark.json").read_text(encoding="utf-8"))
    return root / "benchmark.json", root / "corpus", bench["tasks"][0]["task_id"]


def _command(bench: Path, corpus: Path, task: str) -> list[str]:
    return [str(CTXBENCH), "compile", "--benchmark", str(bench), "--corpus", str(corpus),
            "--task", task, "--budget", "256"]


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip()


def _imports(command: list[str], env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "ctxbench", *command[1:]],
                          env=env, capture_output=True, text=True, check=True)
    found: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        name = name.strip()
        if name in _IMPORTS and name not in found:
            found[name] = int(cumulative) / 1000
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--corpora", default="seed,dev-cli")
    parser.add_argument("--dev-dir", type=Path, default=Path(tempfile.gettempdir()) / "ctxdev")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on "
          f"{os.cpu_count()} CPUs; {args.runs} fresh processes per corpus")
    # What no ctxbench change can remove: the interpreter, numpy and click.
    for label, code in (("python -c pass", "pass"),
                        ("python -c 'import numpy, click'", "import numpy, click")):
        walls, cpus = [], []
        for _ in range(args.runs):
            wall, cpu, _ = _timed([sys.executable, "-c", code], dict(os.environ))
            walls.append(wall)
            cpus.append(cpu)
        print(f"floor {label}: wall median {statistics.median(walls) * 1e3:.0f} ms, "
              f"min {min(walls) * 1e3:.0f} ms; CPU median {statistics.median(cpus) * 1e3:.0f} ms")
    for name in args.corpora.split(","):
        bench, corpus, task = _corpus(name, args.dev_dir)
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "CTXBENCH_CACHE_DIR": cache}
            command = _command(bench, corpus, task)
            first_wall, _, first = _timed(command, env)
            walls, cpus = [], []
            for _ in range(args.runs):
                wall, cpu, out = _timed(command, env)
                if out != first:
                    raise SystemExit(f"{name}: a second run printed another packet:\n{out}")
                walls.append(wall)
                cpus.append(cpu)
            imports = _imports(command, env)
            phases = subprocess.run(
                [sys.executable, "-c", PHASES.format(bench=str(bench), corpus=str(corpus),
                                                      task=task)],
                env=env, capture_output=True, text=True, check=True).stdout.split()
        commit = first.rsplit("commit ", 1)[-1]
        print(f"\n{name} (task {task}, commit {commit})")
        print(f"  first run (index built and cached): {first_wall * 1e3:.0f} ms")
        print(f"  second runs: wall median {statistics.median(walls) * 1e3:.0f} ms, "
              f"min {min(walls) * 1e3:.0f} ms, max {max(walls) * 1e3:.0f} ms; "
              f"CPU median {statistics.median(cpus) * 1e3:.0f} ms")
        print("  imports (cumulative, -X importtime): " + ", ".join(
            f"{k} {v:.0f} ms" for k, v in imports.items()))
        print(f"  in process: imports {phases[0]} ms, benchmark {phases[1]} ms, "
              f"corpus + cached index {phases[2]} ms, compile {phases[3]} ms")


if __name__ == "__main__":
    main()
