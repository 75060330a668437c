"""Take the README's screenshots of the demo's HTML pages in headless Chromium.

    .venv/bin/ctxbench demo --output ctxbench-demo
    .venv/bin/python docs/img/shoot.py ctxbench-demo

Each shot is a 1280 x 800 (or 390 x 800, phone) view scrolled to one section of a page.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HERE = Path(__file__).resolve().parent

# (file name, page under the demo directory, section id or "" for the top, width, scheme)
SHOTS = [
    ("run-page.png", "run/index.html", "", 1280, "light"),
    ("cef-frontier.png", "run/cef-report.html", "stratum-1", 1280, "light"),
    ("cef-forest.png", "run/cef-report.html", "stratum-1 h3", 1280, "light"),
    ("eceb-grid.png", "run/eceb-report.html", "grid", 1280, "light"),
    ("eceb-budgets-dark.png", "run/eceb-report.html", "budgets", 1280, "dark"),
    ("index-phone.png", "index.html", "", 390, "light"),
]


def main() -> None:
    demo = Path(sys.argv[1] if len(sys.argv) > 1 else "ctxbench-demo").resolve()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for name, page_path, anchor, width, scheme in SHOTS:
            page = browser.new_page(viewport={"width": width, "height": 800},
                                    color_scheme=scheme)  # type: ignore[arg-type]
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
