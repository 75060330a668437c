"""A run under a preregistered sequential design: it stops at a look, resumes across a
SIGKILL, and records each trial once; a changed design is refused on resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxbench.core import InputError, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.schemas import validator
from ctxbench.testing.loopback import LoopbackServer

_NAMES = ["Alice", "Bruno", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana"]
_PREREG = ('protocol_version = "entroly-cef-1"\nbaseline = "full_permitted_context"\n'
           'quality_tolerance = 0.05\nbootstrap_samples = 1000\nseed = 5\n\n'
           '[sequential]\nevery = 20\nmax_tasks = 60\nmethod = "pocock"\nfutility = false\n')


def _write(tmp: Path, *, model: str, limits: str = "") -> Path:
    """60 tasks whose answer sits after 25 notes: truncating the head loses the evidence."""
    rows = []
    for i in range(60):
        notes = " ".join(f"Note {j}: shelf {j} holds routine records of week {j}."
                         for j in range(25))
        name = f"{_NAMES[i % 10]}{i}"
        rows.append({"_id": f"q{i:02d}", "input": f"Who rotated signing key K{i}?",
                     "context": f"{notes} The signing key K{i} was rotated by {name}.",
                     "answers": [name]})
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp / "prereg.toml").write_text(_PREREG)
    spec = tmp / "exp.toml"
    pricing = "" if "fixture" in model else 'pricing = "self_hosted"\n'
    spec.write_text(
        'name = "seq"\nseed = 11\nreplicates = 1\noutput = "out"\n'
        f'{pricing}\n'
        '[workload]\nsource = "qa.jsonl"\n\n'
        f'[model]\n{model}max_output_tokens = 16\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "truncate-head"\nbudgets = [120]\n\n'
        f'[cef]\npreregistration = "prereg.toml"\n{limits}')
    return spec


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_stops_at_a_look_resumes_across_a_kill_and_records_each_trial_once(
        tmp_path: Path) -> None:
    with LoopbackServer(delay_s=0.05) as server:
        spec = _write(tmp_path, model=f'provider = "openai"\nmodel = "loop"\n'
                                      f'base_url = "{server.base_url}"\n',
                      limits="\n[limits]\nconcurrency = 2\nretries = 0\n")
        trials = tmp_path / "out" / "trials.jsonl"
        args = [sys.executable, "-m", "ctxbench", "run", str(spec), "--no-progress"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 120
        while _lines(trials) < 12 and proc.poll() is None:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.005)
        assert proc.poll() is None, "the run ended before the kill"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        killed_at = _lines(trials)
        assert 12 <= killed_at < 40
        assert not (tmp_path / "out" / "sequential.json").exists()  # no look taken yet
        done = subprocess.run([*args, "--resume"], check=False, capture_output=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        out = done.stdout.decode()
        assert "sequential: truncate-head@120: loss shown at 20 of 60 tasks" in out
        assert "80 planned trials not run" in out
        records = [item.value for item in iter_jsonl(trials)]
        keys = [(r["task_id"], r["condition"], r["replicate"]) for r in records]
        # Every trial of the first look's 20 tasks, each once; nothing of later looks.
        assert len(keys) == len(set(keys)) == 40
        assert len({k[0] for k in keys}) == 20
        requested_after_kill = len(server.requests)
        again = subprocess.run([*args, "--resume"], check=False, capture_output=True, env=env,
                               timeout=300)
        assert again.returncode == 0 and "loss shown at 20 of 60 tasks" in again.stdout.decode()
        assert len(server.requests) == requested_after_kill  # nothing sent twice
    doc = json.loads((tmp_path / "out" / "sequential.json").read_text())
    validator("ctxbench.cef-sequential.v1").validate(doc)
    assert doc["stopped_at_tasks"] == 20 and doc["trials_saved"] == 80
    look = doc["conditions"]["truncate-head@120"]["looks"][0]
    assert look["tasks"] == 20 and look["gates"]["H2"]["decision"] == "loss_shown"


def test_the_tasks_follow_the_preregistered_order(tmp_path: Path) -> None:
    spec = _write(tmp_path, model='provider = "fixture"\n')
    run_experiment(spec)
    ids = [r.value["task_id"] for r in iter_jsonl(tmp_path / "out" / "trials.jsonl")]
    first = list(dict.fromkeys(ids))
    assert len(first) == 20 and first != sorted(first)
    # Every condition and replicate of a task together.
    assert all(ids[2 * i] == ids[2 * i + 1] for i in range(20))


def test_a_design_changed_after_the_first_look_is_refused(tmp_path: Path) -> None:
    spec = _write(tmp_path, model='provider = "fixture"\n')
    run_experiment(spec)
    (tmp_path / "prereg.toml").write_text(_PREREG.replace("every = 20", "every = 30"))
    with pytest.raises(InputError, match=r"prereg.toml: sequential: the preregistration "
                       r"changed since this run's first look"):
        run_experiment(spec, resume=True)


def test_max_tasks_above_the_workload_is_refused(tmp_path: Path) -> None:
    spec = _write(tmp_path, model='provider = "fixture"\n')
    (tmp_path / "prereg.toml").write_text(_PREREG.replace("max_tasks = 60", "max_tasks = 80"))
    with pytest.raises(InputError, match=r"sequential: max_tasks: expected at most the "
                       r"workload's 60 tasks, got 80"):
        run_experiment(spec)
