"""Benchmark the HTML report: render a CEF report of 1,000,000 trials; time and page size.

    .venv/bin/python benchmarks/bench_html.py                  # 8 workloads x 31,250 tasks x 4
    .venv/bin/python benchmarks/bench_html.py --report r.json  # time an existing report
    .venv/bin/python benchmarks/bench_html.py --save /tmp/r.json   # keep the made report

The trials (8 workloads, so 8 strata, x 31,250 tasks x 4 conditions x 1 replicate, from
``ctxbench.testing.cef_trials`` as in ``bench_cef.py``) are written and analyzed first
(not timed; 1,000 bootstrap resamples, the least CEF accepts, which changes no field's
size). The timed part is ``render_html`` on that report.json, in process (median of
--repeat runs), and the whole
``ctxbench report ... --html`` command in a fresh process (import, read, render, write;
median of 3), beside ``ctxbench --help`` in a fresh process (the command line's start-up
alone).
Targets: under 5 s and a page under 5 MB.

    .venv/bin/python benchmarks/bench_html.py --run-page 10000  # a run page with drill-down

``--run-page N`` makes a run directory of N trials (1 workload x N/8 tasks x 4 conditions x
2 replicates, the same synthetic records, every answer distinct) with a packet store of
one file per distinct context (about 4 characters per context token) and what the runner
records for the drill-down (query, expected answer, scorer details, selected artifacts),
analyzes it, renders
its page and opens it in headless Chromium (playwright, /usr/bin/chromium): the page's
bytes, when the drill-down's script is done (``data-ready``) and **time to interactive**:
navigation start to the first filter change answered (the outcome filter set to
"baseline scored higher" as soon as it is on the page, and the count line showing it;
performance.now() in the page, so Playwright's round trips are included). Median of --repeat loads.
Targets: a page under 5 MB, interactive in under 1 s.
"""

from __future__ import annotations

import argparse
import json
import re
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


