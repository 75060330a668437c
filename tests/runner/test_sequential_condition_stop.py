"""A condition decided at a look stops there while the others go on: its later tasks are
not run, the reports pair it over the tasks it ran, and --resume keeps the decision."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.core import iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.schemas import validator

_NAMES = ["Alice", "Bruno", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana"]
_PREREG = ('protocol_version = "entroly-cef-1"\nbaseline = "full_permitted_context"\n'
           'quality_tolerance = 0.05\nbootstrap_samples = 1000\nseed = 5\n\n'
           '[sequential]\nevery = 20\nmax_tasks = 60\nmethod = "pocock"\nfutility = false\n')
HEAD, TAIL = "truncate-head@140", "truncate-tail@140"


def _write(tmp: Path) -> Path:
    """60 tasks, one answer line among 25 note lines: at the end on 57 tasks, first on 3.

    Keeping the tail (truncate-head) keeps the answer on 57 tasks, at the margin of the
    5% tolerance, so it is not decided at the first look; keeping the head
    (truncate-tail) loses it on 57, a loss shown at the first look.
    """
    rows = []
    for i in range(60):
        notes = [f"Note {j}: shelf {j} holds routine records of week {j}." for j in range(25)]
        name = f"{_NAMES[i % 10]}{i}"
        fact = f"The signing key K{i} was rotated by {name}."
        lines = [fact, *notes] if i % 20 == 7 else [*notes, fact]
        rows.append({"_id": f"q{i:02d}", "input": f"Who rotated signing key K{i}?",
                     "context": "\n".join(lines), "answers": [name]})
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp / "prereg.toml").write_text(_PREREG)
    spec = tmp / "exp.toml"
    spec.write_text(
        'name = "seq"\nseed = 11\nreplicates = 1\noutput = "out"\n\n'
        '[workload]\nsource = "qa.jsonl"\n\n'
        '[model]\nprovider = "fixture"\nmax_output_tokens = 16\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "truncate-head"\nbudgets = [140]\n\n'
        '[[conditions]]\nstrategy = "truncate-tail"\nbudgets = [140]\n\n'
        '[cef]\npreregistration = "prereg.toml"\n')
    return spec


def _tasks(trials: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in iter_jsonl(trials):
        out.setdefault(item.value["condition"], []).append(item.value["task_id"])
    return out


def test_a_decided_condition_stops_while_the_others_go_on_and_resume_keeps_it(
        tmp_path: Path) -> None:
    spec = _write(tmp_path)
    out = tmp_path / "out"
    summary = run_experiment(spec)
    trials = out / "trials.jsonl"
    tasks = _tasks(trials)
    # The condition decided at look 1 ran the first look's 20 tasks only; the others 60.
    assert len(tasks[TAIL]) == len(set(tasks[TAIL])) == 20
    assert len(tasks[HEAD]) == len(set(tasks[HEAD])) == 60
    assert len(tasks["full_permitted_context"]) == 60
    assert set(tasks[TAIL]) == set(tasks["full_permitted_context"][:20])
    doc = json.loads((out / "sequential.json").read_text())
    validator("ctxbench.cef-sequential.v1").validate(doc)
    tail, head = doc["conditions"][TAIL], doc["conditions"][HEAD]
    assert (tail["decision"], tail["decided_at_look"], tail["decided_at_tasks"]) == (
        "loss_shown", 1, 20)
    assert [look["decision"] for look in tail["looks"]] == ["loss_shown"]
    assert head["decided_at_look"] == 3 and head["looks"][0]["decision"] == "continue"
    assert tail["trials_saved"] == 40 and head["trials_saved"] == 0
    assert doc["trials_saved"] == 40 and doc["trials_at_max"] == 180
    assert (f"sequential: {TAIL}: loss shown at 20 of 60 tasks (look 1); stopped there: "
            "40 trials, 0.000000 USD not run") in summary.verdicts
    assert "sequential: 40 planned trials of the conditions decided early not run " \
           "(sequential.json)" in summary.verdicts
    # The fixed report pairs each comparison over the tasks both conditions hold.
    report = json.loads((out / "cef-report.json").read_text())
    units = {c["condition"]: c["paired_units"] for c in report["aggregate"]["comparisons"]}
    assert units == {HEAD: 60, TAIL: 20}
    points = {p["condition"]: p["trials"] for p in report["aggregate"]["operating_points"]}
    assert points[TAIL] == 20
    assert any(c.startswith(f"{TAIL} holds 20 of 60 paired units: under the "
                            "preregistered sequential design") for c in report["caveats"])

    # A run killed after the first look resumes with the decision kept: the stopped
    # condition runs nothing more, every trial is recorded once.
    lines = trials.read_bytes().splitlines(keepends=True)
    first_look = set(tasks[TAIL])
    kept = [ln for ln in lines if json.loads(ln)["task_id"] in first_look]
    assert len(kept) == 60
    later = [ln for ln in lines if ln not in kept][:7]
    trials.write_bytes(b"".join(kept + later))
    (out / "sequential.json").unlink()
    resumed = run_experiment(spec, resume=True)
    again = _tasks(trials)
    assert {c: sorted(t) for c, t in again.items()} == {c: sorted(t) for c, t in tasks.items()}
    records = [item.value for item in iter_jsonl(trials)]
    keys = [(r["task_id"], r["condition"], r["replicate"]) for r in records]
    assert len(keys) == len(set(keys)) == 140
    assert json.loads((out / "sequential.json").read_text()) == doc
    assert [v for v in resumed.verdicts if v.startswith("sequential")] == [
        v for v in summary.verdicts if v.startswith("sequential")]
