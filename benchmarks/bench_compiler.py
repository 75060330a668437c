"""Benchmark the context compiler: index build on ~100 MB, compile latency on 10,000 chunks.

Run: .venv/bin/python benchmarks/bench_compiler.py [--mb 100] [--queries 300] [--no-build]
     .venv/bin/python benchmarks/bench_compiler.py --strategies [--sets dev] [--corpora A,B]

It generates a synthetic enterprise-shaped corpus (Markdown runbooks, Python modules,
JSON specs, YAML configs, chat logs) from a fixed seed in a temporary directory, then
prints the figures recorded in benchmarks/RESULTS.md. ``--strategies`` instead prints a
per-strategy latency table (p50 / p99 per packet, every task at every ladder budget, each
policy's caches warmed by one packet first) on the dev corpora of benchmarks/devsets.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.compiler.index_cache import save_index
from ctxbench.core import derive_rng

CLASSES = ("public", "internal", "confidential", "restricted")


def _vocabulary(rng: np.random.Generator, size: int = 6000) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = {"".join(rng.choice(letters, size=int(rng.integers(3, 10)))) for _ in range(size)}
    return sorted(words)


def _file(rng: np.random.Generator, vocab: list[str], kind: int, target: int) -> str:
    def words(n: int) -> str:
        return " ".join(vocab[i] for i in rng.zipf(1.3, size=n) % len(vocab))

    out: list[str] = []
    size = 0
    n = 0
    while size < target:
        if kind == 0:
            block = f"## {words(4)}\n\n{words(60)}\n{words(50)}\n\n"
        elif kind == 1:
            a, b = vocab[int(rng.integers(len(vocab)))], vocab[int(rng.integers(len(vocab)))]
            block = (f"def {a}_{b}_{n}(value):\n    \"\"\"{words(20)}\"\"\"\n"
                     f"    {a}Count = {n}  # {words(12)}\n    return value\n\n\n")
        elif kind == 2:
            block = json.dumps({f"{vocab[int(rng.integers(len(vocab)))]}_{n}": words(30)}) + "\n"
        elif kind == 3:
            block = f"{vocab[int(rng.integers(len(vocab)))]}_{n}:\n  note: {words(25)}\n"
        else:
            block = f"2026-03-04T09:{n % 60:02d}:00Z [user{n % 7}] {words(18)}\n"
        out.append(block)
        size += len(block)
        n += 1
    text = "".join(out)
    return ("{\n" + text.replace("\n", ",\n").rstrip(",\n") + "\n}\n") if kind == 2 else text


_SUFFIX = ("md", "py", "jsonl", "yaml", "log")


def generate(
    root: Path, total_bytes: int, file_bytes: int, seed: int = 7
) -> tuple[Corpus, list[str]]:
    """Write the corpus (deterministic for a seed); return it and its vocabulary."""
    rng = derive_rng(seed, "bench-compiler-corpus")
    vocab = _vocabulary(rng)
    written = 0
    n = 0
    while written < total_bytes:
        kind = n % 5
        rel = f"{_SUFFIX[kind]}/{n // 1000:03d}/f{n:06d}.{_SUFFIX[kind]}"
        text = _file(rng, vocab, kind, file_bytes)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
        n += 1
    directory = Corpus.from_directory(root)
    labelled = tuple(
        replace(a, classification=CLASSES[i % 4]) for i, a in enumerate(directory.artifacts)
    )
    return Corpus(root, labelled, "bench"), vocab


def bench_build(mb: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        corpus, _ = generate(Path(tmp), mb << 20, 64 << 10)
        t1 = time.perf_counter()
        index = ContextIndex.build(corpus, get_tokenizer())
        t2 = time.perf_counter()
        index.view(Policy(CLASSES))
        t3 = time.perf_counter()
        stats = index.stats()
        print(f"index build: corpus {stats.source_bytes / 1e6:.1f} MB, {stats.artifacts} files, "
              f"{stats.chunks} chunks, {stats.terms} terms, vocabulary {stats.vocabulary}")
        print(f"  generate corpus (not counted): {t1 - t0:.1f} s")
        print(f"  ContextIndex.build (read, hash, chunk, terms): {t2 - t1:.1f} s")
        print(f"  first BM25 view, all classifications: {t3 - t2:.1f} s")
        print(f"  total to first query: {t3 - t1:.1f} s (target < 30 s)")


def bench_compile(queries: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CTXBENCH_CACHE_DIR"] = str(Path(tmp) / "cache")
        corpus, vocab = generate(Path(tmp) / "corpus", 5200 << 10, 9 << 10)
        t0 = time.perf_counter()
        built = ContextIndex.build(corpus, get_tokenizer())
        t1 = time.perf_counter()
        save_index(built)
        t2 = time.perf_counter()
        loaded = ContextIndex.load_cached(corpus, get_tokenizer())
        t3 = time.perf_counter()
        assert loaded is not None and loaded.chunks == built.chunks
        index = loaded
        print(f"compile: {index.stats().chunks} chunks, {len(corpus.artifacts)} files")
        print(f"  index build {(t1 - t0) * 1000:.0f} ms, cache write {(t2 - t1) * 1000:.0f} ms, "
              f"cache load (a second call's index start) {(t3 - t2) * 1000:.0f} ms")
        policies = [Policy(("public", "internal")), Policy(("public", "internal", "confidential"),
                                                           tuple(a.artifact_id for a in
                                                                 corpus.artifacts[:50]))]
        for policy in policies:
            t0 = time.perf_counter()
            index.view(policy)
            print(f"  BM25 view build per policy (once, cached): "
                  f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        rng = derive_rng(11, "bench-compiler-queries")
        texts = [" ".join(vocab[i] for i in rng.integers(0, len(vocab), size=15))
                 for _ in range(queries)]
        for strategy, budget in (("compiled", 256), ("compiled", 1024), ("compiled", 2048),
                                 ("naive_top_k", 1024)):
            times = []
            cpu = []
            for n, query in enumerate(texts):
                t0, c0 = time.perf_counter(), time.process_time()
                compile_context(index, query=query, budget=budget, policy=policies[n % 2],
                                strategy=strategy)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
            p50, p99 = np.percentile(times, [50, 99])
            c50, c99 = np.percentile(cpu, [50, 99])
            print(f"  {strategy}@{budget}: {queries} 15-word queries, p50 {p50:.1f} ms, "
                  f"p99 {p99:.1f} ms wall; CPU time p50 {c50:.1f} ms, p99 {c99:.1f} ms "
                  f"(first query, cold caches: {times[0]:.1f} ms)")


LATENCY_STRATEGIES = ("compiled", "naive_top_k", "truncate-head", "truncate-tail",
                      "middle-out", "chunk-bm25")


def bench_strategies(sets: set[str], corpora: set[str] | None) -> None:
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "devsets"))
    devset = importlib.import_module("devset")
    specs, build = devset.SPECS, devset.build

    from ctxbench.compiler.api import benchmark_index

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("CTXBENCH_CACHE_DIR", str(Path(tmp) / "cache"))
        names = sorted(json.loads(p.read_text(encoding="utf-8"))["corpus"]
                       for p in specs.glob("*.json")
                       if json.loads(p.read_text(encoding="utf-8"))["set"] in sets)
        names = [n for n in names if corpora is None or n in corpora]
        build(Path(tmp), names)
        times: dict[str, list[float]] = {s: [] for s in LATENCY_STRATEGIES}
        for name in names:
            root = Path(tmp) / name
            benchmark, index = benchmark_index(root / "benchmark.json", root / "corpus")
            for strategy in LATENCY_STRATEGIES:
                warmed: set[str] = set()
                for task in benchmark.tasks:
                    policy = Policy.from_task(task)
                    if policy.digest() not in warmed:  # the index cached, as a second call
                        warmed.add(policy.digest())
                        compile_context(index, query=task.query, budget=256, policy=policy,
                                        strategy=strategy)
                    for budget in task.budget_ladder:
                        t0 = time.perf_counter()
                        compile_context(index, query=task.query, budget=budget,
                                        policy=policy, strategy=strategy)
                        times[strategy].append((time.perf_counter() - t0) * 1000)
        print(f"per-strategy latency, {', '.join(names)} ({os.cpu_count()} CPUs):")
        print("| strategy | packets | p50 ms | p99 ms |")
        print("|---|---:|---:|---:|")
        for strategy, got in times.items():
            p50, p99 = np.percentile(got, [50, 99])
            print(f"| {strategy} | {len(got)} | {p50:.1f} | {p99:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-build", action="store_true", help="skip the ~100 MB build")
    parser.add_argument("--strategies", action="store_true",
                        help="the per-strategy latency table on the dev corpora")
    parser.add_argument("--sets", default="dev")
    parser.add_argument("--corpora", help="only these corpora (comma-separated)")
    args = parser.parse_args()
    if args.strategies:
        bench_strategies(set(args.sets.split(",")),
                         set(args.corpora.split(",")) if args.corpora else None)
        return
    bench_compile(args.queries)
    if not args.no_build:
        bench_build(args.mb)


if __name__ == "__main__":
    main()
