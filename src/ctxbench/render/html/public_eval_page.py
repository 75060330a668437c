"""The public-eval page: status, the gated resolve-rate delta, false stops, savings, arms."""

from __future__ import annotations

from ctxbench.render.html.page import Section, figure, kv_table, table
from ctxbench.render.html.plots import ForestRow, forest
from ctxbench.render.html.public_eval_view import (
    Arm,
    Bounds,
    ChangedCells,
    PublicEvalView,
    Saving,
)
from ctxbench.render.html.svg import Ids, esc

__all__ = ["public_eval_sections"]

_LABELS = {"tokens": "Tokens", "usd": "USD", "latency_ms": "Latency (ms)",
           "tool_calls": "Tool calls", "tokens_per_resolved": "Tokens per resolved task",
           "usd_per_resolved": "USD per resolved task"}
_STATUS_TEXT = {
    "supported": "non-inferior on the resolve rate, within the false-stop limit, and "
                 "saving tokens",
    "no_savings": "the token-savings gate did not pass: the lower bound of the headline "
                  "token-savings interval is not above the minimum, or it is undefined",
    "false_stop_risk": "the share of reviewed stops judged false exceeds the maximum rate",
    "not_non_inferior": "non-inferiority not shown: the lower bound of the gating interval "
                        "is below the margin; this is not evidence of a loss",
    "quality_loss": "a loss beyond the margin is shown: the upper bound of the gating "
                    "interval is below the margin",
    "not_evaluable": "too few instances, or an arm resolved nothing: no verdict",
}


def _label(metric: str) -> str:
    metric = metric.removeprefix("gross_")
    return _LABELS.get(metric, metric.replace("_", " "))


def _ordered(savings: tuple[Saving, ...]) -> list[Saving]:
    """The report's order, with each gross row moved right after its net headline row."""
    gross = {s.metric.removeprefix("gross_"): s for s in savings
             if s.metric.startswith("gross_")}
    out = []
    for s in savings:
        if s.metric.startswith("gross_") and s.metric.removeprefix("gross_") in \
                {t.metric for t in savings}:
            continue
        out.append(s)
        if s.metric in gross:
            out.append(gross[s.metric])
    return out


def _basis(s: Saving) -> str:
    if s.basis is None:
        return "not measured"
    text = "net: agent + overhead" if s.basis == "net" else "agent only"
    if s.metric.startswith("gross_"):
        text += " (gross)"
    return text + (" (headline)" if s.metric == "tokens" else "")


def _short(s: Saving) -> str:
    """The forest row label: the metric and, where it differs, which basis."""
    if s.metric.startswith("gross_"):
        return f"{_label(s.metric)} gross"
    if s.basis == "net":
        return f"{_label(s.metric)} net" + (" (headline)" if s.metric == "tokens" else "")
    return f"{_label(s.metric)} (headline)" if s.metric == "tokens" else _label(s.metric)


def _f(value: float | None, digits: int = 1) -> str:
    return "not measured" if value is None else f"{value:,.{digits}f}"


