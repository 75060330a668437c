"""The Ray backend on a real local Ray cluster: same trials as asyncio, worker and driver
kills, the spec's [execution] table, and the embedded model on a Ray worker."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import InputError, derive_seed, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.spec import load_spec
from ctxbench.schemas import validator
from ctxbench.testing.loopback import LoopbackServer

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ctxbench[ray]')")

# Fields that measure time (or name the spec file's bytes, which differ by [execution]).
_VARYING = {"latency_ms", "compile_ms", "run_id"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster with 2 CPUs for the module; yields its GCS address."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def _rows(n: int) -> list[dict[str, object]]:
    return [{"_id": f"q{i}", "input": f"Which port does service {i} use?",
             "context": f"Service {i} listens on port {8000 + i}. Metrics use port 9100.",
             "answers": [str(8000 + i)]} for i in range(n)]


def _spec(tmp: Path, *, name: str = "exp.toml", model: str = 'provider = "fixture"',
          execution: str = "", tasks: int = 2, replicates: int = 2,
          limits: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows(tasks)),
                                  encoding="utf-8")
    pricing = "" if "fixture" in model else 'pricing = "self_hosted"\n'
    text = (f'name = "ray-test"\nseed = 11\nreplicates = {replicates}\noutput = "out"\n'
            f'{pricing}\n[workload]\nsource = "qa.jsonl"\n\n[model]\n{model}\n'
            "max_output_tokens = 16\n\n"
            '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
            '[[conditions]]\nstrategy = "compiled"\nbudgets = [200, 400]\n\n'
            f"{limits}\n{execution}\n")
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def _records(out: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    for item in iter_jsonl(out / "trials.jsonl"):
        record = item.value
        key = (record["task_id"], record["condition"], record["replicate"])
        assert key not in records, f"trial {key} recorded twice"
        records[key] = record
    return records


def _without_timing(record: dict[str, Any], also: frozenset[str] = frozenset()
                    ) -> dict[str, Any]:
    varying = _VARYING | also
    kept = {k: v for k, v in record.items() if k not in varying}
    kept["attempts"] = [{k: v for k, v in a.items() if k not in varying}
                        for a in record["attempts"]]
    if str(kept.get("provider_request_id")).startswith("unavailable:"):
        kept["provider_request_id"] = "unavailable"  # a hash over the run id
    return kept


def _ray_table(address: str, workers: int = 2) -> str:
    return (f'[execution]\nbackend = "ray"\naddress = "{address}"\nworkers = {workers}\n'
            "num_cpus = 0\n")


def _assert_same_trials(local_out: Path, ray_out: Path,
                        also: frozenset[str] = frozenset()) -> None:
    local, remote = _records(local_out), _records(ray_out)
    assert local.keys() == remote.keys()
    for key, record in local.items():
        assert _without_timing(record, also) == _without_timing(remote[key], also), key


def test_fixture_trials_match_the_asyncio_backend(tmp_path: Path, cluster: str) -> None:
    local = run_experiment(_spec(tmp_path / "local", tasks=3))
    remote = run_experiment(_spec(tmp_path / "ray", tasks=3, execution=_ray_table(cluster)))
    assert local.completed == remote.completed == 18
    _assert_same_trials(tmp_path / "local" / "out", tmp_path / "ray" / "out")
    manifest = json.loads((tmp_path / "ray" / "out" / "manifest.json").read_text("utf-8"))
    assert not list(validator("ctxbench.run-manifest.v1").iter_errors(manifest))
    (session,) = manifest["execution"]["sessions"]
    assert session["workers"] == 2
    assert sum(w["trials"] for w in session["per_worker"]) == 18
    assert all(w["errors"] == 0 and w["lost_trials"] == 0 for w in session["per_worker"])
    local_manifest = json.loads((tmp_path / "local" / "out" / "manifest.json")
                                .read_text("utf-8"))
    assert local_manifest["execution"] == {"backend": "local", "sessions": []}
    # The reports are computed from the trials alone, so they agree too.
    assert remote.verdicts == local.verdicts


def test_loopback_trials_match_the_asyncio_backend(tmp_path: Path, cluster: str) -> None:
    with LoopbackServer() as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        run_experiment(_spec(tmp_path / "local", model=model))
        local_seeds = sorted(r.seed for r in server.requests if r.seed is not None)
        run_experiment(_spec(tmp_path / "ray", model=model, execution=_ray_table(cluster)))
        all_seeds = sorted(r.seed for r in server.requests if r.seed is not None)
    # The server numbers requests in arrival order: its request ids say when, not what.
    _assert_same_trials(tmp_path / "local" / "out", tmp_path / "ray" / "out",
                        frozenset({"provider_request_id"}))
    # Every request of the Ray run carried the same per-trial seed as the local run's.
    assert all_seeds == sorted(local_seeds * 2)


def test_the_driver_compiles_no_context_and_writes_the_same_eceb_run(
        tmp_path: Path, cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The workers build every context; the driver writes the reports from the trial log
    # alone, so it builds none, on the run and on a resume of the finished run.
    from .test_reports_pure import Compilations, seed_spec

    run_experiment(seed_spec(tmp_path / "local"))
    count = Compilations(monkeypatch)
    remote = run_experiment(seed_spec(tmp_path / "ray", _ray_table(cluster)))
    assert remote.completed > 0 and "eceb-run.json" in remote.reports
    again = run_experiment(seed_spec(tmp_path / "ray", _ray_table(cluster)), resume=True)
    assert again.completed == 0 and again.skipped == remote.completed
    assert count.total == count.in_reports == 0

    def observations(out: Path) -> list[dict[str, Any]]:
        # In the order the log recorded them, which differs between the backends.
        doc = json.loads((out / "eceb-run.json").read_text(encoding="utf-8"))
        return sorted(({k: v for k, v in o.items() if k != "latency_ms"}
                       for o in doc["observations"]),
                      key=lambda o: (o["task_id"], o["strategy"], o["budget"] or 0))

    local = observations(tmp_path / "local" / "out")
    assert local and observations(tmp_path / "ray" / "out") == local


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_rate_limit_is_one_for_the_whole_cluster(tmp_path: Path, cluster: str) -> None:
    # 12 requests at 6 per minute, 4 workers: with one cluster-wide window the first 6
    # go at once and the rest wait for the window to move (about 60 s); with a limiter
    # per worker all 12 would go at once.
    with LoopbackServer() as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        spec = _spec(tmp_path, model=model, execution=_ray_table(cluster, workers=4),
                     tasks=2, replicates=2, limits="[limits]\nrequests_per_minute = 6\n"
                     "concurrency = 8\n")
        seen_early: list[int] = []

        def watch() -> None:
            time.sleep(30)
            seen_early.append(len(server.requests))

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        started = time.monotonic()
        summary = run_experiment(spec)
        elapsed = time.monotonic() - started
        watcher.join(60)
    assert summary.completed == 12
    assert seen_early == [6]
    assert elapsed >= 55


def test_execution_table_is_validated(tmp_path: Path) -> None:
    bad = _spec(tmp_path, execution='[execution]\nbackend = "local"\nworkers = 2\n')
    with pytest.raises(InputError, match=r"\[execution\]\.workers: expected no Ray option"):
        load_spec(bad)
    bad = _spec(tmp_path, execution='[execution]\nbackend = "slurm"\n')
    with pytest.raises(InputError, match=r"\[execution\]\.backend: expected one of local, ray"):
        load_spec(bad)
    bad = _spec(tmp_path, execution='[execution]\nbackend = "ray"\naddress = "auto"\n'
                "local_num_cpus = 2\n")
    with pytest.raises(InputError, match="no local_num_cpus with an address other than \"local\""):
        load_spec(bad)
    bad = _spec(tmp_path, execution='[execution]\nbackend = "ray"\nworkers = 0\n')
    with pytest.raises(InputError, match=r"\[execution\]\.workers"):
        load_spec(bad)
    spec = load_spec(_spec(tmp_path, execution='[execution]\nbackend = "ray"\nworkers = 3\n'
                           "num_gpus = 0.5\nmemory_mb = 512\n"))
    assert (spec.execution.backend, spec.execution.workers, spec.execution.num_gpus,
            spec.execution.memory_mb) == ("ray", 3, 0.5, 512)


def _worker_pids(prefix: bytes = b"ray::_ProviderWorker") -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(prefix):
            pids.append(int(entry.name))
    return pids


def _seed_of(key: tuple[str, str, int]) -> int:
    return derive_seed(11, "request", key[0], key[1], str(key[2])) % 2**31


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_workers_lose_and_resend_nothing(tmp_path: Path, cluster: str) -> None:
    rng = random.Random(20261201)
    kills: list[int] = []
    with LoopbackServer(delay_s=0.25) as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        spec = _spec(tmp_path, model=model, execution=_ray_table(cluster, workers=3),
                     tasks=40, replicates=2, limits="[limits]\nconcurrency = 6\n")
        stop = threading.Event()

        def killer() -> None:
            while len(kills) < 10 and not stop.is_set():
                time.sleep(rng.uniform(0.3, 1.5))
                pids = _worker_pids()
                if pids:
                    pid = rng.choice(pids)
                    try:
                        os.kill(pid, signal.SIGKILL)
                        kills.append(pid)
                    except ProcessLookupError:
                        pass

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        summary = run_experiment(spec)
        stop.set()
        thread.join(10)
        by_seed = Counter(r.seed for r in server.requests)
    assert len(kills) == 10, f"the run ended after {len(kills)} kills"
    records = _records(tmp_path / "out")
    assert summary.completed == len(records) == 40 * 3 * 2
    lost = 0
    for key, record in records.items():
        sent = by_seed[_seed_of(key)]
        attempts = record["attempts"]
        if any(a["error_type"] == "worker_lost" for a in attempts):
            lost += 1
            # Counted as sent once it passed the limiter; the server may not have seen it.
            assert sent <= len(attempts), key
        else:
            assert sent == len(attempts), (key, sent, attempts)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    (session,) = manifest["execution"]["sessions"]
    assert sum(w["lost_trials"] for w in session["per_worker"]) == lost
    assert sum(w["trials"] for w in session["per_worker"]) + lost == len(records)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_driver_resumes_without_loss_or_resend(tmp_path: Path, cluster: str) -> None:
    rng = random.Random(5)
    with LoopbackServer(delay_s=0.1) as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        spec = _spec(tmp_path, model=model, execution=_ray_table(cluster, workers=2),
                     tasks=30, replicates=2, limits="[limits]\nconcurrency = 4\n")
        trials_path = tmp_path / "out" / "trials.jsonl"
        frozen: dict[int, int] = {}  # request counts of trials recorded before a kill
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "ctxbench", "run", str(spec)]
        for kill in range(5):
            proc = subprocess.Popen(command + (["--resume"] if kill else []), env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            recorded_before = _line_count(trials_path)
            deadline = time.monotonic() + 240
            while _line_count(trials_path) < recorded_before + 3:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "no trial was recorded in 240 s"
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 1.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            counts = Counter(r.seed for r in server.requests)
            for key in _records(tmp_path / "out"):
                frozen.setdefault(_seed_of(key), counts[_seed_of(key)])
        finished = subprocess.run([*command, "--resume"], env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
        assert finished.returncode == 0, finished.stderr
        counts = Counter(r.seed for r in server.requests)
    records = _records(tmp_path / "out")
    assert len(records) == 30 * 3 * 2
    resent = {seed: (n, counts[seed]) for seed, n in frozen.items() if counts[seed] != n}
    assert not resent, resent
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    # Only the last driver lived to write its session.
    assert len(manifest["execution"]["sessions"]) == 1


def _line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.local_model
@pytest.mark.timeout(900)
def test_embedded_model_runs_the_demo_workload_on_ray(tmp_path: Path, cluster: str,
                                                      embedded_gguf: Path) -> None:
    from ctxbench.runner.demo import demo_spec_text

    # The demo's own spec (its handbook workload and model settings), a slice of 2 tasks
    # with one replicate, on one Ray worker that loads the model once.
    text = demo_spec_text("llamacpp", replicates=1, max_output_tokens=24, concurrency=2,
                          tasks=2)
    text = text.replace('[cef]\npreregistration = "demo-prereg.json"\n', "")
    spec = tmp_path / "exp.toml"
    spec.write_text(text + f'\n[execution]\nbackend = "ray"\naddress = "{cluster}"\n'
                    "workers = 1\nnum_cpus = 1\n", encoding="utf-8")
    summary = run_experiment(spec)
    records = _records(tmp_path / "run")
    assert summary.completed == len(records) == summary.planned
    assert {r["outcome"] for r in records.values()} == {"success"}
    assert {r["usage_source"] for r in records.values()} == {"provider_response"}
    assert all(r["context_tokens"] > 0 for r in records.values())
    assert {"cef-report.json", "eceb-report.json"} <= set(summary.reports)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    (session,) = manifest["execution"]["sessions"]
    assert session["per_worker"][0]["trials"] == len(records)


def test_no_ray_import_unless_chosen(tmp_path: Path) -> None:
    code = ("import sys\nfrom ctxbench.runner.experiment import run_experiment\n"
            f"run_experiment({str(_spec(tmp_path))!r})\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr



def _wait_for_lines(proc: subprocess.Popen[bytes], path: Path, count: int) -> None:
    deadline = time.monotonic() + 240
    while _line_count(path) < count:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, f"{count} trials were not recorded in 240 s"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_coordinator_worker_and_driver_then_resume(tmp_path: Path,
                                                          cluster: str) -> None:
    # Kill the coordinator, then a worker, then the driver, each after trials have been
    # recorded; then resume: every trial once, as the asyncio backend records it.
    with LoopbackServer(delay_s=0.2) as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        limits = "[limits]\nconcurrency = 4\n"
        local = run_experiment(_spec(tmp_path / "local", model=model, tasks=20,
                                     limits=limits))
        assert local.completed == 120
        by_local = Counter(r.seed for r in server.requests)
        spec = _spec(tmp_path / "ray", model=model, execution=_ray_table(cluster),
                     tasks=20, limits=limits)
        trials_path = tmp_path / "ray" / "out" / "trials.jsonl"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "ctxbench", "run", str(spec), "--no-progress"]
        before_kill: dict[tuple[str, str, int], int] = {}  # requests of recorded trials

        def freeze() -> None:
            counts = Counter(r.seed for r in server.requests)
            for key in _records(tmp_path / "ray" / "out"):
                before_kill.setdefault(key, counts[_seed_of(key)])

        # 1. The coordinator: the run stops with exit 3 and the resume command.
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _wait_for_lines(proc, trials_path, 3)
        coordinators = _worker_pids(b"ray::_Coordinator")
        assert coordinators, "no coordinator actor process was found"
        for pid in coordinators:  # this run's (an earlier run's is killed at its end)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        text = err.decode()
        assert proc.returncode == 3, text
        # Ray's own native log lines may come first; ctxbench's error is the last line.
        last = text.strip().splitlines()[-1]
        assert last.startswith("ctxbench: ") or "Traceback" not in text, text
        assert "the Ray coordinator" in last and "is gone" in last, text
        assert last.endswith("--resume)") and "resume with: ctxbench run" in last, text
        stopped_at = _line_count(trials_path)
        assert stopped_at < 120
        records = _records(tmp_path / "ray" / "out")
        assert not [k for k, r in records.items() if r["outcome"] == "error"], \
            "a trial that was never sent was recorded as a failure"
        # Every trial it did not record was never sent (those in flight finished first).
        by_ray = Counter(r.seed for r in server.requests) - by_local
        planned = _records(tmp_path / "local" / "out").keys()
        assert not [k for k in planned - records.keys() if by_ray[_seed_of(k)]]
        freeze()
        # 2. A worker, during a resumed run (the run goes on); 3. then its driver.
        proc = subprocess.Popen([*command, "--resume"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _wait_for_lines(proc, trials_path, stopped_at + 3)
        os.kill(random.Random(3).choice(_worker_pids()), signal.SIGKILL)
        freeze()
        _wait_for_lines(proc, trials_path, _line_count(trials_path) + 3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        freeze()
        finished = subprocess.run([*command, "--resume"], env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
        assert finished.returncode == 0, finished.stderr
        counts = Counter(r.seed for r in server.requests)
    records = _records(tmp_path / "ray" / "out")
    assert len(records) == 120
    resent = {k: (n, counts[_seed_of(k)]) for k, n in before_kill.items()
              if counts[_seed_of(k)] != n}
    assert not resent, resent
    local_records = _records(tmp_path / "local" / "out")
    lost = {k for k, r in records.items()
            if any(a["error_type"] == "worker_lost" for a in r["attempts"])}
    for key, record in records.items():
        if key in lost:  # sent by the killed worker: a failure, never resent
            assert {a["error_type"] for a in record["attempts"]} == {"worker_lost"}
            continue
        assert _without_timing(record, frozenset({"provider_request_id"})) == \
            _without_timing(local_records[key], frozenset({"provider_request_id"})), key


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text("utf-8")
        except OSError:
            continue
        children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_private_cluster_whatever_ray_address_says_and_its_death_stops_the_run(
        tmp_path: Path) -> None:
    # No address: a private cluster, though RAY_ADDRESS names a cluster that is not there
    # (attaching to it would fail). Then that whole cluster dies under the driver.
    with LoopbackServer(delay_s=0.2) as server:
        model = f'provider = "openai"\nmodel = "loop"\nbase_url = "{server.base_url}"'
        spec = _spec(tmp_path, model=model, tasks=20, limits="[limits]\nconcurrency = 4\n",
                     execution='[execution]\nbackend = "ray"\nworkers = 2\nnum_cpus = 0\n'
                     "local_num_cpus = 1\n")
        trials_path = tmp_path / "out" / "trials.jsonl"
        env = dict(os.environ, PYTHONUNBUFFERED="1", RAY_ADDRESS="127.0.0.1:9")
        command = [sys.executable, "-m", "ctxbench", "run", str(spec), "--no-progress"]
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _wait_for_lines(proc, trials_path, 3)
        for pid in _descendants(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        text = err.decode()
        assert proc.returncode == 3, text
        last = text.strip().splitlines()[-1]
        assert "Traceback" not in text, text
        assert "the Ray cluster stopped answering" in last, text
        assert last.endswith("--resume)") and "resume with: ctxbench run" in last, text
        stopped_at = _line_count(trials_path)
        assert stopped_at < 120
        finished = subprocess.run([*command, "--resume"], env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
        assert finished.returncode == 0, finished.stderr
    records = _records(tmp_path / "out")
    assert len(records) == 120
    assert {r["outcome"] for r in records.values()} == {"success"}


def test_ray_client_address_without_ray_client_names_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from ctxbench.runner.execution import ExecutionSpec
    from ctxbench.runner.ray_cluster import connect

    class NotStarted:
        def is_initialized(self) -> bool:
            return False

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "grpc" else real(name, *a))
    with pytest.raises(InputError, match=r'\[execution\]\.address: "ray://head:10001" needs '
                       r"Ray Client \(ray\[client\]\), which is not installed; install it "
                       r"with: pip install 'ctxbench\[ray\]'"):
        connect(NotStarted(), ExecutionSpec(backend="ray", address="ray://head:10001"),
                install_hint="pip install 'ctxbench[ray]'")


class _FakeRay:
    """Records what ``ray.init`` was called with, and what RAY_ADDRESS was then."""

    class exceptions:  # noqa: N801 - the shape of the ray module
        RayError = type("RayError", (Exception,), {})

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls: list[tuple[dict[str, Any], str | None]] = []
        self.fail = fail

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: Any) -> None:
        self.calls.append((kwargs, os.environ.get("RAY_ADDRESS")))
        if self.fail is not None:
            raise self.fail


@pytest.mark.parametrize("address", [None, "local"])
def test_no_address_or_local_starts_a_private_cluster_whatever_the_environment(
        monkeypatch: pytest.MonkeyPatch, address: str | None) -> None:
    from ctxbench.runner.execution import ExecutionSpec
    from ctxbench.runner.ray_cluster import connect

    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    fake = _FakeRay()
    owned = connect(fake, ExecutionSpec(backend="ray", address=address, local_num_cpus=3),
                    install_hint="pip install 'ctxbench[ray]'")
    ((kwargs, env_during_init),) = fake.calls
    assert owned and kwargs["address"] == "local" and kwargs["num_cpus"] == 3
    assert env_during_init is None
    assert os.environ["RAY_ADDRESS"] == "10.0.0.1:6379"  # given back afterwards


def test_an_unreachable_cluster_says_which_and_mentions_token_auth(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.core import RuntimeFailure
    from ctxbench.runner.execution import ExecutionSpec
    from ctxbench.runner.ray_cluster import connect

    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    fake = _FakeRay(fail=ConnectionError("Could not find any running Ray instance.\n"
                                         "Timed out after 20 s"))
    with pytest.raises(RuntimeFailure, match=r"\[execution\]: cannot reach the Ray cluster "
                       r"\(10\.0\.0\.1:6379\): Timed out after 20 s; if the cluster uses "
                       r"token authentication, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN"):
        connect(fake, ExecutionSpec(backend="ray", address="10.0.0.1:6379"),
                install_hint="pip install 'ctxbench[ray]'")
    ((kwargs, _),) = fake.calls
    assert kwargs["address"] == "10.0.0.1:6379" and "num_cpus" not in kwargs


def test_gcs_watch_declares_a_loss_only_after_it_saw_the_gcs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import socket

    from ctxbench.runner import ray_cluster

    monkeypatch.setattr(ray_cluster, "GCS_LOST_S", 0.3)
    monkeypatch.setattr(ray_cluster, "_PROBE_EVERY_S", 0.05)

    class Context:
        def __init__(self, address: str) -> None:
            self.gcs_address = address

    class Fake:
        def __init__(self, address: str) -> None:
            self.address = address

        def get_runtime_context(self) -> Context:
            return Context(self.address)

    async def watch(address: str, *, close: socket.socket | None, client: bool = False,
                    polls: int = 100) -> ray_cluster.ClusterLost | None:
        watcher = ray_cluster.GcsWatch(Fake(address), client=client)
        watcher.start()
        await asyncio.sleep(0.3)  # a few probes while the listener is up
        if close is not None:
            close.close()
        for _ in range(polls):  # up to polls / 20 s for the loss to be declared
            if watcher.error() is not None:
                break
            await asyncio.sleep(0.05)
        watcher.stop()
        return watcher.error()

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    lost = asyncio.run(watch(f"127.0.0.1:{port}", close=listener))
    assert lost is not None and f"no connection to its GCS at 127.0.0.1:{port} for 0.3 s" \
        in str(lost)
    # Never reachable from here (as a cluster's internal address can be): never "lost";
    # nor under Ray Client, where nothing is probed.
    # (1 s each: over three times the loss threshold.)
    assert asyncio.run(watch(f"127.0.0.1:{port}", close=None, polls=20)) is None
    assert asyncio.run(watch(f"127.0.0.1:{port}", close=None, client=True, polls=20)) is None


def test_starting_asks_again_an_actor_ray_calls_temporarily_unavailable() -> None:
    # A fresh clone's `make slow` once stopped at "a Ray worker failed to start: The actor
    # ... is temporarily unavailable: ... Connection reset by peer" while the node's
    # workers were starting; the start-up calls are asked again instead.
    from ctxbench.core import RuntimeFailure
    from ctxbench.runner.ray_backend import start_actors

    class Unavailable(Exception):
        pass

    class Fake:
        class exceptions:  # noqa: N801 - the shape of the ray module
            RayError = Exception
            RayTaskError = type("RayTaskError", (Exception,), {})
            ActorUnavailableError = Unavailable

    answers: list[list[object]] = []

    def ask() -> list[object]:
        answers.append([])
        if len(answers) < 3:
            raise Unavailable("The actor is temporarily unavailable: RpcError")
        return [("pid", "identity")]

    assert start_actors(Fake, ask, retry_s=10.0, pause_s=0.0) == [("pid", "identity")]
    assert len(answers) == 3

    def never() -> list[object]:
        raise Unavailable("The actor is temporarily unavailable: RpcError")

    with pytest.raises(RuntimeFailure, match=r"\[execution\]: a Ray worker failed to start: "
                       r"The actor is temporarily unavailable: RpcError"):
        start_actors(Fake, never, retry_s=0.0, pause_s=0.0)

    def broken() -> list[object]:
        raise ValueError("no such model")

    with pytest.raises(RuntimeFailure, match="no such model"):
        start_actors(Fake, broken, retry_s=10.0, pause_s=0.0)


def test_ray_run_keeps_the_packets_of_the_asyncio_backend(tmp_path: Path, cluster: str
                                                          ) -> None:
    run_experiment(_spec(tmp_path / "local", tasks=3))
    run_experiment(_spec(tmp_path / "ray", tasks=3, execution=_ray_table(cluster)))

    def store(out: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in (out / "packets").iterdir()}

    local, remote = store(tmp_path / "local" / "out"), store(tmp_path / "ray" / "out")
    assert local and local == remote
    assert {f"{r['context_sha256']}.txt" for r in _records(tmp_path / "ray" / "out").values()
            } == set(remote)
