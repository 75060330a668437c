"""Benchmark the HTML report: render a CEF report of 1,000,000 trials; time and page size.

    .venv/bin/python benchmarks/bench_html.py                  # 8 workloads x 31,250 tasks x 4
    .venv/bin/python benchmarks/bench_html.py --report r.json  # time an existing report
    .venv/bin/python benchmarks/bench_html.py --save /tmp/r.json   # keep the made report

The trials (8 workloads, so 8 strata, x 31,250 tasks x 4 conditions x 1 replicate, from
``ctxbench.testing.cef_trials`` as in ``bench_cef.py``) are written and analyzed first
(not timed; 200 bootstrap resamples, which changes no field's size). The timed part is
``render_html`` on that report.json, in process (median of --repeat runs), and the whole
``ctxbench report ... --html`` command in a fresh process (import, read, render, write;
median of 3), beside ``ctxbench --help`` in a fresh process (the command line's start-up
alone).
Targets: under 5 s and a page under 5 MB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxbench.core import atomic_write_json
from ctxbench.render.html import render_html
from ctxbench.testing.cef_trials import ConditionEffect, generate_records

SECONDS_TARGET = 5.0
BYTES_TARGET = 5_000_000
WORKLOADS = ("hotpotqa", "ops-logs", "code-review", "support", "legal", "finance", "infra",
             "sales")


def make_report(workdir: Path, workloads: int, tasks: int, samples: int) -> Path:
    from ctxbench.protocols.cef.api import analyze_files

    conditions = {
        "native_compaction": ConditionEffect(context_ratio=0.8),
        "entroly": ConditionEffect(context_ratio=0.5, commit=True),
        "combined": ConditionEffect(context_ratio=0.4, failure_rate=0.02, commit=True),
    }
    trials = workdir / "trials.jsonl"
    t0 = time.perf_counter()
    count = 0
    with open(trials, "w", encoding="utf-8") as handle:
        batch: list[str] = []
        for record in generate_records(conditions=conditions, tasks=tasks, seed=1,
                                       workloads=WORKLOADS[:workloads]):
            batch.append(json.dumps(record))
            count += 1
            if len(batch) >= 10_000:
                handle.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            handle.write("\n".join(batch) + "\n")
    t1 = time.perf_counter()
    report = analyze_files([trials], overrides={"bootstrap_samples": samples})
    t2 = time.perf_counter()
    out = workdir / "report.json"
    atomic_write_json(out, report.to_json())
    trials.unlink()
    print(f"setup: {count:,} trials written in {t1 - t0:.1f} s, analyzed in {t2 - t1:.1f} s "
          f"({report.inputs.trials_analyzed:,} analyzed, {report.inputs.strata} "
          "strata)")
    return out


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="time this report instead of making one")
    parser.add_argument("--workloads", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=31_250)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--save", type=Path, help="copy the made report.json here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        report = args.report or make_report(workdir, args.workloads, args.tasks, args.samples)
        if args.save is not None and args.report is None:
            shutil.copyfile(report, args.save)
        page = workdir / "report.html"
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            text = render_html([report], page)
            times.append(time.perf_counter() - start)
        size = len(text.encode("utf-8"))
        command = [sys.executable, "-m", "ctxbench", "report", str(report), "--html", str(page)]
        cli = statistics.median(_wall(command) for _ in range(3))
        startup = statistics.median(_wall([sys.executable, "-m", "ctxbench", "--help"])
                                    for _ in range(3))
        trials = json.loads(report.read_text(encoding="utf-8"))["inputs"]["trials_analyzed"]
        median = statistics.median(times)
        print(json.dumps({"trials": trials, "report_bytes": report.stat().st_size,
                          "render_seconds_median": round(median, 4),
                          "render_seconds_max": round(max(times), 4),
                          "cli_seconds_median": round(cli, 3),
                          "cli_startup_seconds_median": round(startup, 3), "page_bytes": size}))
        ok = cli < SECONDS_TARGET and size < BYTES_TARGET
        print(f"{'PASS' if ok else 'FAIL'}: ctxbench report {cli:.2f} s (target < "
              f"{SECONDS_TARGET:g} s), render {median:.3f} s, page {size / 1e6:.2f} MB "
              f"(target < {BYTES_TARGET / 1e6:g} MB)")
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()
