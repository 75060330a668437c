"""Take the README's screenshots of the demo's HTML pages in headless Chromium.

    .venv/bin/ctxbench demo --output ctxbench-demo
    .venv/bin/python docs/img/shoot.py ctxbench-demo

Each shot is a 1280 x 800 (or 390 x 800, phone) view scrolled to one section of a page;
``page-KIND-WIDTH.png`` is the first screen of each page kind at 1280 and 420 px wide (the
public-eval page is rendered from ``tests/golden/public-eval-basic``, as the demo has none).
The drill-down (a pair opened: its query, expected answer, both trials and a packet), the
run diff and the ``ctxbench view`` index are shot from the two fixture runs of
``tests/render/drill_runs.py`` (the demo's fixture run has no discordant pair), made first
in a temporary directory.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from ctxbench.render.html import write_html

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# (file name, page under the demo directory, section id or "" for the top, width, scheme)
SHOTS = [
    ("run-page.png", "run/index.html", "", 1280, "light"),
    ("cef-frontier.png", "run/cef-report.html", "stratum-1", 1280, "light"),
    ("cef-forest.png", "run/cef-report.html", "stratum-1 h3", 1280, "light"),
    ("eceb-grid.png", "run/eceb-report.html", "grid", 1280, "light"),
    ("eceb-budgets-dark.png", "run/eceb-report.html", "budgets", 1280, "dark"),
    ("index-phone.png", "index.html", "", 390, "light"),
]
KINDS = [("run-directory", "run/index.html"), ("cef", "run/cef-report.html"),
         ("public-eval", "public-eval-report.html"), ("eceb", "run/eceb-report.html"),
         ("multi-report", "index.html")]
SHOTS += [(f"page-{kind}-{width}.png", path, "", width, "light")
          for kind, path in KINDS for width in (1280, 420)]


def _drill_pages(work: Path) -> tuple[Path, Path, Path]:
    """The two fixture runs (before playwright holds the event loop), the run page with
    its drill-down and the diff page."""
    sys.path.insert(0, str(ROOT / "tests"))
    from render.drill_runs import make_run

    with contextlib.chdir(work):  # pages name their inputs relatively
        make_run(Path("old"))
        make_run(Path("new"), moved=True)
        run = write_html([Path("old/out")], work / "old" / "out" / "index.html")
        diff = write_html([Path("old/out"), Path("new/out")], work / "diff.html")
    return work, run, diff


def _shoot_drill(browser: Any, work: Path, run: Path, diff: Path) -> None:
    from ctxbench.render.html.viewer import make_server

    server = make_server(work, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for width in (1280, 420):
            page = browser.new_page()
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(run.as_uri(), wait_until="load")
            page.select_option("select[aria-label=Outcome]", "discordant")
            page.locator(".dd-open").first.click()
            page.locator(".dd-detail summary").first.click()
            # the opened pair from its query down (the filters are just above)
            page.evaluate("document.querySelector('#trials .dd-detail').scrollIntoView()")
            page.screenshot(path=str(HERE / f"page-drilldown-{width}.png"))
            page.goto(diff.as_uri() + "#diff", wait_until="load")
            page.evaluate("document.querySelector('#diff').scrollIntoView()")
            page.screenshot(path=str(HERE / f"page-run-diff-{width}.png"))
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/", wait_until="load")
            page.screenshot(path=str(HERE / f"page-view-index-{width}.png"))
            page.close()
            for kind in ("drilldown", "run-diff", "view-index"):
                print(HERE / f"page-{kind}-{width}.png")
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    demo = Path(sys.argv[1] if len(sys.argv) > 1 else "ctxbench-demo").resolve()
    with contextlib.chdir(ROOT):  # the page names its input as the repository does
        write_html([Path("tests/golden/public-eval-basic/report.json")],
                   demo / "public-eval-report.html")
    scratch = tempfile.TemporaryDirectory()
    drill = _drill_pages(Path(scratch.name))
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        # a fresh profile each time (--user-data-dir through a persistent context)
        browser = p.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", args=FLAGS, headless=True)
        for name, page_path, anchor, width, scheme in SHOTS:
            page = browser.new_page()
            page.set_viewport_size({"width": width, "height": 800})
            page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
            page.goto((demo / page_path).as_uri(), wait_until="load")
            if anchor:
                section, _, child = anchor.partition(" ")
                target = f"#{section} {child}" if child else f"#{section}"
                page.locator(target).first.scroll_into_view_if_needed()
                page.evaluate(f"document.querySelector('{target}').scrollIntoView()")
            page.screenshot(path=str(HERE / name))
            page.close()
            print(HERE / name)
        _shoot_drill(browser, *drill)
        browser.close()
    scratch.cleanup()


if __name__ == "__main__":
    main()
