"""Peer comparison: the shipped strategies and the chunk-BM25 peer on the dev and held-out sets.

Run: .venv/bin/python benchmarks/compare_peers.py [--sets dev,held-out,held-out-2,held-out-3]
[--strategies compiled,naive_top_k,...] [--out DIR]

Sets (benchmarks/devsets/devset.py): ``dev`` (the only one constants are fitted on),
``held-out``, ``held-out-2`` (a fresh held-out set, added after ``held-out`` had been
looked at) and ``held-out-3`` (added for template v5, after both had been looked at; see
docs/compiler.md); ``dev-nl``, ``held-out-nl``, ``held-out-nl-2`` (a fresh one, frozen
after ``held-out-nl`` had been judged) and ``held-out-nl-3`` (frozen after ``held-out-nl-2``
had been judged), questions written by hand as people ask them
(benchmarks/devsets/README.md). ``entroly`` (the real package, through ctxbench's
adapter) joins the default strategies when it is installed.

It builds the corpora of benchmarks/devsets (copied from the pinned installed packages,
SHA-256 checked), runs ``ctxbench compile evaluate``'s library function on each with
``compiled``, ``naive_top_k``, the shipped ``chunk-bm25`` and the ``langchain-bm25`` peer
(named ``chunk_bm25`` in results recorded before issue 27), and prints, per corpus and per set, the
share of tasks whose packet holds every evidence marker at each budget, with required-
artifact recall, header share, over-budget packets and restricted bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "devsets"))

from devset import CORPORA, SPECS, build

from ctxbench.compiler.evaluation import evaluate

BASE_STRATEGIES = ("compiled", "naive_top_k", "chunk-bm25", "langchain-bm25")


def _default_strategies() -> str:
    from importlib.util import find_spec

    extra = ("entroly",) if find_spec("entroly") is not None else ()
    return ",".join((*BASE_STRATEGIES, *extra))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="dev,held-out,held-out-2,held-out-3")
    parser.add_argument("--strategies", default=_default_strategies())
    parser.add_argument("--corpora", help="only these corpora of the sets (comma-separated)")
    parser.add_argument("--out", help="keep the built corpora and JSON reports here")
    args = parser.parse_args()
    strategies = tuple(args.strategies.split(","))
    wanted = set(args.sets.split(","))
    known = sorted({which for which, _ in CORPORA.values()})
    if not wanted <= set(known):
        parser.error(f"--sets: expected names among {', '.join(known)}, "
                     f"got {', '.join(sorted(wanted - set(known)))}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.out or tmp)
        os.environ.setdefault("CTXBENCH_CACHE_DIR", str(Path(tmp) / "cache"))
        only = set(args.corpora.split(",")) if args.corpora else None
        chosen = [name for name, (which, _) in CORPORA.items() if which in wanted and
                  (only is None or name in only)]
        build(root, chosen)
        totals: dict[tuple[str, str, int], list[int]] = {}
        two_file: dict[tuple[str, str, int], list[int]] = {}
        for spec_path in sorted(SPECS.glob("*.json")):
            spec = json.loads(spec_path.read_text(encoding="utf-8"))
            if spec["set"] not in wanted or spec["corpus"] not in chosen:
                continue
            name = spec["corpus"]
            started = time.perf_counter()
            report = evaluate(root / name / "benchmark.json", root / name / "corpus",
                              strategies=strategies)
            if args.out:
                (root / name / "evaluation.json").write_text(
                    json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
            summary = report.summary
            print(f"\n### {name} ({spec['set']}, {len(spec['tasks'])} tasks, "
                  f"{time.perf_counter() - started:.0f} s)\n")
            print("| budget | " + " | ".join(strategies) + " |")
            print("|---:|" + "---:|" * len(strategies))
            for budget in report.budgets:
                cells = []
                for strategy in strategies:
                    s = next(x for x in summary if x.strategy == strategy and
                             x.budget == budget)
                    cells.append(f"{s.answer_present_rate:.0%} (recall "
                                 f"{s.required_recall:.2f}, headers "
                                 f"{s.header_share:.2%}, over {s.over_budget}, "
                                 f"restricted {s.restricted_bytes})")
                    key = (spec["set"], strategy, budget)
                    got = totals.setdefault(key, [0, 0])
                    got[0] += s.answer_present
                    got[1] += s.tasks
                print(f"| {budget} | " + " | ".join(cells) + " |")
            multi = {t["task_id"] for t in spec["tasks"] if len(t["files"]) > 1}
            for row in report.rows:
                if row.task_id in multi:
                    got = two_file.setdefault((spec["set"], row.strategy, row.budget), [0, 0])
                    got[0] += row.answer_present
                    got[1] += 1
        for which in sorted({k[0] for k in totals}):
            print(f"\n### {which}: answer present, all corpora\n")
            print("| budget | " + " | ".join(strategies) + " |")
            print("|---:|" + "---:|" * len(strategies))
            for budget in sorted({k[2] for k in totals if k[0] == which}):
                cells = [f"{totals[(which, s, budget)][0]}/{totals[(which, s, budget)][1]}"
                         for s in strategies]
                print(f"| {budget} | " + " | ".join(cells) + " |")
            if not any(k[0] == which for k in two_file):
                continue
            print(f"\n### {which}: answer present, tasks with evidence in two files\n")
            print("| budget | " + " | ".join(strategies) + " |")
            print("|---:|" + "---:|" * len(strategies))
            for budget in sorted({k[2] for k in two_file if k[0] == which}):
                cells = [f"{two_file[(which, s, budget)][0]}/{two_file[(which, s, budget)][1]}"
                         for s in strategies]
                print(f"| {budget} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
