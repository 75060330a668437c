"""CEF trial parsing throughput: decoding, and decoding + validation + columns.

    .venv/bin/python benchmarks/bench_cef_parse.py                      # 100,000 trials
    .venv/bin/python benchmarks/bench_cef_parse.py --tasks 25000 --against 2732b7e

``--against REV`` also times the inline fast path of that revision's
``protocols/cef/records.py`` (loaded from git beside the current code), back to back in the
same process, so the comparison does not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cef
from ctxbench.core.jsonl import iter_jsonl
from ctxbench.protocols.cef.api import read_table
from ctxbench.protocols.cef.table import TableBuilder


def _old_records(rev: str, tmp: Path) -> ModuleType:
    """The revision's records.py (and its rules.py) as standalone modules."""
    for name in ("rules", "records"):
        text = subprocess.run(["git", "show", f"{rev}:src/ctxbench/protocols/cef/{name}.py"],
                              check=True, capture_output=True, text=True).stdout
        text = text.replace("from ctxbench.protocols.cef.rules import", "from old_rules import")
        (tmp / f"old_{name}.py").write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp))
    spec = importlib.util.spec_from_file_location("old_records", tmp / "old_records.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_records"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def _best(fn: Callable[[], object], repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=25_000)
    parser.add_argument("--against", help="a git revision with the old inline fast path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxbench-parse-") as tmp:
        path = Path(tmp) / "trials.jsonl"
        n = bench_cef.write_trials(path, args.tasks)

        def decode() -> None:
            for _item in iter_jsonl(path):
                pass

        runs: list[tuple[str, Callable[[], object]]] = [
            ("JSONL decoding only", decode),
            ("decoding + single validator + columns (read_table)", lambda: read_table([path])),
        ]
        if args.against:
            old = _old_records(args.against, Path(tmp))

            def previous() -> object:
                builder = TableBuilder()
                for item in iter_jsonl(path):
                    if not old.fast_valid(item.value, "raw"):
                        raise SystemExit("the old fast path declined a valid record")
                    builder.add_record(item.value, item.path, item.line)
                return builder.build()

            runs.insert(1, (f"decoding + inline fast path of {args.against} + columns",
                            previous))
        for name, fn in runs:
            seconds = _best(fn)
            print(f"{name}: {seconds:.2f} s CPU for {n:,} trials ({n / seconds:,.0f}/s)")


if __name__ == "__main__":
    main()
