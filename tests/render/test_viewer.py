"""``ctxbench view``: lists runs, serves their pages and files, refreshes a run going on,
refuses traversal and foreign hosts, writes nothing."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxbench.render.html.viewer import REFRESH_S, make_server
from render.drill_runs import make_run


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("view")
    make_run(base / "exp-a")
    make_run(base / "nested" / "exp-b", moved=True)
    (base / "outside.txt").write_text("not a run", encoding="utf-8")
    return base


@pytest.fixture
def served(root: Path) -> Iterator[tuple[Path, int]]:
    server = make_server(root, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def get(port: int, path: str, *, host: str | None = None, method: str = "GET"
        ) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{port}")
    conn.endheaders()
    response = conn.getresponse()
    body = response.read().decode("utf-8")
    conn.close()
    return response.status, dict(response.getheaders()), body


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*")}


def test_index_lists_the_runs_and_serves_their_pages(served: tuple[Path, int]) -> None:
    root, port = served
    before = _snapshot(root)
    status, headers, page = get(port, "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert '<a href="/run/exp-a/out/">exp-a/out</a>' in page
    assert '<a href="/run/nested/exp-b/out/">nested/exp-b/out</a>' in page
    assert page.count("<tr><td><a") == 2 and "finished" in page
    status, _, run = get(port, "/run/exp-a/out/")
    assert status == 200 and 'class="drill"' in run and "Trials" in run
    assert 'http-equiv="refresh"' not in run  # finished: no reload
    # the page's own links resolve on the server: raw files and the packet store
    status, headers, trials = get(port, "/run/exp-a/out/trials.jsonl")
    assert status == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Content-Security-Policy"] == "default-src 'none'"
    first = json.loads(trials.splitlines()[0])
    status, _, packet = get(port, f"/run/exp-a/out/packets/{first['context_sha256']}.txt")
    assert status == 200 and packet == (root / "exp-a" / "out" / "packets" /
                                        f"{first['context_sha256']}.txt").read_text("utf-8")
    assert get(port, "/run/exp-a/out/", method="HEAD")[0] == 200
    assert _snapshot(root) == before  # nothing written


@pytest.mark.parametrize("path", [
    "/run/../outside.txt", "/run/exp-a/../../etc/passwd", "/run/%2e%2e/outside.txt",
    "/run/exp-a/out/..%2f..%2foutside.txt", "/run/exp-a/out/%00trials.jsonl",
    "/run/exp-a/out/link.txt", "/etc/passwd", "/run/exp-a/out/cef-report.html",
    "/run/exp-a/", "/run/%ff/", "/run/outside.txt"])
def test_paths_outside_a_run_are_refused(served: tuple[Path, int], path: str) -> None:
    root, port = served
    link = root / "exp-a" / "out" / "link.txt"
    if not link.exists():
        (root.parent / "beyond.txt").write_text("not a run", encoding="utf-8")
        os.symlink(root.parent / "beyond.txt", link)
    status, _, body = get(port, path)
    assert status == 404, (path, body)
    assert "not a run" not in body and "root:" not in body


def test_another_host_or_method_is_refused(served: tuple[Path, int]) -> None:
    _, port = served
    assert get(port, "/", host="attacker.example:80")[0] == 403
    assert get(port, "/", method="POST")[0] == 501
    assert get(port, "/", method="PUT")[0] == 501


def test_a_run_going_on_reloads_and_shows_its_finished_trials(
        served: tuple[Path, int], tmp_path: Path) -> None:
    root, port = served
    live = root / "live"
    shutil.copytree(root / "exp-a" / "out", live)
    for name in ("cef-report.json", "cef-report.md"):
        (live / name).unlink()
    (live / "run.lock").write_text("{}", encoding="utf-8")
    with (live / "trials.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"schema_version": "ctxbench.trial.v1", "work')  # being written
    try:
        status, _, page = get(port, "/run/live/")
        assert status == 200
        assert f'<meta http-equiv="refresh" content="{REFRESH_S}">' in page
        # no report yet: the preregistration names the baseline, so pairs are shown
        assert "Every pair of trials (48) of the 72" in page
        assert "the run is going on, and that trial is not shown yet" in page
        assert "going on" in get(port, "/")[2]
    finally:
        shutil.rmtree(live)


def test_the_command_reports_a_busy_port_in_one_line(
        served: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.main import main

    root, port = served
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(root), "--port", str(port)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"ctxbench: error: 127.0.0.1:{port}: cannot listen (Address already in use); "
        "choose another --port"]


def test_a_hostile_run_name_is_escaped_in_the_index(served: tuple[Path, int]) -> None:
    root, port = served
    name = '"><img src=x onerror=alert(1)>'
    hostile = root / name
    shutil.copytree(root / "exp-a" / "out", hostile)
    try:
        status, _, page = get(port, "/")
        assert status == 200 and "<img" not in page
        assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
        assert get(port, "/run/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E/")[0] == 200
    finally:
        shutil.rmtree(hostile)
