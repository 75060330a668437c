"""One self-contained HTML page from one or more reports or run directories.

With one input the page is that report (or run); with several it opens with a side-by-side
comparison and then holds every input's sections. Every number comes from the reports'
JSON, read into each protocol's typed report model (``CefReport``, ``PublicEvalReport``,
the ECEB ``Report``) with located errors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from ctxbench.core import atomic_write_text
from ctxbench.core.node import Node
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.eceb.model import Report as EcebReport
from ctxbench.protocols.public_eval.model import PublicEvalReport
from ctxbench.render.html.cef_page import cef_sections
from ctxbench.render.html.drilldown import drilldown_section
from ctxbench.render.html.drilldown_js import DRILL_CSS, SCRIPT_HASH
from ctxbench.render.html.eceb_page import bps, eceb_sections, eceb_verdict
from ctxbench.render.html.page import Section, document, heading_hint, kv_table, notes_block, table
from ctxbench.render.html.public_eval_page import public_eval_sections
from ctxbench.render.html.rundiff import diff_section
from ctxbench.render.html.sources import KINDS, Source, load_source
from ctxbench.render.html.svg import Ids, esc
from ctxbench.render.html.trials import TRIALS_FILE, RunTrials, read_run_trials
from ctxbench.render.order import by_condition
from ctxbench.render.strata import short_label

__all__ = ["render_html", "render_report_html", "write_html"]

View = CefReport | PublicEvalReport | EcebReport
_SHORT = {"cef": "CEF", "public_eval": "public-eval", "eceb": "ECEB"}


def _read(kind: str, doc: Node) -> View:
    if kind == "cef":
        return CefReport.from_json(doc)
    if kind == "public_eval":
        return PublicEvalReport.from_json(doc)
    return EcebReport.from_json(doc)


def _sections(view: View, ids: Ids, prefix: str) -> list[Section]:
    if isinstance(view, CefReport):
        return cef_sections(view, ids, prefix)
    if isinstance(view, PublicEvalReport):
        return public_eval_sections(view, ids, prefix)
    return eceb_sections(view, ids, prefix)


def _manifest(m: Node) -> list[tuple[str, str]]:
    provider = m.at("provider")
    pricing = m.at("pricing")
    price = pricing.s("kind")
    for key in ("source_reference", "effective_date", "path"):
        if pricing.has(key):
            price += f", {key.replace('_', ' ')} {pricing.s(key)}"
    workload = m.at("workload")
    rows = [("Run", m.s("run_id")), ("Started", m.s("started_at")),
            ("Model", provider.s("model")),
            ("Provider", f"{provider.s('name')} (usage source {provider.s('usage_source')})"),
            ("Tokenizer", m.s("tokenizer")), ("Pricing source", price),
            ("Seed", str(m.i("seed"))), ("Replicates", str(m.i("replicates"))),
            ("ctxbench version", m.s("ctxbench_version")),
            ("Workload", f"{workload.s('name')} {workload.s('version')} "
                         f"({workload.s('source')}, {workload.i('tasks')} tasks)"),
            ("Conditions", ", ".join(m.at("conditions").texts())),
            ("Trials planned", str(m.i("trials_planned")))]
    labels = m.at("labels").texts()
    if labels:
        rows.append(("Labels", "; ".join(labels)))
    return [(k, esc(v)) for k, v in rows]


def _files(source: Source, out: Path) -> str:
    rows = []
    for name, size in source.files:
        href = quote(Path(os.path.relpath(source.path / name, out.parent)).as_posix())
        rows.append([f'<a href="{esc(href)}">{esc(name)}</a>', f"{size:,}"])
    return table(["file", "bytes"], rows, caption="Raw files of the run (relative links)",
                 numeric=(1,))


def _source_sections(source: Source, views: list[tuple[str, View]], ids: Ids, out: Path,
                     prefix: str, trials: RunTrials | None) -> list[Section]:
    """The reports' sections, verdicts first; a run's manifest and files after them."""
    out_sections = []
    many = len(views) > 1
    for kind, view in views:
        inner = f"{prefix}{kind}-" if many else prefix
        secs = _sections(view, ids, inner)
        if many:
            secs = [Section(s.anchor, f"{KINDS[kind]}: {s.title}", s.body,
                            f"{_SHORT[kind]}: {s.nav or s.title}",
                            s.hint and f"{KINDS[kind]}: {s.hint}") for s in secs]
        out_sections += secs
    if trials is not None:
        out_sections.append(drilldown_section(trials, out, prefix,
                                              [short_label(s) for s in trials.strata]))
    if source.is_run:
        from ctxbench.render.html.agent_curves import agent_section

        curves = agent_section(source.path, ids, prefix)
        if curves is not None:
            out_sections.append(curves)
        body = (kv_table(_manifest(source.manifest), caption="Manifest")
                if source.manifest is not None else "<p>This directory has no manifest.json."
                                                    "</p>")
        out_sections.append(Section(f"{prefix}run", "Run", body + _files(source, out)))
    return out_sections


def run_trials(source: Source, views: list[tuple[str, View]]) -> RunTrials | None:
    """A run directory's trials and packets (None for a report file or a run without a
    trial log); pairs are formed against the CEF report's baseline."""
    if not source.is_run or not (source.path / TRIALS_FILE).is_file():
        return None
    cef = next((v for _, v in views if isinstance(v, CefReport)), None)
    labels = [] if cef is None else [
        ((s.key.provider, s.key.model, s.key.workload, s.key.workload_version, s.key.scorer),
         s.label) for s in cef.strata]
    baseline = None if cef is None else cef.methodology.baseline
    prereg = source.path / "cef-prereg.json"
    if baseline is None and prereg.is_file():
        # A run going on has no report yet; its preregistration, written before the first
        # trial, names the baseline. (Imported here: it brings numpy and the planner.)
        from ctxbench.protocols.cef.prereg import load_preregistration

        baseline = load_preregistration(prereg).baseline
    return read_run_trials(source.path, baseline=baseline, strata_labels=labels)


