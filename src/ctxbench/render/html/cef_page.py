"""The CEF page: headline, per-stratum frontiers and H1-H4 forest plots, then the aggregate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxbench.protocols.cef.model import (
    CefReport,
    Comparison,
    Methodology,
    OperatingPoint,
)
from ctxbench.render.cef_frontier import frontier_cell, frontier_line
from ctxbench.render.html.page import Section, figure, kv_table, table
from ctxbench.render.html.plots import ForestRow, ScatterPoint, forest, scatter
from ctxbench.render.html.svg import Domain, Ids, esc
from ctxbench.render.order import by_condition
from ctxbench.render.outcomes import outcome_line
from ctxbench.render.plan import recorded_plan_line
from ctxbench.render.strata import short_label

__all__ = ["cef_sections", "cef_summary"]

Shown = Callable[[float | None], str]
Tick = Callable[[float], str]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


@dataclass(frozen=True, slots=True)
class Block:
    """A stratum or the aggregate as the page shows it: where it sits, and its parts."""

    anchor: str
    title: str
    nav: str
    points: tuple[OperatingPoint, ...]
    frontier: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    hint: str = ""


def _blocks(report: CefReport) -> list[Block]:
    """The strata then the aggregate, conditions in natural order (the baseline first)."""
    base = report.methodology.baseline

    def block(anchor: str, title: str, nav: str, points: tuple[OperatingPoint, ...],
              frontier: tuple[str, ...], comparisons: tuple[Comparison, ...],
              hint: str = "") -> Block:
        return Block(anchor, title, nav,
                     tuple(by_condition(points, lambda p: p.condition, base)), frontier,
                     tuple(by_condition(comparisons, lambda c: c.condition, base)), hint)

    out = []
    for i, s in enumerate(report.strata):
        title = f"Stratum: {short_label(s.label)} ({s.tasks} tasks)"
        full = f"Stratum: {s.label} ({s.tasks} tasks)"
        out.append(block(f"stratum-{i + 1}", title, f"Stratum {i + 1}", s.operating_points,
                         s.pareto_frontier, s.comparisons, "" if title == full else full))
    agg = report.aggregate
    out.append(block("aggregate", f"Aggregate over {agg.strata} stratum/strata "
                                  f"({agg.resampling})", "Aggregate",
                     agg.operating_points, agg.pareto_frontier, agg.comparisons))
    return out


def _method_lines(report: CefReport) -> list[tuple[str, str]]:
    """The preregistration, then every plain member of the methodology in written order."""
    prereg = report.preregistration
    out = [("preregistration", f"{prereg.source} (BLAKE3 {prereg.digest_blake3})")]
    plan = recorded_plan_line(prereg.document, report.aggregate.tasks)
    if plan is not None:
        out.append(("study plan (preregistered)", esc(plan)))
    for key, value in _plain(report.methodology):
        if isinstance(value, list):
            listed = (by_condition(value, str, report.methodology.baseline)
                      if key in ("conditions", "claimed_conditions") else value)
            shown = ", ".join(listed) or "none"
        elif isinstance(value, dict):
            shown = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in value.items()) or "none"
        else:
            shown = f"{value:g}" if isinstance(value, float) else str(value)
        out.append((key.replace("_", " "), shown))
    return out


def _plain(m: Methodology) -> list[tuple[str, Any]]:
    # As written (rounded), less the invocation, which the page shows as the command.
    return [(k, v) for k, v in m.to_json().items()
            if k not in ("invocation", "reproduce") and v is not None]


def _mark(passed: bool) -> str:
    return '<span class="ok">pass</span>' if passed else '<span class="bad">FAIL</span>'


_AXIS = {
    "task_score_delta": "task-score delta (candidate - baseline)",
    "evidence_recall_delta": "evidence-recall delta",
    "unsupported_claim_rate_delta": "unsupported-claim-rate delta (lower is better)",
    "context_reduction": "context reduction (1 - candidate/baseline tokens)",
}


# What each plotted quantity can take: a reduction is at most 100%; a score, recall or rate
# lies in [0, 1], so its delta in [-1, 1].
_REDUCTION: Domain = (None, 1.0)
_SCORE: Domain = (0.0, 1.0)
_DELTA: Domain = (-1.0, 1.0)


def _fmt_for(statistic: str) -> tuple[Shown, Tick]:
    if statistic == "context_reduction":
        return _pct, (lambda v: f"{v * 100:g}%")
    return _signed, (lambda v: f"{v:g}")


def _domain(statistic: str) -> Domain:
    return _REDUCTION if statistic == "context_reduction" else _DELTA


def _forests(ids: Ids, block: Block, level: str) -> str:
    if not block.comparisons:
        return "<p>No condition was compared with the baseline in this block.</p>"
    figs = []
    # One plot per hypothesis id, in the order the report lists them; each condition's own
    # margin is marked on its row when it differs from the plot's.
    firsts = {h.id: h for c in reversed(block.comparisons) for h in reversed(c.hypotheses)}
    order = list(dict.fromkeys(h.id for c in block.comparisons for h in c.hypotheses))
    for first in (firsts[i] for i in order):
        rows, lines = [], []
        shown, tick = _fmt_for(first.statistic)
        for comp in block.comparisons:
            hyp = next((h for h in comp.hypotheses if h.id == first.id), None)
            if hyp is None:
                continue
            iv = comp.statistic(hyp.statistic)
            rows.append(ForestRow(comp.condition, iv.estimate, iv.low, iv.high, hyp.passed,
                                  threshold=hyp.threshold))
            lines.append(f"{comp.condition}: {shown(iv.estimate)} "
                         f"[{shown(iv.low)}, {shown(iv.high)}]; "
                         f"{hyp.bound} bound {shown(hyp.bound_value)} "
                         f"{hyp.comparison} {shown(hyp.threshold)}: "
                         f"{'pass' if hyp.passed else 'FAIL'}")
        title = f"{first.id} {first.name}: {level} intervals against the preregistered margin"
        svg = forest(ids, title=title, desc="; ".join(lines), rows=rows,
                     threshold=first.threshold,
                     threshold_label=f"margin {shown(first.threshold)}",
                     axis_label=_AXIS.get(first.statistic, first.statistic),
                     fmt=tick, domain=_domain(first.statistic))
        figs.append(figure(svg, f"{first.id} passes when the {first.bound} bound is "
                                f"{first.comparison} the dashed margin."))
    return f'<div class="plots">{"".join(figs)}</div>'


_FRONTIER_CAPTION = (
    "A two-axis projection: the descriptive Pareto frontier is taken over six objectives "
    "(task score, evidence recall, unsupported-claim rate, mean context tokens, mean cost, "
    "mean latency), so a frontier point (diamond) may look dominated on these two axes, "
    "and no line joins them. On the frontier: ")


def _frontier(ids: Ids, block: Block, baseline: str, level: str) -> str:
    pts = [ScatterPoint(p.condition, p.context_tokens_mean, p.task_score,
                        highlight=p.on_pareto_frontier) for p in block.points]
    figs = []
    if pts:
        desc = "; ".join(f"{p.label}: {_num(p.x, 1)} mean context tokens, task score "
                         f"{_num(p.y)}{' (on the frontier)' if p.highlight else ''}"
                         for p in pts)
        svg = scatter(ids, title="Operating points on two of the Pareto frontier's six "
                                 "objectives: mean context tokens against task score "
                                 f"({block.title})",
                      desc=desc, points=pts, x_label="mean context tokens per trial",
                      y_label="task score", x_fmt=lambda v: f"{v:,.0f}",
                      y_fmt=lambda v: f"{v:g}", y_domain=_SCORE)
        figs.append(figure(svg, _FRONTIER_CAPTION + frontier_line(block.points) + "."))
    paired = [p for p in (_paired_point(c) for c in block.comparisons) if p is not None]
    if paired and block.comparisons:
        h1 = block.comparisons[0].hypotheses[0]
        h4 = block.comparisons[0].hypotheses[-1]
        desc = "; ".join(
            f"{p.label}: context reduction {_pct(p.x)} [{_pct(p.x_low)}, {_pct(p.x_high)}], "
            f"task-score delta {_signed(p.y)} [{_signed(p.y_low)}, {_signed(p.y_high)}]"
            f"{', quality-preserving context win' if p.passed else ', no claim'}"
            for p in paired)
        svg = scatter(ids, title=f"Paired against {baseline}: context reduction and task-score "
                                 f"delta with {level} intervals ({block.title})",
                      desc=desc, points=paired, x_label="context reduction",
                      y_label="task-score delta", x_fmt=lambda v: f"{v * 100:g}%",
                      y_fmt=lambda v: f"{v:g}",
                      x_line=(h4.threshold, f"H4 margin {_pct(h4.threshold)}"),
                      y_line=(h1.threshold, f"H1 margin {_signed(h1.threshold)}"),
                      x_domain=_REDUCTION, y_domain=_DELTA)
        figs.append(figure(svg, f"Each condition at its paired estimates with {level} "
                                "intervals on both axes; filled circle: quality-preserving "
                                "context win, crossed square: no claim."))
    return f'<div class="plots">{"".join(figs)}</div>'


def _paired_point(c: Comparison) -> ScatterPoint | None:
    red, delta = c.context_reduction, c.task_score_delta
    if red.estimate is None or delta.estimate is None:
        return None
    return ScatterPoint(c.condition, red.estimate, delta.estimate, red.low, red.high,
                        delta.low, delta.high, passed=c.quality_preserving_context_win)


def _iv(c: Comparison, statistic: str, fmt: Shown) -> str:
    iv = c.statistic(statistic)
    return (f"{fmt(iv.estimate)} [{fmt(iv.low)}, "
            f"{fmt(iv.high)}]")


def _block_tables(block: Block, level: str) -> str:
    points = table(
        ["condition", "trials", "failures", "task score", "evidence recall",
         "unsupported-claim rate", "mean context tokens", "mean cost (USD)",
         "mean latency (ms)", "Pareto frontier"],
        [[esc(p.condition), str(p.trials), str(p.failures), _num(p.task_score),
          _num(p.evidence_recall), _num(p.unsupported_claim_rate),
          _num(p.context_tokens_mean, 1), _num(p.billed_cost_usd_mean, 6),
          _num(p.latency_ms_mean, 1), esc(frontier_cell(p))]
         for p in block.points],
        caption="Operating points", numeric=(1, 2, 3, 4, 5, 6, 7, 8))
    rows = []
    for c in block.comparisons:
        cells = [esc(c.condition), str(c.paired_units) if c.paired_units == c.evaluable_units
                 else f"{c.paired_units} ({c.evaluable_units} with both sides succeeded)"]
        for h in c.hypotheses:
            shown, _ = _fmt_for(h.statistic)
            cells.append(f"{_iv(c, h.statistic, shown)} {_mark(h.passed)}")
        cells += [str(c.failed_pairs.either_side),
                  f"<strong>{esc(c.claim)}</strong>" if c.quality_preserving_context_win
                  else esc(c.claim)]
        rows.append(cells)
    header = ["condition", "paired units"]
    if block.comparisons:
        header += [f"{h.id} {h.name}" for h in block.comparisons[0].hypotheses]
    paired = table([*header, "failed pairs (zero credit)", "claim"], rows,
                   caption=f"Paired results against the baseline ({level} intervals)")
    secondary = table(
        ["condition", "mean per-pair context reduction", "cost reduction", "latency reduction"],
        [[esc(c.condition), _iv(c, "mean_pair_context_reduction", _pct),
          _iv(c, "cost_reduction", _pct), _iv(c, "latency_reduction", _pct)]
         for c in block.comparisons], caption="Secondary reductions")
    reasons = "".join(
        f"<li><strong>{esc(c.condition)}: NO CLAIM</strong>{_why(c)}<ul>"
        + "".join(f"<li>{esc(r)}</li>" for r in c.reasons) + "</ul></li>" if c.reasons else
        f"<li>{esc(c.condition)}: all four hypotheses pass with {c.paired_units} paired "
        "units</li>" for c in block.comparisons)
    return points + paired + secondary + f"<h3>Claims</h3><ul>{reasons}</ul>"


def _why(c: Comparison) -> str:
    """The NO CLAIM line's reason per failed hypothesis (render.outcomes), escaped."""
    line = outcome_line(c)
    return "" if line is None else f": {esc(line)}"