TTI_TARGET_MS = 1000.0
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def make_run(workdir: Path, trials: int, samples: int) -> Path:
    """A run directory: trials.jsonl, packets/ and cef-report.json (see the module text)."""
    from ctxbench.core import sha256_hex
    from ctxbench.protocols.cef.api import analyze_files

    conditions = {
        "native_compaction": ConditionEffect(context_ratio=0.8),
        "entroly": ConditionEffect(context_ratio=0.5, quality_shift=-0.05, commit=True),
        "combined": ConditionEffect(context_ratio=0.4, failure_rate=0.02, commit=True),
    }
    run = workdir / "run"
    (run / "packets").mkdir(parents=True)
    t0 = time.perf_counter()
    lines = []
    for record in generate_records(conditions=conditions, tasks=trials // 8, replicates=2,
                                   seed=1, schema_version="ctxbench.trial.v1"):
        key = f"{record['task_id']} {record['condition']}"
        words = " ".join(f"{key} line {k}: permitted text of the packet." for k in
                         range(max(1, record["context_tokens"] // 12)))
        text = words[: record["context_tokens"] * 4]
        sha = sha256_hex(text.encode("utf-8"))
        packet = run / "packets" / f"{sha}.txt"
        if not packet.exists():
            packet.write_text(text, encoding="utf-8")
        answer = (f"For {record['task_id']} (replicate {record['replicate']}) under "
                  f"{record['condition']} the answer is {sha[:16]}."
                  if record["outcome"] == "success" else None)
        # what the runner records for the drill-down: the question and expected answer
        # (one per task), the scorer's details and the packet's selection (2-6 of 400
        # artifacts, one selection per packet)
        task = int(record["task_id"].rsplit("-", 1)[-1])
        gold = f"The answer to {record['task_id']} is item {task % 97}."
        ids = [f"docs/area-{(task + int(sha[:4], 16) + 7 * k) % 400}.md"
               for k in range(2 + int(sha[4], 16) % 5)]
        required = [f"docs/area-{(task + 7 * k) % 400}.md" for k in range(2)]
        record.update(
            context_sha256=sha, response_text=answer,
            response_sha256=None if answer is None else sha256_hex(answer.encode("utf-8")),
            selected_artifacts=[{"artifact_id": a, "blake3": sha256_hex(a.encode())}
                                for a in dict.fromkeys(ids)],
            rendered_blake3=sha256_hex(sha.encode()),
            scorer_details={"method": "token_f1",
                            "matched": [gold] if record["task_score"] > 0 else [],
                            "evidence_required": required,
                            "evidence_found": [r for r in required if r in ids]},
            query=f"Which item does the record of {record['task_id']} name, and why?",
            expected={"answers": [gold], "answer_terms": [], "abstention": False})
        lines.append(json.dumps(record))
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    t1 = time.perf_counter()
    report = analyze_files([run / "trials.jsonl"], overrides={"bootstrap_samples": samples})
    atomic_write_json(run / "cef-report.json", report.to_json())
    packets = sum(1 for _ in (run / "packets").iterdir())
    print(f"setup: {len(lines):,} trials and {packets:,} packets written in "
          f"{t1 - t0:.1f} s, analyzed in {time.perf_counter() - t1:.1f} s")
    return run


def run_page(trials: int, samples: int, repeat: int) -> bool:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp), trials, samples)
        page_path = run / "index.html"
        start = time.perf_counter()
        text = render_html([run], page_path)
        render_s = time.perf_counter() - start
        page_path.write_text(text, encoding="utf-8")
        size = len(text.encode("utf-8"))
        ready, tti, rows = [], [], 0
        pairs = trials * 3 // 4
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                profile, executable_path="/usr/bin/chromium", args=_FLAGS, headless=True,
                viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            for _ in range(repeat):
                page = browser.new_page()
                page.on("pageerror", lambda e: errors.append(str(e)))
                # as a user would: the filter is changed as soon as it is there (the
                # drill-down's program runs before the packets and the rest are parsed)
                page.goto(page_path.as_uri(), wait_until="commit")
                page.select_option("select[aria-label=Outcome]", "0")
                # answered: the count line no longer counts every pair of the run (the
                # page's CSP allows no eval, so this waits on a locator, not a function)
                page.locator(".dd-count", has_text=re.compile(
                    rf"^Showing \d+ of (?!{pairs} )\d+ pairs \({pairs} in the run\)\.$")
                ).wait_for()
                tti.append(float(page.evaluate("performance.now()")))
                ready.append(float(page.get_attribute(".drill", "data-ready") or "nan"))
                rows = int(page.evaluate("document.querySelectorAll('.dd-row').length"))
                assert not errors, errors
                page.close()
            browser.close()
    result = {"trials": trials, "page_bytes": size, "render_seconds": round(render_s, 3),
              "script_ready_ms_median": round(statistics.median(ready), 1),
              "tti_ms_median": round(statistics.median(tti), 1),
              "tti_ms_max": round(max(tti), 1), "rows_drawn": rows}
    print(json.dumps(result))
    ok = size < BYTES_TARGET and statistics.median(tti) < TTI_TARGET_MS
    print(f"{'PASS' if ok else 'FAIL'}: run page {size / 1e6:.2f} MB (target < "
          f"{BYTES_TARGET / 1e6:g} MB), interactive in {statistics.median(tti):.0f} ms "
          f"(target < {TTI_TARGET_MS:g} ms)")
    return ok


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="time this report instead of making one")
    parser.add_argument("--workloads", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=31_250)
    parser.add_argument("--samples", type=int, default=1000)  # the least CEF accepts
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--save", type=Path, help="copy the made report.json here")
    parser.add_argument("--run-page", type=int, metavar="TRIALS",
                        help="benchmark a run page of TRIALS trials in Chromium instead")
    args = parser.parse_args()
    if args.run_page is not None:
        if not run_page(args.run_page, args.samples, args.repeat):
            sys.exit(1)
        return
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
