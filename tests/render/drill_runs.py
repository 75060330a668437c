"""Fixture-provider runs for the drill-down and run-diff tests (real trial logs, packets).

Twelve port questions: the answer line comes first, last, or first with a decoy line at
the end; ``truncate-head@150`` keeps the head, so it loses the tasks whose answer is
last. ``moved=True`` moves every answer first (run B of a diff: those tasks recover).
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.runner.experiment import run_experiment

FILLER = "\n".join(f"Note {k}: the archive shelf {k} holds binders about unrelated topics "
                   "such as catering and parking." for k in range(30))


def rows(*, moved: bool = False) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(12):
        answer = f"Service {i} listens on port {8000 + i}."
        decoy = (f"Which port does service {i} use? An outdated wiki page claims service {i} "
                 f"does use port 7{i:03d}.")
        if i % 3 == 0 or moved:
            context = answer + "\n" + FILLER
        elif i % 3 == 1:
            context = FILLER + "\n" + answer
        else:
            context = answer + "\n" + FILLER + "\n" + decoy
        out.append({"_id": f"q{i}", "input": f"Which port does service {i} use?",
                    "context": context, "answers": [answer]})
    return out


def make_run(folder: Path, *, moved: bool = False) -> Path:
    """Run the experiment in ``folder``; return its run directory."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(moved=moved)),
                                     encoding="utf-8")
    spec = folder / "exp.toml"
    spec.write_text(
        'name = "qa-drill"\nseed = 11\nreplicates = 2\noutput = "out"\n\n'
        '[workload]\nsource = "qa.jsonl"\n\n'
        '[model]\nprovider = "fixture"\nmax_output_tokens = 16\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "truncate-head"\nbudgets = [150]\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [150]\n\n'
        '[scoring]\ntask_score = "exact_match"\n', encoding="utf-8")
    return run_experiment(spec).output


def rewrite_trial(run: Path, line: int, **members: object) -> dict[str, object]:
    """Set ``members`` of the trial on ``line`` (1-based) of the run's log; return it."""
    path = run / "trials.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line - 1])
    record.update(members)
    lines[line - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dict(record)