def _scripted(sections: list[Section]) -> dict[str, str]:
    """The drill-down's script hash and style when a section holds a drill-down."""
    if any('class="drill"' in s.body for s in sections):
        return {"script_hash": SCRIPT_HASH, "css": DRILL_CSS}
    return {}


def _summary(source: Source, views: list[tuple[str, View]]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if source.manifest is not None:
        m = source.manifest
        rows += [("model", m.at("provider").s("model")), ("provider", m.at("provider").s("name")),
                 ("seed", str(m.i("seed"))), ("ctxbench version", m.s("ctxbench_version"))]
    for _, view in views:
        if isinstance(view, CefReport):
            rows.append(("CEF claim class", view.claim_class.class_))
            rows.append(("CEF headline", " ".join(view.headlines) or "none"))
            base = view.methodology.baseline
            for claim in by_condition(view.summary.claims, lambda c: c.condition, base):
                rows.append((f"CEF claim {claim.condition}",
                             "holds" if claim.holds else "NO CLAIM"))
            for comp in by_condition(view.aggregate.comparisons, lambda c: c.condition, base):
                red = comp.context_reduction
                if red.estimate is not None:
                    rows.append((f"CEF context reduction {comp.condition}",
                                 f"{red.estimate * 100:.1f}%"))
        elif isinstance(view, PublicEvalReport):
            rows += [("public-eval status", view.status),
                     ("resolve-rate delta (pp)", f"{view.quality.resolved_delta_pp:+.2f}"),
                     ("margin (pp)", f"{view.quality.margin_pp:g}")]
        else:
            rows += [("ECEB claim class", view.claim_class.reported),
                     ("ECEB tasks qualified",
                      f"{view.summary.qualified} / {view.summary.tasks}"),
                     ("ECEB corpus root", view.corpus.root[:16])]
            rows += [(f"ECEB {name} mean token savings", bps(a.mean_token_savings_bps))
                     for name, a in view.aggregate.items() if a is not None]
    return rows


def _verdict(view: View) -> str:
    """One input's verdict in a line, as its own page's first block words it."""
    if isinstance(view, CefReport):
        if view.headlines:
            return " ".join(view.headlines)
        if view.claim_class.class_ == "conformance_fixture":
            return "CEF: no headline (a conformance fixture cannot support a product claim)."
        return "CEF: no headline (no claimed condition holds a quality-preserving context win)."
    if isinstance(view, PublicEvalReport):
        return f"public-eval status: {view.status}."
    return f"ECEB: {eceb_verdict(view)}"


def _title(source: Source, views: list[tuple[str, View]]) -> str:
    if source.is_run:
        return f"ctxbench run: {source.path.name or source.path}"
    view = views[0][1]
    if isinstance(view, CefReport):
        return f"{view.protocol.name} report"
    if isinstance(view, EcebReport):
        return f"ECEB-0.1 report: {view.benchmark_id}"
    return f"Public-eval comparison: {view.treatment.name} vs {view.baseline.name}"


def _notes(views: list[tuple[str, View]]) -> list[str]:
    """One input's notes, each once, in the order its reports give them."""
    return list(dict.fromkeys(n for _, v in views for n in (v.notes or ())))


def render_html(paths: Sequence[Path], out: Path) -> str:
    """The page for ``paths`` (report files or run directories), to be written at ``out``."""
    sources = [load_source(p) for p in paths]
    loaded = [(s, [(kind, _read(kind, doc)) for kind, doc in s.reports]) for s in sources]
    return _page(loaded, paths, out)


def render_report_html(kind: str, doc: Node) -> str:
    """The page of one report document (``kind`` as :data:`KINDS` names it), exactly as
    ``ctxbench report NAME --html`` renders the file ``doc.path`` names."""
    name = Path(doc.path)
    source = Source(name, ((kind, doc),), None, (), False)
    return _page([(source, [(kind, _read(kind, doc))])], [name], name.with_suffix(".html"))


def _page(loaded: list[tuple[Source, list[tuple[str, View]]]], paths: Sequence[Path],
          out: Path) -> str:
    ids = Ids()
    inputs = ", ".join(p.as_posix() for p in paths)
    footer = (f"Rendered by ctxbench from {esc(inputs)}. Every number on this page is read "
              "from the report JSON; the page loads nothing from the network.")
    runs = [run_trials(s, v) for s, v in loaded]
    if len(loaded) == 1:
        source, views = loaded[0]
        badges = [KINDS[k] for k, _ in views]
        notes = _notes(views)
        secs = _source_sections(source, views, ids, out, "", runs[0])
        return document(title=_title(source, views), subtitle=esc(source.path.as_posix()),
                        badges=badges, notes=notes, sections=secs, footer=footer,
                        **_scripted(secs))
    summaries = [_summary(s, v) for s, v in loaded]
    labels: list[str] = []
    for rows in summaries:
        labels += [k for k, _ in rows if k not in labels]
    cols = [f"{k + 1}. {s.path.as_posix()}" for k, (s, _) in enumerate(loaded)]
    grid = [[esc(label)] + [esc(dict(rows).get(label, "\u2014")) for rows in summaries]
            for label in labels]
    links = "".join(f'<li><a href="#r{k + 1}-top">{esc(c)}</a></li>' for k, c in enumerate(cols))
    # Every input's verdict first, so that the page opens on them; the details follow.
    verdicts = "".join(f'<p class="headline">{esc(cols[k])}: {esc(_verdict(v))}</p>'
                       for k, (_, views) in enumerate(loaded) for _, v in views)
    sections = [Section("compare", "Side by side",
                        verdicts + table(["", *cols], grid) + f"<ul>{links}</ul>")]
    if len(runs) == 2 and runs[0] is not None and runs[1] is not None:
        sections.append(diff_section(runs[0], runs[1], (cols[0], cols[1]), ("r1-", "r2-")))
    for k, (source, views) in enumerate(loaded):
        prefix = f"r{k + 1}-"
        secs = _source_sections(source, views, ids, out, prefix, runs[k])
        # Each input's notes stay with that input, never the whole page's banner.
        body = notes_block(_notes(views)) + "".join(
            f'<section id="{s.anchor}"><h3{heading_hint(s.hint)}>{esc(s.title)}</h3>'
            f"{s.body}</section>" for s in secs)
        sections.append(Section(f"{prefix}top", f"{k + 1}. {_title(source, views)}", body))
    return document(title=f"ctxbench: {len(loaded)} reports side by side", subtitle=esc(inputs),
                    badges=sorted({KINDS[k] for _, v in loaded for k, _ in v}), notes=[],
                    sections=sections, footer=footer, **_scripted(sections))


def write_html(paths: Sequence[Path], out: Path) -> Path:
    """Render ``paths`` and write the page to ``out`` atomically; return ``out``."""
    atomic_write_text(out, render_html(paths, out))
    return out