def _block(ids: Ids, block: Block, baseline: str, level: str) -> Section:
    body = (_frontier(ids, block, baseline, level) + "<h3>H1-H4 forest plots</h3>"
            + _forests(ids, block, level) + _block_tables(block, level))
    return Section(block.anchor, block.title, body, block.nav, block.hint)


def cef_summary(report: CefReport) -> str:
    """The headline block: the headlines exactly as written in the report, and the claims."""
    headlines = report.headlines
    if headlines:
        heads = "".join(f'<p class="headline">{esc(h)}</p>' for h in headlines)
    elif report.claim_class.class_ == "conformance_fixture":
        heads = ('<p class="headline">No headline: this is a conformance fixture, which cannot '
                 "support a product claim.</p>")
    else:
        heads = ('<p class="headline">No headline: no claimed condition holds a '
                 "quality-preserving context win.</p>")
    claims = table(["condition", "claimed", "aggregate result", "failed strata"],
                   [[esc(c.condition), "yes" if c.claimed else "no",
                     '<span class="ok">quality_preserving_context_win</span>' if c.holds
                     else '<span class="bad">NO CLAIM</span>',
                     esc("; ".join(c.failed_strata) or "none")]
                    for c in by_condition(report.summary.claims, lambda c: c.condition,
                                          report.methodology.baseline)],
                   caption="Claims over all strata")
    return heads + claims


