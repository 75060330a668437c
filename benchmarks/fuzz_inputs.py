"""Fuzz every input kind with 10,000 mutated inputs and print what happened.

    .venv/bin/python benchmarks/fuzz_inputs.py               # 10,000 inputs (1,000 per kind)
    .venv/bin/python benchmarks/fuzz_inputs.py --per-kind 50 --seed 7

Each input goes through its kind's public reader and, for kinds with a command, through
the ``ctxbench`` CLI in-process (``cef validate``/``cef analyze``, ``eceb evaluate``,
``compile verify``). Counted: tracebacks, hangs (over the per-input limit), forbidden
inputs accepted, rejections without a file:line or JSON pointer (for TOML inputs: without
a line), and message lines over the cap. The mutator and harness are the test suite's (tests/fuzz/).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzz.harness import FAILURES, fuzz
from fuzz.kinds import kinds
from fuzz.mutate import CLASSES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-kind", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--cli-every", type=int, default=1,
                        help="also run the CLI on every Nth input of a kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxbench-fuzz-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        tally = fuzz(kinds(work), work, per_kind=args.per_kind, seed=args.seed,
                     timeout=args.timeout, cli_every=args.cli_every)
        seconds = time.perf_counter() - started
    print(f"inputs: {tally.inputs:,} (runs: {tally.runs:,}, reader + CLI) in {seconds:.0f} s")
    for name in ("accepted", "rejected", *FAILURES):
        print(f"  {name}: {tally.counts[name]:,}")
    print(f"  rejections located by file:line or JSON pointer: "
          f"{tally.counts['rejected'] - tally.whole_file:,}; by file and field only "
          f"or whole file (JSON documents only; a TOML rejection without a line is "
          f"counted unlocated): {tally.whole_file:,}")
    print("per class (rejected / accepted):")
    for cls in sorted(CLASSES):
        print(f"  {cls:14s} {tally.by_class[(cls, 'rejected')]:6,} / "
              f"{tally.by_class[(cls, 'accepted')]:6,}"
              + ("  (forbidden)" if CLASSES[cls] else ""))
    for name, examples in tally.examples.items():
        print(f"first {name}:")
        for example in examples:
            print("  " + example.replace("\n", " | ")[:400])
    return 1 if tally.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
