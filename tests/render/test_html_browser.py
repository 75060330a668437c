"""Each kind of page opened in real headless Chromium: loads with no console error and no
network request, renders the JSON's key numbers, fits a phone, follows dark mode and print.

Uses Debian's ``chromium`` (``/usr/bin/chromium``; ``CTXBENCH_CHROMIUM`` names another)
driven by the ``playwright`` package, which downloads no browser of its own here. Without a
browser these tests skip and say why; with ``CI=true`` they must run.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxbench.render.html import write_html

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CHROMIUM = Path(os.environ.get("CTXBENCH_CHROMIUM", "/usr/bin/chromium"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CTXBENCH_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the browser tests cannot run: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        # A fresh profile each time: --user-data-dir through a persistent context.
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), args=FLAGS, headless=True,
            viewport={"width": 1280, "height": 900})
        try:
            yield context
        finally:
            context.close()


def open_page(browser: Any, path: Path, shot: Path) -> tuple[Any, str]:
    """Load ``path``; assert no console error, page error or request beyond the file."""
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    url = path.resolve().as_uri()
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    assert errors == []
    assert requests == [url]
    page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    return page, " ".join(page.inner_text("body").split())


# The verdict's top and the smallest plot text as drawn (font size times the SVG's scale),
# in CSS pixels; plots inside closed <details> are not drawn and not counted.
_MEASURE = """() => {
  const h = document.querySelector('.headline');
  let least = 1e9;
  for (const t of document.querySelectorAll('svg.plot text')) {
    const svg = t.ownerSVGElement, box = svg.getBoundingClientRect();
    if (box.width === 0) continue;
    least = Math.min(least, box.width / svg.viewBox.baseVal.width
                     * parseFloat(getComputedStyle(t).fontSize));
  }
  return [h === null ? null : h.getBoundingClientRect().top + window.scrollY, least];
}"""


def check_verdict_and_text(page: Any) -> None:
    """The verdict within the first 700 px, and plot text of at least 11 px, at 1280x800
    and at 420 px wide."""
    for width in (1280, 420):
        page.set_viewport_size({"width": width, "height": 800})
        top, least = page.evaluate(_MEASURE)
        assert top is not None and top < 700, (width, top)
        assert least >= 11 - 1e-6, (width, least)
        assert page.evaluate("document.documentElement.scrollWidth") <= width


def check_layouts(page: Any) -> None:
    """Verdict first and text readable; phone width without sideways scrolling; dark
    colours; print hides the navigation."""
    check_verdict_and_text(page)
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.emulate_media(color_scheme="dark")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(21, 21, 21)"
    page.emulate_media(color_scheme="light")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == \
        "rgb(255, 255, 255)"
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    page.close()


def load(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def test_cef_page_in_chromium(browser: Any, tmp_path: Path) -> None:
    src = GOLDEN / "cef-two-stratum" / "report.json"
    report = load(src)
    page, text = open_page(browser, write_html([src], tmp_path / "cef.html"),
                           tmp_path / "cef.png")
    assert report["headlines"][0] in text
    comp = report["aggregate"]["comparisons"][0]
    assert f"{comp['task_score_delta']['estimate']:+.4f}" in text
    assert f"margin {comp['hypotheses'][0]['threshold']:+.4f}" in text
    assert f"{comp['context_reduction']['estimate'] * 100:.1f}%" in text
    check_layouts(page)


def test_public_eval_page_in_chromium(browser: Any, tmp_path: Path) -> None:
    src = GOLDEN / "public-eval-repeated" / "report.json"
    report = load(src)
    page, text = open_page(browser, write_html([src], tmp_path / "pe.html"),
                           tmp_path / "pe.png")
    q = report["quality"]
    assert f"Status: {report['status']}" in text
    assert f"{q['resolved_delta_pp']:+.2f} pp" in text
    assert f"{q['gate_ci_pp'][0]:.2f} to {q['gate_ci_pp'][1]:.2f} pp" in text
    assert f"margin -{q['margin_pp']:g} pp" in text
    assert f"{report['savings']['tokens']['percent_saved']:.1f}%" in text
    assert "Headline savings are net" in text and "Reviewed stops (treatment)" in text
    check_layouts(page)


def test_eceb_page_in_chromium(browser: Any, tmp_path: Path) -> None:
    src = GOLDEN / "eceb-seed" / "report.json"
    report = load(src)
    page, text = open_page(browser, write_html([src], tmp_path / "eceb.html"),
                           tmp_path / "eceb.png")
    assert report["corpus"]["root"] in text and report["claim_class"]["reported"] in text
    first = report["tasks"][0]
    assert f"{first['task_id']} {first['minimum_viable_budget']} B* pass" in text
    assert f"{report['summary']['qualified']} of {report['summary']['tasks']}" in text
    check_layouts(page)


def test_demo_run_and_index_pages_in_chromium(browser: Any, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from ctxbench.runner.demo import run_demo

    # playwright's sync API holds this thread's event loop; the demo runs its own elsewhere.
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(run_demo, tmp_path / "demo", provider="fixture", replicates=1,
                             say=lambda _: None).result()
    names = sorted(p.relative_to(tmp_path / "demo").as_posix() for p in result.html_pages)
    assert names == ["index.html", "run/cef-report.html", "run/eceb-report.html",
                     "run/index.html", "seed-conformance/eceb-report.html"]
    run = tmp_path / "demo" / "run"
    manifest = load(run / "manifest.json")
    page, text = open_page(browser, run / "index.html", tmp_path / "run.png")
    assert manifest["provider"]["model"] in text and manifest["run_id"] in text
    assert load(run / "cef-report.json")["notes"][0] in text
    link = page.get_attribute("a[href='trials.jsonl']", "href")
    assert link == "trials.jsonl"
    check_layouts(page)
    page, text = open_page(browser, tmp_path / "demo" / "index.html", tmp_path / "index.png")
    eceb = load(tmp_path / "demo" / "seed-conformance" / "eceb-report.json")
    assert "2 reports side by side" in text
    assert f"{eceb['summary']['qualified']} / {eceb['summary']['tasks']}" in text
    check_layouts(page)
