"""Peak memory of corpus reads at and beyond the documented file bounds.

    .venv/bin/python benchmarks/bench_file_bounds.py

Each row runs one command in a fresh child process and reports its exit code, wall time
and peak resident set size (``VmHWM`` from ``/proc/self/status``, Linux):

1. ``compile`` on a directory holding one text file at the cap (8 MiB of Markdown-like
   lines), ``full_permitted_context`` (the largest packet), then ``compiled`` at 800;
2. ``compile`` on a directory holding a 200 MB file (sparse): refused, exit 2;
3. ``eceb register`` on a directory holding the same 200 MB file: hashed streamed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxbench.protocols.eceb.files import MAX_TEXT_FILE_BYTES

# VmHWM (Linux), not ru_maxrss, which carries the forking parent's peak across exec.
PROBE = ("import re, sys\nfrom ctxbench.cli.main import main\n"
         "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
         "    code = e.code\n"
         "status = open('/proc/self/status').read()\n"
         "print('PROBE', code, re.search(r'VmHWM:\\s+(\\d+)', status).group(1), "
         "file=sys.stderr)\n")


def _run(args: list[str]) -> tuple[int, float, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - started
    line = next(x for x in done.stderr.splitlines() if x.startswith("PROBE"))
    _, code, kib = line.split()
    return int(code), wall, int(kib) / 1024


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ctxbench-bounds-") as name:
        tmp = Path(name)
        capped = tmp / "capped"
        capped.mkdir()
        line = "Rotate the refresh token signing key every 24 hours; see runbook {n}.\n"
        with open(capped / "big.md", "w", encoding="utf-8") as handle:
            size, n = 0, 0
            while True:
                text = (f"## Section {n}\n\n" if n % 20 == 0 else "") + line.format(n=n)
                if size + len(text) > MAX_TEXT_FILE_BYTES:
                    break
                handle.write(text)
                size += len(text)
                n += 1
        huge = tmp / "huge"
        huge.mkdir()
        with open(huge / "huge.md", "wb") as handle:
            handle.truncate(200 << 20)
        rules = tmp / "rules.toml"
        rules.write_text('benchmark_id = "b"\n[[rule]]\nglob = "**"\nkind = "runbook"\n'
                         'classification = "public"\n')
        rows = [
            (f"compile, one {size:,}-byte file, full_permitted_context",
             ["compile", "--corpus", str(capped), "--query", "refresh token",
              "--strategy", "full_permitted_context"]),
            (f"compile, one {size:,}-byte file, compiled @800",
             ["compile", "--corpus", str(capped), "--query", "refresh token",
              "--budget", "800"]),
            ("compile, one 209,715,200-byte file (refused)",
             ["compile", "--corpus", str(huge), "--query", "x", "--budget", "800"]),
            ("eceb register, one 209,715,200-byte file",
             ["eceb", "register", str(huge), "--map", str(rules), "--output",
              str(tmp / "b.json")]),
        ]
        print("| command | exit | wall s | peak RSS MB |")
        print("|---|---:|---:|---:|")
        for label, args in rows:
            code, wall, mb = _run(args)
            print(f"| {label} | {code} | {wall:.2f} | {mb:.0f} |")


if __name__ == "__main__":
    main()
