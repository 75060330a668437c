"""The page shell: one self-contained HTML document with its stylesheet inline.

No script, no web font, no external URL: the page opens from ``file://`` without network
access. Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
deficiencies), with a dark variant (``prefers-color-scheme``) and a print variant. Plots
keep their drawn size on a narrow screen (a figure scrolls sideways rather than shrink its
text below 11 px).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxbench.render.html.svg import esc

__all__ = ["Section", "document", "figure", "heading_hint", "kv_table", "notes_block", "table"]

_CSS = """
:root{--bg:#fff;--fg:#1a1a1a;--muted:#5b5b5b;--rule:#d0d0d0;--grid:#ececec;--panel:#f6f6f4;
--pass:#0072B2;--fail:#D55E00;--hl:#E69F00;--alt:#009E73;--other:#CC79A7;--neutral:#6e6e6e;
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#151515;--fg:#e8e8e8;--muted:#a8a8a8;
--rule:#444;--grid:#2c2c2c;--panel:#1f1f1f;--pass:#56B4E9;--fail:#E8743B;--hl:#F0E442;
--alt:#3FBF9B;--other:#E09BC4;--neutral:#9a9a9a}}
*{box-sizing:border-box}h1,h2,h3,h4,p,li,figcaption,summary{overflow-wrap:anywhere}
body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
header,main,footer{max-width:1240px;margin:0 auto;padding:0 20px}
header{padding-top:18px;border-bottom:1px solid var(--rule)}
h1{font-size:1.55rem;margin:.2em 0}h2{font-size:1.25rem;margin:1.6em 0 .4em;
border-bottom:1px solid var(--rule);padding-bottom:.2em}h3{font-size:1.05rem;margin:1.2em 0 .3em}
nav ul{list-style:none;padding:0;margin:.6em 0 1em;display:flex;flex-wrap:wrap;gap:.3em 1.1em}
a{color:var(--pass)}code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;
font-size:.88em;overflow-wrap:anywhere}
.meta{color:var(--muted);margin:.2em 0}
.badge{display:inline-block;border:1px solid var(--rule);border-radius:3px;padding:0 .45em;
font-size:.85em;margin-right:.4em;background:var(--panel)}
.headline{border-left:4px solid var(--hl);background:var(--panel);padding:.6em 1em;
margin:.8em 0;font-size:1.05rem}
.note{border-left:4px solid var(--fail);background:var(--panel);padding:.5em 1em;margin:.6em 0}
.ok{color:var(--pass);font-weight:600}.bad{color:var(--fail);font-weight:700}
.tablewrap{overflow-x:auto;margin:.5em 0 1em}
table{border-collapse:collapse;font-size:.9rem}
th,td{border:1px solid var(--rule);padding:.25em .55em;text-align:left;vertical-align:top}
th{background:var(--panel)}th[scope=row]{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);caption-side:top;padding:.2em 0}
.plots{display:flex;flex-wrap:wrap;gap:14px 24px;margin:.6em 0}
figure{margin:0;max-width:100%;display:table}
figcaption{display:table-caption;caption-side:bottom;color:var(--muted);font-size:.85rem}
svg.plot{max-width:100%;height:auto;display:block;font:11px system-ui,"DejaVu Sans",sans-serif}
svg .axis{stroke:var(--fg);stroke-width:1}svg .grid{stroke:var(--grid);stroke-width:1}
svg .zero{stroke:var(--neutral);stroke-width:1}
svg .margin{stroke:var(--fg);stroke-width:1.4;stroke-dasharray:5 3}
svg text{fill:var(--fg)}svg .tick,svg .note{fill:var(--muted)}svg .label{font-size:12px}
svg .ci{stroke-width:2.6}svg .ci.pass,svg .line.pass{stroke:var(--pass)}
svg .ci.fail{stroke:var(--fail)}svg .ci.neutral{stroke:var(--neutral)}
svg .ci.hl{stroke:var(--hl)}svg .mk.pass{fill:var(--pass)}svg .mk.neutral{fill:var(--neutral)}
svg .mk.fail{fill:var(--bg);stroke:var(--fail);stroke-width:1.6}
svg .x.fail{stroke:var(--fail);stroke-width:1.6}svg .mk.hl{fill:var(--hl);stroke:var(--fg)}
svg .verdict.pass{fill:var(--pass);font-weight:600}svg .verdict.fail{fill:var(--fail);
font-weight:700}
svg .line{fill:none;stroke-width:2}svg .line.alt{stroke:var(--alt);stroke-dasharray:4 2}
svg .mk.alt{fill:var(--alt)}svg .line.other{stroke:var(--other)}svg .mk.other{fill:var(--other)}
svg .bstar{fill:none;stroke:var(--hl);stroke-width:2}
svg .cell{stroke:var(--rule);fill:var(--bg)}svg .cell.pass{fill:var(--pass)}
svg .cell.fail{fill:var(--fail)}svg .cell.na{fill:var(--grid)}
svg .cellbox{fill:none;stroke:var(--rule)}svg .cellbox.bstar{stroke:var(--hl);stroke-width:3}
.tasks{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:4px 24px}
.tasks .plots{gap:8px 12px;margin:0}h4{margin:.6em 0 0;font-size:.95rem}
details{margin:.4em 0}summary{cursor:pointer}
footer{color:var(--muted);font-size:.85rem;border-top:1px solid var(--rule);margin-top:2em;
padding-top:.6em;padding-bottom:2em}
@media (max-width:700px){body{font-size:14px}.tasks{display:block}header,main,footer{padding:0 10px}
h1{font-size:1.25rem}th,td{padding:.2em .35em}
figure{display:block;min-width:0;overflow-x:auto}figcaption{display:block}
svg.plot{max-width:none}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--panel:#fff;--grid:#ddd}
nav{display:none}a{color:#000;text-decoration:none}figure,table,.headline{break-inside:avoid}
h2{break-after:avoid}.tablewrap{overflow:visible}body{font-size:11pt}}
"""


@dataclass(frozen=True, slots=True)
class Section:
    anchor: str
    title: str
    body: str
    nav: str = ""
    hint: str = ""  # the full heading, as a tooltip, where ``title`` is shortened


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str = "",
          numeric: Sequence[int] = ()) -> str:
    """An HTML table; cells are already-escaped HTML, ``numeric`` columns right-aligned."""
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{c}</td>' if k in numeric else f"<td>{c}</td>"
                         for k, c in enumerate(row)) + "</tr>\n"
        for row in rows)
    return (f'<div class="tablewrap"><table>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def kv_table(rows: Sequence[tuple[str, str]], *, caption: str = "") -> str:
    """Two columns, name and already-escaped value."""
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    body = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{v}</td></tr>\n' for k, v in rows)
    return f'<div class="tablewrap"><table>{cap}<tbody>{body}</tbody></table></div>'


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}\n<figcaption>{esc(caption)}</figcaption></figure>\n"


def notes_block(notes: Sequence[str]) -> str:
    """The report's notes, each a highlighted paragraph."""
    return "".join(f'<p class="note" role="note">{esc(n)}</p>' for n in notes)


def heading_hint(hint: str) -> str:
    """The ``title`` attribute of a shortened heading (empty when it is not shortened)."""
    return f' title="{esc(hint)}"' if hint else ""


def document(*, title: str, subtitle: str, badges: Sequence[str], notes: Sequence[str],
             sections: Sequence[Section], footer: str, script: str = "",
             script_hash: str = "", css: str = "") -> str:
    """The whole page: header with navigation, the sections, a footer naming the source.

    Inline scripts run only by ``script_hash`` in the Content-Security-Policy (``script``,
    if given, at the end of the body; a section may hold the script itself); a page
    without a hash allows no script at all.
    """
    allow = f" script-src '{script_hash}';" if script_hash else ""
    tail = f"<script>{script}</script>" if script else ""
    nav = "".join(f'<li><a href="#{s.anchor}"{heading_hint(s.hint)}>'
                  f"{esc(s.nav or s.title)}</a></li>" for s in sections)
    badge = "".join(f'<span class="badge">{esc(b)}</span>' for b in badges)
    note = notes_block(notes)
    body = "".join(f'<section id="{s.anchor}" aria-labelledby="{s.anchor}-h">\n'
                   f'<h2 id="{s.anchor}-h"{heading_hint(s.hint)}>{esc(s.title)}</h2>\n'
                   f"{s.body}</section>\n"
                   for s in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
        f"{allow} style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{_CSS.strip()}{css.strip()}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><p class=\"meta\">{subtitle}</p><p>{badge}</p>"
        f'{note}<nav aria-label="Sections"><ul>{nav}</ul></nav></header>'
        f"<main>{body}</main><footer>{footer}</footer>{tail}</body></html>\n")
