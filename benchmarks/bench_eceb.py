"""ECEB performance figures: corpus root, streamed re-hashing, and evaluation at scale.

Run: .venv/bin/python benchmarks/bench_eceb.py [--skip-rehash]

1. root of a 100,000-artifact registry (target: under 5 s), plus full validation of the
   same registry as a benchmark document;
2. re-hashing a 1 GiB corpus of 10,000 files with ``verify_corpus`` against hashing one
   1 GiB file with the same library (``blake3_file``); target: at least 70% of the
   single-file throughput. Files are created under /tmp and deleted afterwards;
3. evaluating 10,000 tasks x 5 budgets x 3 repetitions (target: under 10 s), writing
   and reading back that report through its typed model (``Report.to_json`` /
   ``Report.from_json``), plus loading that run from JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ctxbench.core import blake3_file, blake3_hex
from ctxbench.core.node import Node
from ctxbench.protocols.eceb import (
    BENCHMARK_SCHEMA,
    SPEC_URN,
    Artifact,
    Benchmark,
    CorpusCheck,
    Observation,
    Run,
    Selected,
    Task,
    corpus_root,
    evaluate,
    load_run,
    parse_benchmark,
    verify_corpus,
)
from ctxbench.protocols.eceb.model import Report
from ctxbench.protocols.eceb.records import Scalars

GIB = 1 << 30


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_root() -> None:
    artifacts = [Artifact(f"doc-{i:06d}", f"docs/{i % 100:02d}/doc-{i:06d}.md", "runbook",
                          "internal", blake3_hex(str(i).encode())) for i in range(100_000)]
    seconds = _best(lambda: corpus_root(artifacts))
    print(f"root of 100,000 artifacts: {seconds:.3f} s (target < 5 s)")
    doc = {"schema": BENCHMARK_SCHEMA, "spec": SPEC_URN,
           "benchmark_id": "bench", "claim_class": "conformance_seed",
           "corpus": {"root": corpus_root(artifacts),
                      "artifacts": [a.record() for a in artifacts]}, "tasks": []}
    seconds = _best(lambda: parse_benchmark(doc, path="bench.json"), repeat=1)
    print(f"validate a 100,000-artifact benchmark (paths, ids, root): {seconds:.3f} s")


def bench_rehash() -> None:
    base = Path(tempfile.mkdtemp(prefix="ctxbench-eceb-bench-", dir="/tmp"))
    try:
        big = base / "one.bin"
        chunk = os.urandom(1 << 20)
        with open(big, "wb") as handle:
            for _ in range(1024):
                handle.write(chunk)
        corpus = base / "corpus"
        per_file = GIB // 10_000
        artifacts = []
        for i in range(10_000):
            rel = f"d{i % 100:02d}/f{i:05d}.bin"
            path = corpus / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            offset = (i * 7919) % ((1 << 20) - per_file)
            data = (chunk[offset:] + chunk)[:per_file]
            path.write_bytes(data)
            artifacts.append(Artifact(f"f{i:05d}", rel, "code", "internal", blake3_hex(data)))
        bench = Benchmark("bench", "conformance_seed", corpus_root(artifacts),
                          tuple(artifacts), ())
        total = per_file * 10_000
        check: list[CorpusCheck] = []
        threads = min(4, os.cpu_count() or 1)  # verify_corpus's default
        # Interleave the measurements and keep each one's best of 5, so that load from
        # other work on a shared machine hits all of them alike.
        variants = {"single": lambda: blake3_file(big),
                    "seq": lambda: check.append(verify_corpus(bench, corpus, workers=1)),
                    "par": lambda: check.append(verify_corpus(bench, corpus))}
        best = dict.fromkeys(variants, float("inf"))
        for _ in range(5):
            for name, fn in variants.items():
                best[name] = min(best[name], _best(fn, repeat=1))
        assert all(c.ok and c.bytes_hashed == total for c in check)
        one_rate = GIB / best["single"] / 1e6
        print(f"hash one 1 GiB file (blake3_file): {best['single']:.3f} s "
              f"({one_rate:,.0f} MB/s)")
        for name, label in (("seq", "1 thread, as the single file"),
                            ("par", f"{threads} threads (default)")):
            rate = total / best[name] / 1e6
            print(f"re-hash 10,000 files, {total / GIB:.3f} GiB, verify_corpus {label}: "
                  f"{best[name]:.3f} s ({rate:,.0f} MB/s) = {100 * rate / one_rate:.0f}% of "
                  f"single-file throughput (target >= 70%)")
    finally:
        shutil.rmtree(base)


def bench_evaluate() -> None:
    ladder = (256, 512, 1024, 2048, 4096)
    artifacts = tuple(Artifact(f"a{i}", f"a/{i}.md", "runbook", "internal",
                               blake3_hex(str(i).encode())) for i in range(1000))
    tasks: list[Task] = []
    observations: list[Observation] = []
    for t in range(10_000):
        req: tuple[str, ...] = (artifacts[t % 1000].artifact_id,
                                artifacts[(t * 7) % 1000].artifact_id)
        if req[0] == req[1]:
            req = req[:1]
        tasks.append(Task(f"t{t}", "q", req, ("public", "internal"), (), ladder, 700, 100,
                          ("answer",), 3))
        picked = tuple(Selected(a, artifacts[int(a[1:])].blake3) for a in req)
        budgets: tuple[int | None, ...] = (None, *ladder)
        for b in budgets:
            strategy = "full_permitted_context" if b is None else "compiled"
            for rep in (1, 2, 3):
                ok = b is None or b >= ladder[t % 5]
                observations.append(Observation(
                    f"t{t}", strategy, b, rep, 9000 if b is None else b - 10, 50, 2000, 500,
                    900, 930 if ok else 700, "the answer", picked,
                    blake3_hex(f"{t}|{b}".encode()), len(observations)))
    bench = Benchmark("bench", "conformance_seed", corpus_root(artifacts), artifacts,
                      tuple(tasks))
    run = Run("r", "bench", bench.root, "conformance_seed",
              Scalars.of({"name": "s", "revision": "1"}),
              Scalars.of({"provider": "p", "name": "m"}),
              Scalars.of({"profile": "p", "model": "j", "rubric_blake3": "0" * 64,
                          "human_review": "none"}),
              Scalars.of({"name": "cl100k_base"}),
              Scalars.of({"source": "s", "date": "2026-01-01"}), Scalars.of({}),
              tuple(observations), path="run.json")
    check = CorpusCheck("corpus", bench.root, len(artifacts), 0, ())
    compiled = sum(1 for o in observations if o.strategy == "compiled")
    seconds = _best(lambda: evaluate(bench, run, check), repeat=2)
    print(f"evaluate 10,000 tasks x 5 budgets x 3 repetitions ({compiled:,} compiled + "
          f"{len(observations) - compiled:,} baseline observations): {seconds:.3f} s "
          f"(target < 10 s)")
    report = evaluate(bench, run, check)
    seconds = _best(report.to_json, repeat=2)
    document = json.loads(json.dumps(report.to_json()))
    print(f"that report to JSON (Report.to_json): {seconds:.3f} s")
    seconds = _best(lambda: Report.from_json(Node("report.json", "", document)), repeat=2)
    print(f"that report read back (Report.from_json, every member checked): {seconds:.3f} s")
    with tempfile.TemporaryDirectory(prefix="ctxbench-eceb-run-", dir="/tmp") as tmp:
        path = Path(tmp) / "run.json"
        path.write_text(json.dumps(run.to_json()), encoding="utf-8")
        seconds = _best(lambda: load_run(path), repeat=1)
        print(f"load and validate that run from JSON "
              f"({path.stat().st_size / 1e6:.0f} MB): {seconds:.3f} s")


if __name__ == "__main__":
    bench_root()
    if "--skip-rehash" not in sys.argv:
        bench_rehash()
    bench_evaluate()
