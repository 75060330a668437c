"""Whole runs against every hostile-server mode: crashes, hangs, keys in files, attempts.

    .venv/bin/python benchmarks/bench_hostile.py [--replicates 2] [--timeout 1.0]

Each mode gets its own run (QA workload of 2 tasks x 3 conditions x R replicates, the
``openai`` provider, concurrency 4, ``retries = 1``) against the hostile server of
``tests/runner/hostile_server.py`` on 127.0.0.1. Per mode it prints: trials recorded,
attempts and the attempts the server saw, the error types, the slowest attempt against
the deadline, the run's wall time, whether reports were written, and how many files
under the run directory contain the API key.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from runner.hostile_server import MODES, HostileServer

KEY_ENV = "CTXBENCH_BENCH_HOSTILE_KEY"
KEY = "sk-bench-hostile-5e1c9a7b3d2f4068"
QA = [{"_id": "q1", "input": "Who rotated the signing key?",
       "context": "The signing key was rotated by Alice on Monday. Bob reviewed it.",
       "answers": ["Alice"]},
      {"_id": "q2", "input": "Which port does the gateway use?",
       "context": "The gateway listens on port 8443. Metrics are on port 9100.",
       "answers": ["8443"]}]


@dataclass(frozen=True, slots=True)
class Row:
    mode: str
    trials: int
    planned: int
    attempts: int
    seen: int
    unaccounted: int
    types: dict[str, int]
    slowest_ms: float
    wall_s: float
    reports: bool
    key_files: int
    crash: str


def run_mode(mode: str, *, shape: str, replicates: int, timeout_s: float,
             folder: Path) -> Row:
    from ctxbench.core import iter_jsonl
    from ctxbench.runner.experiment import run_experiment

    folder.mkdir(parents=True)
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in QA),
                                     encoding="utf-8")
    with HostileServer(mode, shape=shape) as server:
        (folder / "exp.toml").write_text(
            f'name = "hostile"\nseed = 3\nreplicates = {replicates}\noutput = "out"\n'
            'pricing = "self_hosted"\n[workload]\nsource = "qa.jsonl"\n'
            f'[model]\nprovider = "{shape}"\nmodel = "m"\nbase_url = "{server.base_url}"\n'
            f'api_key_env = "{KEY_ENV}"\nmax_output_tokens = 16\n'
            '[[conditions]]\nstrategy = "full_permitted_context"\n'
            '[[conditions]]\nstrategy = "compiled"\nbudgets = [200, 400]\n'
            f"[limits]\nconcurrency = 4\ntimeout_s = {timeout_s}\nretries = 1\n"
            "backoff_s = 0.01\nmax_retry_wait_s = 3\n", encoding="utf-8")
        started = time.monotonic()
        crash = ""
        try:
            run_experiment(folder / "exp.toml")
        except Exception as exc:  # a crash is what this benchmark counts
            crash = f"{type(exc).__name__}: {exc}"[:120]
        elapsed = time.monotonic() - started
        seen = len(server.seen)
    out = folder / "out"
    records = [i.value for i in iter_jsonl(out / "trials.jsonl")] \
        if (out / "trials.jsonl").exists() else []
    attempts = [a for r in records for a in r["attempts"]]
    keyed = sum(1 for p in out.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes())
    return Row(mode=mode if shape == "openai" else f"{mode} ({shape})",
               trials=len(records), planned=2 * 3 * replicates, attempts=len(attempts),
               seen=seen, unaccounted=sum(1 for a in attempts
                                          if a["outcome"] == "error" and not a["error_type"]),
               types=dict(Counter(str(a["error_type"] or "success") for a in attempts)),
               slowest_ms=max((float(a["latency_ms"]) for a in attempts), default=0.0),
               wall_s=elapsed, reports=(out / "cef-report.json").is_file(), key_files=keyed,
               crash=crash)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1.0)
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    cases = [(m, "openai") for m in MODES] + [("header_echo", "anthropic")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (mode, shape) in enumerate(cases):
            rows.append(run_mode(mode, shape=shape, replicates=args.replicates,
                                 timeout_s=args.timeout, folder=Path(tmp) / str(index)))
    deadline_ms = args.timeout * 1000
    print(f"deadline {args.timeout:g} s, retries 1, concurrency 4\n")
    print("| mode | trials | attempts (server saw) | error types | slowest attempt | run wall "
          "| reports | files with the key |")
    print("|---|---:|---:|---|---:|---:|---|---:|")
    for r in rows:
        types = ", ".join(f"{k} x{v}" for k, v in sorted(r.types.items()))
        print(f"| {r.mode} | {r.trials}/{r.planned} | {r.attempts} ({r.seen}) | {types} "
              f"| {r.slowest_ms:.0f} ms | {r.wall_s:.1f} s | {'yes' if r.reports else 'NO'} "
              f"| {r.key_files} |")
    crashes = [r for r in rows if r.crash]
    late = [r for r in rows if r.slowest_ms > deadline_ms + 250]
    print(f"\nmodes {len(rows)}; crashes {len(crashes)}; modes with an attempt past the "
          f"deadline + 0.25 s {len(late)}; files with the key "
          f"{sum(r.key_files for r in rows)}; unaccounted attempts "
          f"{sum(r.unaccounted for r in rows)}; attempts the server saw but not recorded "
          f"{sum(r.seen - r.attempts for r in rows)}; trials missing "
          f"{sum(r.planned - r.trials for r in rows)}")
    for r in crashes:
        print(f"CRASH {r.mode}: {r.crash}")


if __name__ == "__main__":
    main()
