"""Take the README's screenshots of the demo's HTML pages in headless Chromium.

    .venv/bin/ctxbench demo --output ctxbench-demo
    .venv/bin/python docs/img/shoot.py ctxbench-demo

Each shot is a 1280 x 800 (or 390 x 800, phone) view scrolled to one section of a page;
``page-KIND-WIDTH.png`` is the first screen of each page kind at 1280 and 420 px wide (the
public-eval page is rendered from ``tests/golden/public-eval-basic``, as the demo has none).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

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


def main() -> None:
    demo = Path(sys.argv[1] if len(sys.argv) > 1 else "ctxbench-demo").resolve()
    with contextlib.chdir(ROOT):  # the page names its input as the repository does
        write_html([Path("tests/golden/public-eval-basic/report.json")],
                   demo / "public-eval-report.html")
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
        browser.close()


if __name__ == "__main__":
    main()
