"""Stratum headings: a 64-hex digest (a corpus root) in a label shows its first 12 digits.

The report's JSON keeps the label and key unchanged; the pages show the short form and
carry the full label beside it (an HTML ``title`` tooltip, a Markdown line).
"""

from __future__ import annotations

import re

__all__ = ["short_label"]

_DIGEST = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{52}\b")


def short_label(label: str) -> str:
    """``label`` with each 64-hex digest cut to its first 12 digits and an ellipsis."""
    return _DIGEST.sub(lambda m: m.group(1) + "\u2026", label)
