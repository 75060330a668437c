"""Benchmark: compare 1,000,000 paired public-eval rows (parse + pair + every interval).

Run: ``.venv/bin/python benchmarks/bench_public_eval.py [--rows N] [--resamples R]``.
Writes two synthetic row files to a temporary directory (not timed), then times each
stage of ``compare_files``: reading and validating both files, pairing the cells, and the
analysis (Wilson, Tango, Newcombe, exact McNemar and the joint paired bootstrap).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ctxbench.core.digests import blake3_file
from ctxbench.protocols.public_eval import Settings, analyze, pair_rows, read_rows
from ctxbench.protocols.public_eval.model import Inputs
from ctxbench.protocols.public_eval.model_parts import InputFile


def write_rows(folder: Path, rows: int, seed: int = 1) -> tuple[Path, Path]:
    """Two JSONL files with the protocol's example fields for ``rows`` instances."""
    rng = np.random.default_rng(seed)
    resolved_b = rng.random(rows) < 0.6
    resolved_t = np.where(rng.random(rows) < 0.97, resolved_b, ~resolved_b)
    tokens_b = rng.integers(10_000, 90_000, rows)
    tokens_t = (tokens_b * rng.uniform(0.4, 0.9, rows)).astype(np.int64)
    paths = []
    for name, resolved, tokens in (("baseline", resolved_b, tokens_b),
                                   ("treatment", resolved_t, tokens_t)):
        path = folder / f"{name}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            usd = np.round(tokens * 1.5e-5, 6).tolist()
            latency = rng.integers(20_000, 300_000, rows).tolist()
            tools = rng.integers(1, 60, rows).tolist()
            for i, (res, tok) in enumerate(zip(resolved.tolist(), tokens.tolist(), strict=True)):
                handle.write(json.dumps({"instance_id": f"repo__issue-{i:07d}", "resolved": res,
                                         "tokens": tok, "usd": usd[i],
                                         "latency_ms": latency[i], "tool_calls": tools[i]},
                                        separators=(",", ":")) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        base, treat = write_rows(Path(tmp), args.rows)
        print(f"generated {args.rows:,} rows per file in {time.perf_counter() - started:.1f} s "
              f"({os.path.getsize(base) / 2**20:.0f} MiB each; not timed)")
        c0 = time.process_time()
        t0 = time.perf_counter()
        tables = [read_rows(base), read_rows(treat)]
        digests = [blake3_file(base), blake3_file(treat)]
        t1 = time.perf_counter()
        c1 = time.process_time()
        cells = pair_rows(*tables)
        t2 = time.perf_counter()
        c2 = time.process_time()
        inputs = Inputs(*(InputFile(file=p.name, blake3=d, rows=t.rows,
                                    read_and_ignored=tuple(t.ignored_fields))
                          for p, d, t in zip((base, treat), digests, tables, strict=True)))
        report = analyze(cells, Settings(bootstrap_samples=args.resamples),
                         inputs=inputs).to_json()
        t3 = time.perf_counter()
        c3 = time.process_time()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"parse + validate both files: {t1 - t0:6.1f} s  (CPU {c1 - c0:.1f} s)")
    print(f"pair cells:                  {t2 - t1:6.1f} s  (CPU {c2 - c1:.1f} s)")
    print(f"analysis ({args.resamples} resamples):   {t3 - t2:6.1f} s  (CPU {c3 - c2:.1f} s)")
    print(f"total:                       {t3 - t0:6.1f} s  (target < 60 s for 1,000,000 rows)")
    print(f"CPU time of this process:    {c3 - c0:6.1f} s  (1-minute load average at the end: "
          f"{load:.1f} on {os.cpu_count()} cores)")
    print(f"status {report['status']}; token savings {report['savings']['tokens']['percent_saved']}"
          f"% CI {report['savings']['tokens']['ci']} gate bound "
          f"{report['savings']['tokens']['gate_lower_bound']}; delta "
          f"{report['quality']['gate_ci_pp']}")


if __name__ == "__main__":
    main()
