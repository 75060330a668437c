"""Benchmark the importers and Entroly commit verification: wall time per record.

    .venv/bin/python benchmarks/bench_importers.py                 # 20,000 instances
    .venv/bin/python benchmarks/bench_importers.py --instances 2000

SWE-bench: two harness run reports of N instances each plus two usage JSONL files, imported
into public-eval rows. lm-eval: two samples files of N documents (one filter) plus usage,
imported into rows and CEF trials. Entroly: ``compile verify`` of the committed fixture
commit (``tests/compiler/entroly_commits/runner-python.json``) R times. Inputs are written
first (not timed); each timed step is the library call the CLI makes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path

from ctxbench.compiler.api import verify_any_commit_file
from ctxbench.importers import TrialSettings, import_lm_eval, import_swebench

ROOT = Path(__file__).resolve().parents[1]


def _usage(path: Path, key: str, ids: list[object], scale: float) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for n, ident in enumerate(ids):
            handle.write(json.dumps({
                key: ident, "input_tokens": int((1000 + n % 97) * scale),
                "cached_input_tokens": 4000, "output_tokens": 300, "reasoning_tokens": 50,
                "usd": 0.01, "latency_ms": 1000 + n % 13}) + "\n")


def swebench_inputs(tmp: Path, n: int) -> tuple[tuple[Path, Path], tuple[Path, Path]]:
    ids = [f"repo__repo-{i}" for i in range(n)]
    reports, usage = [], []
    for arm, scale in (("base", 1.0), ("treat", 0.6)):
        report = {"submitted_ids": ids, "resolved_ids": ids[: n // 2],
                  "unresolved_ids": ids[n // 2:], "empty_patch_ids": [], "error_ids": [],
                  "completed_ids": ids, "schema_version": 2}
        reports.append(tmp / f"model.{arm}.json")
        reports[-1].write_text(json.dumps(report, indent=4) + "\n")
        usage.append(tmp / f"{arm}-usage.jsonl")
        _usage(usage[-1], "instance_id", list(ids), scale)
    return (reports[0], reports[1]), (usage[0], usage[1])


def lm_eval_inputs(tmp: Path, n: int) -> tuple[tuple[Path, Path], tuple[Path, Path]]:
    samples, usage = [], []
    for arm, scale in (("base", 1.0), ("treat", 0.6)):
        (tmp / arm).mkdir()
        path = tmp / arm / "samples_gsm8k_2026-11-30T10-15-02.123456.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for doc_id in range(n):
                prompt = f"Question {doc_id} ({arm})\nAnswer:"
                handle.write(json.dumps({
                    "doc_id": doc_id, "doc": {"q": doc_id}, "target": "1",
                    "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {}}},
                    "resps": [["1"]], "filtered_resps": ["1"], "filter": "strict-match",
                    "metrics": ["exact_match"], "doc_hash": "0" * 64,
                    "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest(),
                    "target_hash": "0" * 64, "exact_match": float(doc_id % 3 != 0)}) + "\n")
        samples.append(path)
        usage.append(tmp / f"{arm}-usage.jsonl")
        _usage(usage[-1], "doc_id", list(range(n)), scale)
    return (samples[0], samples[1]), (usage[0], usage[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instances", type=int, default=20_000)
    parser.add_argument("--verify-repeats", type=int, default=200)
    args = parser.parse_args()
    n = args.instances
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        reports, usage = swebench_inputs(tmp, n)
        start = time.perf_counter()
        import_swebench(reports, usage, rows=(tmp / "b.jsonl", tmp / "t.jsonl"))
        swe = time.perf_counter() - start
        print(f"swebench: {n} instances x 2 arms -> rows: {swe:.2f} s "
              f"({1e6 * swe / (2 * n):.1f} us/record)")
        samples, usage = lm_eval_inputs(tmp, n)
        start = time.perf_counter()
        import_lm_eval(samples, usage, metric="exact_match", rows=(tmp / "lb", tmp / "lt"),
                       trials=tmp / "trials.jsonl", model="openai/gpt-4o-mini",
                       evidence_metric="exact_match", grounding_metric="exact_match",
                       settings=TrialSettings(cost_source="pricing_snapshot",
                                              cost_reference="bench"))
        lm = time.perf_counter() - start
        print(f"lm-eval: {n} documents x 2 arms -> rows + trials: {lm:.2f} s "
              f"({1e6 * lm / (2 * n):.1f} us/document)")
    commit = ROOT / "tests" / "compiler" / "entroly_commits" / "runner-python.json"
    start = time.perf_counter()
    for _ in range(args.verify_repeats):
        verify_any_commit_file(commit, None)
    each = (time.perf_counter() - start) / args.verify_repeats
    print(f"entroly commit verify ({commit.stat().st_size} bytes): {1e3 * each:.2f} ms/file")


if __name__ == "__main__":
    main()