def _amount(metric: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    if "usd" in metric:
        return f"${value:,.4f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _ci(bounds: Bounds | None, digits: int = 1) -> str:
    if bounds is None or bounds[0] is None or bounds[1] is None:
        return "undefined"
    return f"{bounds[0]:.{digits}f} to {bounds[1]:.{digits}f}"


def _yes(value: bool, good: bool) -> str:
    css = "ok" if value == good else "bad"
    return f'<span class="{css}">{"yes" if value else "no"}</span>'


def _status(view: PublicEvalView) -> str:
    css = "ok" if view.status == "supported" else "bad"
    meaning = _STATUS_TEXT.get(view.status)
    meaning_html = f" \u2014 {esc(meaning)}" if meaning else ""
    reasons = "".join(f"<li>{esc(r)}</li>" for r in view.reasons)
    warnings = ("<h3>Warnings</h3><ul>" + "".join(f"<li>{esc(w)}</li>" for w in view.warnings)
                + "</ul>") if view.warnings else ""
    runs = (str(view.runs_min) if view.runs_min == view.runs_max
            else f"{view.runs_min} to {view.runs_max}")
    return (f'<p class="headline">Status: <span class="{css}">{esc(view.status)}</span>'
            f"{meaning_html}<br>{esc(view.claim)}</p><ul>{reasons}</ul><p>{view.tasks} "
            f"instances, {view.cells} paired cells (runs per instance: {runs}).</p>{warnings}")


def _quality(view: PublicEvalView, ids: Ids, level: str) -> str:
    low, high = view.gate_ci
    rows = [ForestRow("gate: Tango score", view.delta_pp, low, high, view.non_inferior)]
    rows += [ForestRow(f"not gating: {i.short}", view.delta_pp, i.low, i.high, None)
             for i in view.not_gating]
    margin = -view.margin_pp
    verdict = ("a loss beyond the margin shown" if view.shows_loss else
               "non-inferior" if view.non_inferior else "not shown non-inferior")
    desc = (f"Resolve-rate delta {view.delta_pp:+.2f} pp; gating {level} interval "
            f"{_ci(view.gate_ci, 2)} pp against the margin {margin:g} pp: {verdict}"
            + "".join(f"; not gating: {i.name} {_ci((i.low, i.high), 2)} pp"
                      for i in view.not_gating))
    svg = forest(ids, title=f"Resolve-rate delta (treatment - baseline) with its {level} "
                            "gating interval, the intervals that do not gate, and the "
                            "preregistered margin",
                 desc=desc, rows=rows, threshold=margin,
                 threshold_label=f"margin {margin:g} pp", axis_label="resolve-rate delta (pp)",
                 fmt=lambda v: f"{v:g}")
    fig = figure(svg, f"Non-inferior when the lower bound of the gating interval is at or "
                      f"above the dashed margin ({view.gate}); only the first row gates.")
    design = [] if view.design_effect is None else [
        ("Design effect of the instance clustering (divides the gate's counts)",
         f"{view.design_effect:.3f}")]
    numbers = kv_table([
        ("Resolve-rate delta", f"{view.delta_pp:+.2f} pp"),
        (f"Gating {level} interval", f"{_ci(view.gate_ci, 2)} pp ({esc(view.gate_method)})"),
        *design,
        ("Margin", f"{view.margin_pp:g} pp"),
        ("Non-inferior (interval gate)", _yes(view.non_inferior, True)),
        ("Loss beyond the margin shown", _yes(view.shows_loss, False)),
        *((f"Not gating: {level} {i.short} interval", f"{_ci((i.low, i.high), 2)} pp "
           f"({esc(i.name)})") for i in view.not_gating),
        ("Not gating: point estimate within the margin", ("yes" if view.point_within_margin
                                                           else "no")
         + f" ({esc(view.point_criterion)})"),
        ("Regressions (baseline resolved, treatment not)", str(view.regressions)),
        ("Recoveries (treatment resolved, baseline not)", str(view.recoveries)),
        ("Exact McNemar p (regressions vs recoveries)", f"{view.mcnemar_p:g}"),
    ], caption="Quality")
    return f'<div class="plots">{fig}</div>{numbers}'


_OPEN_GROUPS = 20
"""Lists of up to this many instances are shown open; longer ones start folded."""


def _changed(title: str, cells: ChangedCells, single_runs: bool) -> str:
    if cells.total == 0:
        return f"<h3>{esc(title)}: none</h3>"
    unit = "instances" if single_runs else "cells"
    shown = (f"all {cells.total:,} {unit} listed" if cells.listed == cells.total else
             f"the first {cells.listed:,} of {cells.total:,} {unit} (the report lists at "
             f"most {cells.limit:,}), in instance and run order")
    header = ["instance"] if single_runs else ["instance", "runs"]
    rows = [[f"<code>{esc(iid)}</code>"] if single_runs else
            [f"<code>{esc(iid)}</code>", ", ".join(str(r) for r in runs)]
            for iid, runs in cells.groups]
    fold = " open" if len(cells.groups) <= _OPEN_GROUPS else ""
    return (f"<details{fold}><summary>{esc(title)}: {esc(shown)}</summary>"
            f"{table(header, rows)}</details>")


def _instances(view: PublicEvalView) -> str:
    single = view.runs_max == 1
    return ("<p>Every cell whose outcome differs between the arms, by instance"
            + ("" if single else " and run") + ".</p>"
            + _changed("Regressions (baseline resolved, treatment not)", view.regressed, single)
            + _changed("Recoveries (treatment resolved, baseline not)", view.recovered, single))


def _false_stops(view: PublicEvalView, ids: Ids, level: str) -> str:
    fs = view.false_stops
    if fs is None:
        return ("<p>No treatment row reviewed a stop, so the false-stop gate does not "
                "apply.</p>")
    low, high = (None if v is None else 100 * v for v in fs.ci)
    row = ForestRow("false-stop rate", 100 * fs.rate, low, high, not fs.exceeds)
    verdict = "exceeds" if fs.exceeds else "is within"
    desc = (f"{fs.false} of {fs.reviewed} reviewed stops judged false: "
            f"{100 * fs.rate:.1f}% ({level} CI {_ci((low, high))}%), which {verdict} the "
            f"maximum rate {100 * fs.max_rate:g}%")
    svg = forest(ids, title=f"Share of reviewed stops judged false, with its {level} "
                            "interval and the maximum rate", desc=desc, rows=[row],
                 threshold=100 * fs.max_rate, threshold_label=f"maximum {100 * fs.max_rate:g}%",
                 axis_label="false stops (% of reviewed stops)", fmt=lambda v: f"{v:g}%")
    numbers = kv_table([
        ("Reviewed stops (treatment)", str(fs.reviewed)),
        ("Judged false", str(fs.false)),
        ("False-stop rate", f"{100 * fs.rate:.1f}%"),
        (f"{level} interval (reported; the gate reads the rate)",
         f"{_ci((low, high))}% ({esc(fs.method)})"),
        ("Maximum rate", f"{100 * fs.max_rate:g}%"),
        ("Exceeds the maximum", _yes(fs.exceeds, False)),
    ], caption="False stops")
    caption = ("False stops count against the treatment: status false_stop_risk when the "
               "rate exceeds the maximum.")
    return f'<div class="plots">{figure(svg, caption)}</div>{numbers}'


def _savings(view: PublicEvalView, ids: Ids, level: str) -> str:
    ordered = _ordered(view.savings)
    plotted = [s for s in ordered if s.ci is not None or s.basis is None]
    rows = [ForestRow(_short(s), s.percent_saved, *(s.ci or (None, None)), None,
                      "not measured" if s.basis is None else "undefined") for s in plotted]
    desc = "; ".join(f"{_label(s.metric)} ({_basis(s)}): " + (
        "not measured" if s.percent_saved is None else
        f"{s.percent_saved:.1f}% saved ({level} CI {_ci(s.ci)})") for s in plotted)
    svg = forest(ids, title=f"Savings with {level} studentized intervals (percent of the "
                            "baseline)", desc=desc, rows=rows,
                 threshold=view.min_savings_percent,
                 threshold_label=f"minimum {view.min_savings_percent:g}%",
                 axis_label="percent saved (treatment vs baseline)", fmt=lambda v: f"{v:g}%")
    if view.headline_basis == "net":
        basis = ("Headline savings are net: the agent's total plus the intervention's own "
                 "overhead recorded in the rows. Gross (agent-only) savings are shown beside "
                 "them and do not decide the status.")
    else:
        basis = "No row records intervention overhead: savings are agent totals."
    half = (1.0 - view.confidence) / 2.0 * 100
    gate = (f"The token-savings gate reads the headline token row's gate bound, the lower "
            f"end of the symmetric {100 - half:g}% studentized bootstrap interval (one-sided "
            f"error at most {half:g}%), against the minimum {view.min_savings_percent:g}%. "
            f"The {level} studentized intervals are the reported intervals and do not gate; "
            "percentile intervals are shown for comparison only.")
    tab = table(["metric", "basis", "baseline", "treatment", "percent saved",
                 f"{level} studentized interval", "gate bound (one-sided; gates tokens)",
                 f"{level} percentile interval (not gating)"],
                [[esc(_label(s.metric)), esc(_basis(s)), _amount(s.metric, s.baseline),
                  _amount(s.metric, s.treatment),
                  "not measured" if s.percent_saved is None else f"{s.percent_saved:.1f}%",
                  "none (percentile only)" if s.ci is None and s.basis is not None
                  else _ci(s.ci), "none" if s.gate_low is None else f"{s.gate_low:.1f}%",
                  _ci(s.percentile_ci)] for s in ordered],
                caption="Savings", numeric=(2, 3, 4, 6))
    return (f"<p>{esc(basis)} {esc(gate)}</p>"
            f'<div class="plots">{figure(svg, "Positive: the treatment used less.")}</div>'
            f"{tab}")


def _arms(base: Arm, treat: Arm, level: str) -> str:
    def rate(a: Arm) -> str:
        low, high = (None if v is None else v * 100 for v in a.resolve_ci)
        return (f"{a.resolved} ({a.resolve_rate * 100:.1f}%, {level} CI "
                f"{_ci((low, high))}%)")

    rows = [["Input file", esc(base.file), esc(treat.file)],
            ["Rows", str(base.rows), str(treat.rows)],
            ["Resolved", rate(base), rate(treat)]]
    rows += [[f"{_label(k)}, agent only", _amount(k, v), _amount(k, tv)]
             for (k, v), (_, tv) in zip(base.totals, treat.totals, strict=True)]
    bd_t = dict(treat.breakdown)
    rows += [[k.replace("_", " "), _f(v, 0), _f(bd_t.get(k), 0)] for k, v in base.breakdown]
    gov_t = dict(treat.governance)
    rows += [[k.replace("_", " "), _f(v, 0), _f(gov_t.get(k), 0)] for k, v in base.governance]
    return table(["", f"baseline ({base.name})", f"treatment ({treat.name})"],
                 [[esc(r[0]), *r[1:]] for r in rows], caption="Both arms", numeric=(1, 2))


def public_eval_sections(view: PublicEvalView, ids: Ids, prefix: str = "") -> list[Section]:
    """Every section of a public-eval page."""
    level = f"{view.confidence * 100:g}%"
    return [
        Section(f"{prefix}status", "Status", _status(view)),
        Section(f"{prefix}quality", "Resolve-rate delta and the margin",
                _quality(view, ids, level)),
        Section(f"{prefix}changed", "Regressions and recoveries by instance",
                _instances(view), nav="Regressions and recoveries"),
        Section(f"{prefix}false-stops", "False stops", _false_stops(view, ids, level)),
        Section(f"{prefix}savings", "Savings", _savings(view, ids, level)),
        Section(f"{prefix}arms", "Baseline and treatment", _arms(view.baseline,
                                                                 view.treatment, level)),
        Section(f"{prefix}methodology", "Methodology",
                kv_table([(k, esc(v)) for k, v in view.method_lines])),
    ]
