"""Self-contained HTML pages for CEF, public-eval and ECEB reports and run directories.

``render_html(paths, out)`` returns the page; ``write_html(paths, out)`` writes it. The CEF
page reads the typed report model (``ctxbench.protocols.cef.model``); the per-protocol
accessor modules (``public_eval_view``, ``eceb_view``) are the only code that reads the other
reports' fields; the page modules lay out what they return.
"""

from ctxbench.render.html.report import render_html, write_html

__all__ = ["render_html", "write_html"]
