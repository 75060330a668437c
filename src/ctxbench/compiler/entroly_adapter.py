"""``entroly``: Entroly's budgeted, query-conditioned selection as a ctxbench strategy.

Needs the extra ``ctxbench[entroly]``. The adapter offers Entroly the permitted candidate
chunks (:meth:`StrategyRequest.candidates`, best BM25 match first, each with its token
count under the declared tokenizer) through Entroly's public API
``entroly.optimize(fragments, budget=..., query=...)``, and sends what Entroly selected,
in Entroly's order, as Entroly's own runner does: the chunks' texts joined by a blank line
(ctxbench's exact bytes of each chunk; Entroly returns them stripped).

Entroly counts the fragments' tokens as given but the blank lines between them are not
counted; when the joined context exceeds the budget by ctxbench's count, the adapter asks
again with the budget scaled down (at most :data:`RETRIES` times), then drops the last
selected chunks until it fits. Each call runs with ``ENTROLY_DIR`` pointed at a fresh
temporary folder, so Entroly neither reads a tuning file nor keeps state (or any of the
corpus) between packets. The commit records Entroly's version and how the packet was made.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from ctxbench.compiler.plugins import Candidate, Selected, StrategyRequest, StrategyResult

__all__ = ["ENTROLY", "RETRIES", "EntrolyStrategy"]

RETRIES = 3
_ENV_LOCK = threading.Lock()
INSTALL_HINT = "entroly is not installed; install it with: pip install 'ctxbench[entroly]'"


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """Entroly's server module calls ``logging.basicConfig(level=INFO)`` when first
    imported (inside ``optimize``), which would print every library's INFO records on
    stderr; a placeholder handler makes that call a no-op, and the process's logging is
    left as it was."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    placeholder = logging.NullHandler()
    if not handlers:
        root.addHandler(placeholder)
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def _optimize(fragments: list[dict[str, Any]], budget: int, query: str) -> dict[str, Any]:
    with _ENV_LOCK, _logging_kept(), tempfile.TemporaryDirectory(
            prefix="ctxbench-entroly-") as state:
        try:
            import entroly
        except ImportError as exc:
            raise RuntimeError(INSTALL_HINT) from exc
        before = os.environ.get("ENTROLY_DIR")
        os.environ["ENTROLY_DIR"] = state
        try:
            result = entroly.optimize(fragments, budget=budget, query=query)
        finally:
            if before is None:
                os.environ.pop("ENTROLY_DIR", None)
            else:
                os.environ["ENTROLY_DIR"] = before
    if not isinstance(result, dict) or not isinstance(result.get("selected"), list):
        raise RuntimeError("entroly.optimize returned no 'selected' list")
    return result


class EntrolyStrategy:
    """The ``entroly`` strategy (see the module docstring)."""

    name = "entroly"
    budgeted = True
    summary = ("Entroly's entroly.optimize(fragments, budget, query) over the permitted "
               "chunks (ctxbench[entroly])")
    requires = ("entroly", "entroly-core")

    def build(self, request: StrategyRequest) -> StrategyResult:
        budget = request.budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"budget: expected an integer >= 1 for entroly, got {budget!r}")
        offered = {f"{c.artifact_id}#{c.start}-{c.end}": c for c in request.candidates()}
        if not offered:
            return StrategyResult("", (), "no artifact with text is permitted by the policy")
        fragments = [{"content": c.text, "source": key, "token_count": request.count(c.text)}
                     for key, c in offered.items()]
        asked = budget
        calls = 0
        chosen: list[Candidate] = []
        for _ in range(RETRIES + 1):
            calls += 1
            chosen = self._chosen(_optimize(fragments, asked, request.query), offered)
            count = request.count(_join(chosen))
            if count <= budget or asked <= 1:
                break
            asked = max(1, min(asked - 1, asked * budget // count))
        dropped = 0
        while chosen and request.count(_join(chosen)) > budget:
            chosen.pop()
            dropped += 1
        from importlib import metadata

        details = (("entroly_version", metadata.version("entroly")),
                   ("entroly_calls", str(calls)), ("entroly_last_budget", str(asked)),
                   ("dropped_to_fit", str(dropped)))
        if not chosen:
            return StrategyResult("", (), "Entroly selected nothing that fits the budget",
                                  details)
        selected = tuple(Selected(c.artifact_id, ((c.start, c.end),)) for c in chosen)
        return StrategyResult(_join(chosen), selected, None, details)

    @staticmethod
    def _chosen(result: dict[str, Any], offered: dict[str, Candidate]) -> list[Candidate]:
        out: list[Candidate] = []
        seen: set[str] = set()
        for item in result["selected"]:
            source = item.get("source") if isinstance(item, dict) else None
            if source not in offered:
                raise RuntimeError(f"entroly.optimize selected a fragment it was not offered "
                                   f"({str(source)[:80]!r})")
            if source not in seen:
                seen.add(source)
                out.append(offered[source])
        return out


def _join(chosen: list[Candidate]) -> str:
    return "\n\n".join(c.text for c in chosen)


ENTROLY = EntrolyStrategy()
