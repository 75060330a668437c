"""Self-contained HTML pages for CEF, public-eval and ECEB reports and run directories.

``render_html(paths, out)`` returns the page; ``write_html(paths, out)`` writes it;
``render_report_html(kind, doc)`` is the page of one report document held in memory. Each page
lays out its protocol's typed report model (``protocols.cef.model``,
``protocols.public_eval.model``, ``protocols.eceb.model``), read from the JSON with
located errors; the page modules compute nothing.
"""

from ctxbench.render.html.report import render_html, render_report_html, write_html

__all__ = ["render_html", "render_report_html", "write_html"]
