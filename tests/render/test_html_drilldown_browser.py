"""The drill-down and the run diff in real headless Chromium: filters, a trial opened, a
deep link followed, a diff's link into a run, hostile strings shown as text.

Skips without Chromium as ``test_html_browser`` does (and fails under ``CI=true``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.render.html import write_html
from render import test_html_browser as chromium
from render.drill_runs import make_run, rewrite_trial

browser = chromium.browser  # the module's Chromium fixture
open_page = chromium.open_page

HOSTILE = ('</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
           "<b>bold</b>")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    # The runs are made before the browser starts: playwright's sync API holds the loop.
    base = tmp_path_factory.mktemp("drill-browser")
    return make_run(base / "a"), make_run(base / "b", moved=True)


def _trials(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "trials.jsonl").read_text("utf-8").splitlines()]


def _line(trials: list[dict[str, Any]], task: str, condition: str, replicate: int) -> int:
    return next(k + 1 for k, t in enumerate(trials) if t["task_id"] == task
                and t["condition"] == condition and t["replicate"] == replicate)


def _count(page: Any) -> str:
    return str(page.inner_text(".dd-count"))


def test_filters_open_a_trial_and_follow_a_deep_link(runs: tuple[Path, Path], browser: Any,
                                                     tmp_path: Path) -> None:
    run = runs[0]
    out = write_html([run], tmp_path / "run.html")
    page, text = open_page(browser, out, tmp_path / "run.png")
    assert "Pairs per comparison" in text
    assert _count(page) == "Showing 48 of 48 pairs (48 in the run)."
    # discordant first: the first row is a lost pair
    assert "baseline right, candidate wrong" in page.inner_text(".dd-row >> nth=0")
    page.select_option("select[aria-label=Outcome]", "0")
    assert _count(page) == "Showing 8 of 8 pairs (48 in the run)."
    rows = page.locator(".dd-row")
    assert rows.count() == 8
    assert all("truncate-head@150" in rows.nth(k).inner_text() for k in range(8))
    page.select_option("select[aria-label=Comparison]", "compiled@150")
    assert _count(page) == "Showing 0 of 0 pairs (48 in the run)."
    page.select_option("select[aria-label=Outcome]", "")
    page.fill("input[aria-label='Task id contains']", "q1")
    assert _count(page) == "Showing 6 of 6 pairs (48 in the run)."  # q1, q10, q11
    page.select_option("select[aria-label=Sort]", "task")
    assert page.inner_text(".dd-row >> nth=0").startswith("q1\t")
    # open a trial: both answers, scores and the packet each condition sent
    page.locator(".dd-open").first.click()
    detail = page.inner_text(".dd-detail")
    trials = _trials(run)
    base = trials[_line(trials, "q1", "full_permitted_context", 0) - 1]
    cand = trials[_line(trials, "q1", "compiled@150", 0) - 1]
    assert "baseline: full_permitted_context" in detail and "candidate: compiled@150" in detail
    assert base["response_text"] in detail and cand["response_text"] in detail
    assert f"context tokens\n{base['context_tokens']}" in detail
    # the task's query and expected answer once above the pair, the scorer's fields in each
    assert detail.startswith("query\nWhich port does service 1 use?\nexpected answers\n"
                             "Service 1 listens on port 8001.\nabstention expected\nno\n")
    assert detail.count("scoring method\nexact_match") == 2
    assert detail.count("evidence required\nService 1 listens on port 8001.") == 2
    assert f"matched\n{'none' if cand['task_score'] == 0 else cand['response_text']}" in detail
    assert detail.count("selected artifacts\n") == 2
    page.locator(".dd-detail summary").first.click()
    packet = (run / "packets" / f"{base['context_sha256']}.txt").read_text(encoding="utf-8")
    assert packet.splitlines()[0] in page.inner_text(".dd-detail")
    # a deep link opens that trial with every filter reset
    line = _line(trials, "q3", "truncate-head@150", 1)
    page.goto(out.resolve().as_uri() + f"#trial-{line}")
    target = page.locator(f"#trial-{line}")
    target.wait_for()
    assert target.is_visible()
    assert "candidate: truncate-head@150" in target.inner_text()
    assert trials[line - 1]["response_text"] in target.inner_text()
    assert page.input_value("select[aria-label=Comparison]") == "truncate-head@150"
    # a link inside a trial is a deep link too (hashchange)
    other = _line(trials, "q3", "full_permitted_context", 1)
    page.locator(f"#trial-{line}").locator("xpath=..").locator(
        f"a[href='#trial-{other}']").click()
    assert page.locator(f"#trial-{other}").is_visible()
    page.close()


def test_a_page_opened_at_a_deep_link_opens_the_trial_and_its_packet(
        runs: tuple[Path, Path], browser: Any, tmp_path: Path) -> None:
    run = runs[0]
    out = write_html([run], tmp_path / "run.html")
    trials = _trials(run)
    line = _line(trials, "q4", "truncate-head@150", 1)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.resolve().as_uri() + f"#trial-{line}")  # a fresh load, not a hash change
    target = page.locator(f"#trial-{line}")
    target.wait_for()
    detail = page.inner_text(".dd-detail")
    assert "Which port does service 4 use?" in detail
    assert "Service 4 listens on port 8004." in detail
    target.locator("summary").click()
    packet = (run / "packets" / f"{trials[line - 1]['context_sha256']}.txt").read_text(
        encoding="utf-8")
    assert packet.splitlines()[0] in target.inner_text()
    assert errors == []
    page.close()


def test_hostile_strings_inject_nothing(runs: tuple[Path, Path], browser: Any,
                                        tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "packets").mkdir(parents=True)
    for name in ("trials.jsonl", "manifest.json", "cef-report.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    trials = _trials(run)
    line = _line(trials, "q0", "truncate-head@150", 0)
    rewrite_trial(run, line, response_text=HOSTILE,
                  response_sha256=hashlib.sha256(HOSTILE.encode("utf-8")).hexdigest(),
                  query=HOSTILE, expected={"answers": [HOSTILE], "answer_terms": [HOSTILE],
                                           "abstention": False},
                  scorer_details={"method": HOSTILE, HOSTILE: [HOSTILE],
                                  "constructor": "x"})
    for sha in {t["context_sha256"] for t in trials}:
        (run / "packets" / f"{sha}.txt").write_text(HOSTILE, encoding="utf-8")
    out = write_html([run], tmp_path / "run.html")
    page, _ = open_page(browser, out, tmp_path / "hostile.png")
    page.goto(out.resolve().as_uri() + f"#trial-{line}")
    page.locator(f"#trial-{line}").wait_for()
    page.locator(".dd-detail summary").nth(1).click()
    assert HOSTILE in page.inner_text(".dd-detail")
    # 0 injected elements: the page's own scripts (data, packets, program), no img, no b,
    # nothing ran
    packets = len({t["context_sha256"] for t in trials})
    assert page.evaluate("document.querySelectorAll('script').length") == 2 + packets
    assert page.evaluate("document.querySelectorAll('script:not([type])').length") == 1
    assert page.evaluate("document.querySelectorAll('img, b').length") == 0
    assert page.evaluate("window.pwned === undefined")
    page.close()


def test_a_run_diff_in_chromium(runs: tuple[Path, Path], browser: Any, tmp_path: Path
                                ) -> None:
    out = write_html(list(runs), tmp_path / "diff.html")
    page, text = open_page(browser, out, tmp_path / "diff.png")
    assert "Run diff: 4 (task, condition) cells score lower in B, 8 higher" in text
    assert "q1 truncate-head@150 score down 1.0, 1.0 0.0, 0.0 115, 115 126, 126" in text
    # a score in the diff opens that trial in run B's drill-down
    b = _trials(runs[1])
    line = _line(b, "q1", "truncate-head@150", 0)
    page.locator(f"#diff a[href='#r2-trial-{line}']").first.click()
    target = page.locator(f"#r2-trial-{line}")
    target.wait_for()
    assert target.is_visible() and b[line - 1]["response_text"] in target.inner_text()
    page.close()


def test_view_lists_runs_and_serves_the_same_pages(runs: tuple[Path, Path], browser: Any
                                                   ) -> None:
    import threading

    from ctxbench.render.html.viewer import make_server

    server = make_server(runs[0].parents[1], 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        assert "a/out" in page.inner_text("body") and "b/out" in page.inner_text("body")
        page.click("text=a/out")
        page.locator(".dd-count").wait_for()
        assert page.inner_text(".dd-count") == "Showing 48 of 48 pairs (48 in the run)."
        page.locator(".dd-open").first.click()
        link = page.locator(".dd-detail a[href^='#trial-']").first
        link.click()
        assert page.url.split("#")[1] == link.get_attribute("href")[1:]
        assert errors == []
        page.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
