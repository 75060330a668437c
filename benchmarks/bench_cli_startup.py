"""How long ``ctxbench --help`` and ``ctxbench --version`` take, and what they import.

    .venv/bin/python benchmarks/bench_cli_startup.py            # 20 runs each
    .venv/bin/python benchmarks/bench_cli_startup.py --runs 50

Each run is a fresh interpreter (``python -m ctxbench.cli.main ...``, what the installed
``ctxbench`` script runs), timed wall-clock from spawn to exit; the minimum and median
are printed against the 0.25 s target. A last run under ``-X importtime`` lists the
slowest imports and checks that no heavy dependency (numpy, bm25s, jsonschema, tiktoken,
httpx, rich) is imported.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("numpy", "bm25s", "jsonschema", "tiktoken", "httpx", "rich")
TARGET_S = 0.25


def _time(args: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ctxbench.cli.main", *args], check=True,
                       capture_output=True)
        out.append(time.perf_counter() - started)
    return out


def _imports(args: list[str]) -> list[tuple[int, str]]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "ctxbench.cli.main",
                           *args], check=True, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.split("|")
        try:
            rows.append((int(parts[1].strip()), parts[2].rstrip()))
        except ValueError:
            continue
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    base = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - started)
    print(f"bare interpreter: min {min(base):.3f} s, median {statistics.median(base):.3f} s")
    worst = 0.0
    for args in (["--help"], ["--version"]):
        times = _time(args, runs)
        worst = max(worst, statistics.median(times))
        print(f"ctxbench {' '.join(args)}: min {min(times):.3f} s, median "
              f"{statistics.median(times):.3f} s over {runs} runs (target < {TARGET_S} s)")
    rows = _imports(["--help"])
    names = {name.strip() for _us, name in rows}
    heavy = sorted(h for h in HEAVY if h in names)
    print("heavy modules imported by --help: " + (", ".join(heavy) or "none"))
    print("slowest imports (cumulative microseconds):")
    for us, name in sorted(rows, reverse=True)[:8]:
        print(f"  {us:8,d}  {name.strip()}")
    return 0 if not heavy and worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
