"""The Markdown of any ctxbench report, with the notes the run attached to it.

``render_markdown(report)`` picks the protocol's renderer by the report's schema name and
puts the report's top-level ``notes`` first, as a quoted banner, so that the ``.md`` a run
writes is exactly the rendering of the ``.json`` beside it.
"""

from __future__ import annotations

from typing import Any

from ctxbench.core import PointerError, describe_value

__all__ = ["render_markdown", "with_notes"]


def _body(report: dict[str, Any], where: str) -> str:
    version = report.get("schema_version", report.get("schema"))
    if isinstance(version, str):
        if version.startswith("ctxbench.cef-report."):
            from ctxbench.core.node import Node
            from ctxbench.protocols.cef.model import CefReport
            from ctxbench.render.cef import render_markdown as cef
            return cef(CefReport.from_json(Node(where, "", report)))
        if version.startswith("ctxbench.public-eval-report."):
            from ctxbench.core.node import Node
            from ctxbench.protocols.public_eval.model import PublicEvalReport
            from ctxbench.render.public_eval import render_markdown as public_eval
            return public_eval(PublicEvalReport.from_json(Node(where, "", report)))
        if version.startswith("symgliph.eceb/report-"):
            from ctxbench.core.node import Node
            from ctxbench.protocols.eceb.model import Report
            from ctxbench.render.eceb import render_markdown as eceb
            return eceb(Report.from_json(Node(where, "", report)))
    raise PointerError(where, "/schema_version", "expected a CEF, public-eval or ECEB report, "
                       f"got {describe_value(version)}")


def render_markdown(report: dict[str, Any], *, where: str = "report") -> str:
    """The report as Markdown, its ``notes`` (if any) quoted before the protocol's text."""
    return with_notes(report, _body(report, where))


def with_notes(report: dict[str, Any], body: str) -> str:
    """``body`` (a protocol renderer's Markdown of ``report``) after the report's notes."""
    notes = report.get("notes") or []
    if not notes:
        return body
    return "".join(f"> **{note}**\n" for note in notes) + "\n" + body
