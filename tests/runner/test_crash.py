"""Crash safety: SIGKILL at random points, then resume; and Ctrl-C (SIGINT) -> exit 130.

The loopback server runs in this test process, so it outlives every killed runner and
sees every request. Each request carries the trial's seed, which names the trial.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ctxbench.core import derive_seed, iter_jsonl
from ctxbench.testing.loopback import LoopbackServer

CONDITIONS = ('[[conditions]]\nstrategy = "full_permitted_context"\n\n'
              '[[conditions]]\nstrategy = "compiled"\nbudgets = [200, 400]\n\n'
              '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = [200]\n')


def complete_lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    data = path.read_bytes()
    good = data[: data.rfind(b"\n") + 1]
    scratch = path.with_name("snapshot.jsonl")
    scratch.write_bytes(good)
    return [item.value for item in iter_jsonl(scratch)]


def seed_of(record: dict[str, object]) -> int:
    return derive_seed(11, "request", str(record["task_id"]), str(record["condition"]),
                       str(record["replicate"])) % 2**31


def start(spec: Path, *, resume: bool) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "ctxbench", "run", str(spec), "--no-progress"]
    if resume:
        args.append("--resume")
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_at_random_points_then_resume(make_spec: Callable[..., Path]) -> None:
    rng = random.Random(20260801)
    with LoopbackServer(delay_s=0.03) as server:
        spec = make_spec(provider="openai", replicates=15, conditions=CONDITIONS,
                         extra_model=f'model = "loop"\nbase_url = "{server.base_url}"\n',
                         limits="[limits]\nconcurrency = 4\nretries = 0\n")
        trials = spec.parent / "out" / "trials.jsonl"
        total = 2 * 4 * 15
        snapshots: list[tuple[int, set[int]]] = []
        kills = 0
        resume = False
        while kills < 6:
            before = line_count(trials)
            target = before + rng.randint(1, max(1, (total - before) // 4))
            proc = start(spec, resume=resume)
            resume = True
            deadline = time.monotonic() + 60
            while line_count(trials) < target and proc.poll() is None:
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.002)
            time.sleep(rng.random() * 0.03)
            if proc.poll() is not None:
                break  # it finished before the kill point
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            kills += 1
            recorded = {seed_of(r) for r in complete_lines(trials)}
            snapshots.append((len(server.requests), recorded))
        final = start(spec, resume=True)
        out, err = final.communicate(timeout=120)
        assert final.returncode == 0, err.decode()
        seen = server.requests
    assert kills >= 5
    records = complete_lines(trials)
    keys = [(r["task_id"], r["condition"], r["replicate"]) for r in records]
    assert len(keys) == total and len(set(keys)) == total
    for count, recorded in snapshots:
        resent = [r for r in seen[count:] if r.seed in recorded]
        assert not resent, f"a recorded trial was sent again: {resent[:3]}"
    assert b"already recorded" in out


def test_ctrl_c_finishes_in_flight_and_exits_130(make_spec: Callable[..., Path]) -> None:
    with LoopbackServer(delay_s=0.3) as server:
        spec = make_spec(provider="openai", replicates=4, conditions=CONDITIONS,
                         extra_model=f'model = "loop"\nbase_url = "{server.base_url}"\n',
                         limits="[limits]\nconcurrency = 3\nretries = 0\n")
        trials = spec.parent / "out" / "trials.jsonl"
        proc = start(spec, resume=False)
        deadline = time.monotonic() + 60
        while line_count(trials) < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        requests = len(server.requests)
    assert proc.returncode == 130
    text = err.decode()
    assert "resume with: ctxbench run " in text and text.rstrip().endswith("--resume")
    records = complete_lines(trials)
    # every request that was in flight finished and was recorded; nothing more was sent
    assert len(records) == requests < 2 * 4 * 4
    assert trials.read_bytes().endswith(b"\n")


def test_second_run_into_the_same_directory_stops_naming_the_holder(
        make_spec: Callable[..., Path]) -> None:
    # 48 trials one at a time; the server holds every answer after the first until the
    # other two runs have been refused, so the first is certainly still running then.
    with LoopbackServer(hold_after=1) as server:
        spec = make_spec(provider="openai", replicates=6, conditions=CONDITIONS,
                         extra_model=f'model = "loop"\nbase_url = "{server.base_url}"\n',
                         limits="[limits]\nconcurrency = 1\nretries = 0\n")
        trials = spec.parent / "out" / "trials.jsonl"
        total = 2 * 4 * 6
        first = start(spec, resume=False)
        deadline = time.monotonic() + 60
        while line_count(trials) < 1:
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        # A plain second run and a --resume one, while the first is still sending.
        second, third = start(spec, resume=False), start(spec, resume=True)
        _, err2 = second.communicate(timeout=120)
        _, err3 = third.communicate(timeout=120)
        assert first.poll() is None, "the first run ended before the others were refused"
        server.release()
        _, err1 = first.communicate(timeout=120)
        sent_by_first = len(server.requests)
        again = start(spec, resume=True)
        out, err = again.communicate(timeout=120)
        sent_after_resume = len(server.requests)
    assert first.returncode == 0, err1.decode()
    for proc, text in ((second, err2), (third, err3)):
        assert proc.returncode == 2
        lines = text.decode().strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in text.decode()
        assert f"another ctxbench run holds this output directory (pid {first.pid} on host " \
            in lines[0]
    records = complete_lines(trials)
    keys = [(r["task_id"], r["condition"], r["replicate"]) for r in records]
    assert len(keys) == total == len(set(keys))
    assert sent_by_first == total  # no request came from the refused runs
    assert again.returncode == 0, err.decode()
    assert sent_after_resume == total and b"0 trial(s) run, 48 already recorded" in out
    assert not (spec.parent / "out" / "run.lock").exists()