def cef_sections(report: CefReport, ids: Ids, prefix: str = "") -> list[Section]:
    """Every section of a CEF page, strata before the aggregate."""
    m = report.methodology
    level = f"{m.confidence_level * 100:g}%"
    out = [Section(f"{prefix}headline", "Headline and claims", cef_summary(report))]
    for block in _blocks(report):
        sec = _block(ids, block, m.baseline, level)
        out.append(Section(prefix + sec.anchor, sec.title, sec.body, sec.nav, sec.hint))
    failures = report.failures
    fail_rows = [("Failed trials (kept, with the preregistered failure scores)",
                  f"{failures.trials_failed}; by condition: "
                  + esc(", ".join(f"{k} {v}" for k, v in by_condition(
                      failures.by_condition.items(), lambda kv: kv[0], m.baseline)))),
                 ("Recorded scores overridden by failure scores",
                  f"{failures.overridden_failure_scores.trials}"),
                 ("Pairs with a failure, credited zero reduction",
                  esc(", ".join(f"{k} {v}" for k, v in
                                failures.failed_pairs_credited_zero_reduction.items())
                      or "none"))]
    excl = table(["task", "workload", "reason", "trials removed"],
                 [[esc(e.task_id), esc(e.workload or "all"), esc(e.reason),
                   str(e.trials_removed)] for e in report.exclusions],
                 caption="Exclusions (preregistered, infrastructure only)", numeric=(3,)
                 ) if report.exclusions else "<p>Exclusions: none.</p>"
    out.append(Section(f"{prefix}failures", "Failures and exclusions",
                       kv_table(fail_rows) + excl))
    out.append(Section(f"{prefix}caveats", "Caveats",
                       "<ul>" + "".join(f"<li>{esc(c)}</li>" for c in report.caveats)
                       + "</ul>"))
    method = [(k, esc(v)) for k, v in _method_lines(report)]
    if m.reproduce:
        method.append(("Reproduce", f"<code>{esc(m.reproduce)}</code>"))
    out.append(Section(f"{prefix}methodology", "Methodology", kv_table(method)))
    return out
