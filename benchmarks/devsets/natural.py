"""Corpora of questions written by hand as people ask them (see README.md here).

Each ``natural/<corpus>.json`` names the installed distributions its corpus is made of and
its tasks: a question and the exact evidence lines (file, stripped line text) that answer
it, often in two files (a setting and its default, a definition and its use, a policy and
its exception). ``spec`` checks every evidence line against the installed file and writes
``specs/<corpus>.json`` in the format ``devset.py build`` reads (files with SHA-256,
evidence lines as the tasks' evidence markers); ``overlap`` prints, per set, the share of
each question's retrieval terms that occur in its evidence lines (what a lexical
retriever gets for free), and the share of tasks with evidence in two files; given set
names, it prints those sets' corpora one by one, then the set.

    python benchmarks/devsets/natural.py spec [CORPUS ...]
    python benchmarks/devsets/natural.py overlap [SET ...]
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

from devset import LADDER, SPECS, _files

from ctxbench.compiler.retrieval import identifier_terms

HERE = Path(__file__).resolve().parent
NATURAL = HERE / "natural"


def _load(path: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return found


def spec(names: list[str]) -> None:
    """Write specs/<corpus>.json for each hand-written corpus (all when none is named)."""
    for path in sorted(NATURAL.glob("*.json")):
        source = _load(path)
        name = str(source["corpus"])
        if names and name not in names:
            continue
        files: dict[str, tuple[str, Path]] = {}
        for dist_name in source["distributions"]:  # type: ignore[attr-defined]
            dist = metadata.distribution(dist_name)
            for rel, file in _files(dist):
                if ".." not in rel.split("/"):  # installed scripts (../../../bin/jp.py)
                    files[rel] = (f"{dist_name}=={dist.version}", file)
        tasks = []
        for task in source["tasks"]:  # type: ignore[attr-defined]
            holders: list[str] = []
            for rel, line in task["evidence"]:
                if rel not in files:
                    sys.exit(f"{path.name}: {task['task_id']}: {rel}: not a corpus file")
                lines = {x.strip() for x in files[rel][1].read_text(encoding="utf-8")
                         .splitlines()}
                if line not in lines:
                    sys.exit(f"{path.name}: {task['task_id']}: {rel}: no line reads {line!r}")
                if rel not in holders:
                    holders.append(rel)
            markers = list(dict.fromkeys(line for _, line in task["evidence"]))
            if any(m in task["query"] for m in markers):
                sys.exit(f"{path.name}: {task['task_id']}: the query holds an evidence line")
            tasks.append({"query": task["query"], "evidence_markers": markers,
                          "files": sorted(holders), "task_id": task["task_id"],
                          "kind": task["kind"]})
        out = {
            "corpus": name, "set": source["set"], "budget_ladder": LADDER,
            "made": "by hand (benchmarks/devsets/natural.py, natural/" + path.name + ")",
            "files": [{"path": rel, "distribution": d,
                       "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                      for rel, (d, p) in sorted(files.items())],
            "tasks": tasks,
        }
        (SPECS / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {len(files)} files, {len(tasks)} tasks ({source['set']})")


def overlap(sets: list[str]) -> None:
    """Per set (per corpus, then the set, for the ``sets`` named): mean share of a
    question's terms found in its evidence lines, and the share of tasks whose evidence
    is in two files."""
    by_set: dict[str, list[tuple[float, bool]]] = {}
    by_corpus: dict[str, list[tuple[float, bool]]] = {}
    for path in sorted(SPECS.glob("*.json")):
        data = _load(path)
        for task in data["tasks"]:  # type: ignore[attr-defined]
            query = set(identifier_terms(task["query"]))
            evidence = set(identifier_terms(" ".join(task["evidence_markers"])))
            share = len(query & evidence) / len(query) if query else 0.0
            row = (share, len(task["files"]) > 1)
            by_set.setdefault(str(data["set"]), []).append(row)
            if str(data["set"]) in sets:
                by_corpus.setdefault(str(data["corpus"]), []).append(row)
    unknown = sorted(set(sets) - set(by_set))
    if unknown:
        print(f"overlap: expected sets among {', '.join(sorted(by_set))}, got {unknown}",
              file=sys.stderr)
        sys.exit(2)
    shown = [*sorted(by_corpus.items()), *((n, r) for n, r in sorted(by_set.items())
                                            if not sets or n in sets)]
    print("| set or corpus | tasks | question terms found in the evidence lines (mean) "
          "| two-file tasks |")
    print("|---|---:|---:|---:|")
    for name, rows in shown:
        mean = sum(s for s, _ in rows) / len(rows)
        two = sum(t for _, t in rows)
        print(f"| {name} | {len(rows)} | {mean:.1%} | {two} ({two / len(rows):.0%}) |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["spec"]:
        spec(sys.argv[2:])
    elif sys.argv[1:2] == ["overlap"]:
        overlap(sys.argv[2:])
    else:
        sys.exit("usage: natural.py spec [CORPUS ...] | overlap [SET ...]")
