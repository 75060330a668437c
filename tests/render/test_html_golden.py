"""Golden HTML pages of the shipped example reports, compared byte for byte.

Regenerate with ``CTXBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_html_golden.py``
and review the diff. Pages are rendered from the repository root with relative paths, as
``ctxbench report tests/golden/<case>/report.json --html tests/golden/html-<case>/page.html``
would.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxbench.render.html import render_html

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "html-cef-two-stratum": ["tests/golden/cef-two-stratum/report.json"],
    "html-cef-failure-heavy": ["tests/golden/cef-failure-heavy/report.json"],
    "html-public-eval-basic": ["tests/golden/public-eval-basic/report.json"],
    "html-public-eval-repeated": ["tests/golden/public-eval-repeated/report.json"],
    "html-eceb-seed": ["tests/golden/eceb-seed/report.json"],
    "html-index": ["tests/golden/cef-passing/report.json",
                   "tests/golden/public-eval-within-margin/report.json",
                   "tests/golden/eceb-seed/report.json"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_page(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = Path("tests/golden") / case / "page.html"
    page = render_html([Path(p) for p in CASES[case]], out).encode("utf-8")
    if os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1":
        out.write_bytes(page)
    assert page == out.read_bytes()
    # rendering twice gives the same bytes (no clock, no randomness, no dict-order drift)
    assert render_html([Path(p) for p in CASES[case]], out).encode("utf-8") == page
