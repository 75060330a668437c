"""The public-eval page: status, the gated resolve-rate delta, false stops, savings, arms.

Every number comes from the report model as written
(:meth:`~ctxbench.protocols.public_eval.model.PublicEvalReport.as_written`). Savings are
shown generically: every member of the report's ``savings`` becomes a row, in the
report's order, so a later metric needs no change to the model's readers here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.protocols.public_eval.model import PublicEvalReport, Status
from ctxbench.protocols.public_eval.model_io import Bounds
from ctxbench.protocols.public_eval.model_parts import Arm, ChangedCells, InputFile
from ctxbench.render.html.page import Section, figure, kv_table, table
from ctxbench.render.html.plots import ForestRow, forest
from ctxbench.render.html.svg import Ids, esc
from ctxbench.render.public_eval import claim_sentence

__all__ = ["public_eval_sections"]

_LABELS = {"tokens": "Tokens", "usd": "USD", "latency_ms": "Latency (ms)",
           "tool_calls": "Tool calls", "tokens_per_resolved": "Tokens per resolved task",
           "usd_per_resolved": "USD per resolved task"}
_STATUS_TEXT: dict[Status, str] = {
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


@dataclass(frozen=True, slots=True)
class Saving:
    """One row of the savings table and plot (a presentation of a ``savings`` member)."""

    metric: str
    basis: str | None
    """``net`` (agent + overhead), ``agent``, or None when the saving is not measured."""
    percent_saved: float | None
    ci: Bounds | None
    """The reported (studentized) interval; None for ratios with only a percentile one."""
    gate_low: float | None
    percentile_ci: Bounds | None
    baseline: float | None
    treatment: float | None


@dataclass(frozen=True, slots=True)
class Interval:
    """A resolve-rate-delta interval reported beside the gate; it never decides."""

    name: str
    short: str
    low: float | None
    high: float | None


def _savings_rows(report: PublicEvalReport) -> tuple[Saving, ...]:
    """Every ``savings`` member in the report's JSON order; unmeasured ones without numbers."""
    savings = report.savings
    entries = dict(savings.series())
    ratios = {"tokens_per_resolved": savings.tokens_per_resolved,
              "usd_per_resolved": savings.usd_per_resolved}
    out = []
    for key in savings.to_json():
        entry = entries.get(key)
        ratio = ratios.get(key)
        if entry is not None:
            out.append(Saving(key, entry.basis, entry.percent_saved, entry.ci,
                              entry.gate_lower_bound, entry.percentile_ci_not_gating,
                              entry.baseline_total, entry.treatment_total))
        elif ratio is not None:
            out.append(Saving(key, ratio.basis, ratio.percent_saved, None, None,
                              ratio.percentile_ci_not_gating, ratio.baseline, ratio.treatment))
        else:
            out.append(Saving(key, None, None, None, None, None, None, None))
    return tuple(out)


def _not_gating(report: PublicEvalReport) -> tuple[Interval, ...]:
    extra = report.quality.not_gating
    out = []
    if extra.bootstrap_ci_pp is not None:
        out.append(Interval(extra.bootstrap_method, "bootstrap", *extra.bootstrap_ci_pp))
    if extra.newcombe_hybrid_score_ci_pp is not None:
        out.append(Interval("newcombe hybrid score", "newcombe",
                            *extra.newcombe_hybrid_score_ci_pp))
    return tuple(out)


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


def _status(report: PublicEvalReport) -> str:
    css = "ok" if report.supported else "bad"
    meaning = _STATUS_TEXT.get(report.status)
    meaning_html = f" \u2014 {esc(meaning)}" if meaning else ""
    reasons = "".join(f"<li>{esc(r)}</li>" for r in report.reasons)
    warnings = ("<h3>Warnings</h3><ul>" + "".join(f"<li>{esc(w)}</li>"
                                                  for w in report.warnings)
                + "</ul>") if report.warnings else ""
    runs = report.runs_per_task
    shown = str(runs.min) if runs.min == runs.max else f"{runs.min} to {runs.max}"
    return (f'<p class="headline">Status: <span class="{css}">{esc(report.status)}</span>'
            f"{meaning_html}<br>{esc(claim_sentence(report))}</p><ul>{reasons}</ul><p>"
            f"{report.tasks} instances, {report.cells} paired cells (runs per instance: "
            f"{shown}).</p>{warnings}")


def _quality(report: PublicEvalReport, ids: Ids, level: str) -> str:
    q = report.quality
    not_gating = _not_gating(report)
    low, high = q.gate_ci_pp
    rows = [ForestRow("gate: score", q.resolved_delta_pp, low, high, q.non_inferior)]
    rows += [ForestRow(f"not gating: {i.short}", q.resolved_delta_pp, i.low, i.high, None)
             for i in not_gating]
    margin = -q.margin_pp
    verdict = ("a loss beyond the margin shown" if q.shows_loss else
               "non-inferior" if q.non_inferior else "not shown non-inferior")
    desc = (f"Resolve-rate delta {q.resolved_delta_pp:+.2f} pp; gating {level} interval "
            f"{_ci(q.gate_ci_pp, 2)} pp against the margin {margin:g} pp: {verdict}"
            + "".join(f"; not gating: {i.name} {_ci((i.low, i.high), 2)} pp"
                      for i in not_gating))
    svg = forest(ids, title=f"Resolve-rate delta (treatment - baseline) with its {level} "
                            "gating interval, the intervals that do not gate, and the "
                            "preregistered margin",
                 desc=desc, rows=rows, threshold=margin,
                 threshold_label=f"margin {margin:g} pp", axis_label="resolve-rate delta (pp)",
                 fmt=lambda v: f"{v:g}", domain=(-100.0, 100.0))
    fig = figure(svg, f"Non-inferior when the lower bound of the gating interval is at or "
                      f"above the dashed margin ({q.non_inferiority_gate}); only the first "
                      "row gates.")
    design = [] if q.design_effect is None else [
        ("Design effect of the instance clustering (descriptive, not gating)",
         f"{q.design_effect:.3f}")]
    numbers = kv_table([
        ("Resolve-rate delta", f"{q.resolved_delta_pp:+.2f} pp"),
        (f"Gating {level} interval", f"{_ci(q.gate_ci_pp, 2)} pp ({esc(q.gate_method)})"),
        *design,
        ("Margin", f"{q.margin_pp:g} pp"),
        ("Non-inferior (interval gate)", _yes(q.non_inferior, True)),
        ("Loss beyond the margin shown", _yes(q.shows_loss, False)),
        *((f"Not gating: {level} {i.short} interval", f"{_ci((i.low, i.high), 2)} pp "
           f"({esc(i.name)})") for i in not_gating),
        ("Not gating: point estimate within the margin",
         ("yes" if q.not_gating.point_estimate_within_margin else "no")
         + f" ({esc(q.not_gating.point_estimate_criterion)})"),
        ("Regressions (baseline resolved, treatment not)", str(q.regressions)),
        ("Recoveries (treatment resolved, baseline not)", str(q.recoveries)),
        ("Exact McNemar p (regressions vs recoveries)", f"{q.mcnemar_p:g}"),
    ], caption="Quality")
    return f'<div class="plots">{fig}</div>{numbers}'


_OPEN_GROUPS = 20
"""Lists of up to this many instances are shown open; longer ones start folded."""


def _changed(title: str, cells: ChangedCells, single_runs: bool) -> str:
    if cells.total == 0:
        return f"<h3>{esc(title)}: none</h3>"
    unit = "instances" if single_runs else "cells"
    listed = len(cells.listed)
    groups = cells.groups()
    shown = (f"all {cells.total:,} {unit} listed" if listed == cells.total else
             f"the first {listed:,} of {cells.total:,} {unit} (the report lists at "
             f"most {cells.limit:,}), in instance and run order")
    header = ["instance"] if single_runs else ["instance", "runs"]
    rows = [[f"<code>{esc(iid)}</code>"] if single_runs else
            [f"<code>{esc(iid)}</code>", ", ".join(str(r) for r in runs)]
            for iid, runs in groups]
    fold = " open" if len(groups) <= _OPEN_GROUPS else ""
    return (f"<details{fold}><summary>{esc(title)}: {esc(shown)}</summary>"
            f"{table(header, rows)}</details>")


def _instances(report: PublicEvalReport) -> str:
    single = report.single_runs
    q = report.quality
    return ("<p>Every cell whose outcome differs between the arms, by instance"
            + ("" if single else " and run") + ".</p>"
            + _changed("Regressions (baseline resolved, treatment not)", q.regressed_cells,
                       single)
            + _changed("Recoveries (treatment resolved, baseline not)", q.recovered_cells,
                       single))


def _false_stops(report: PublicEvalReport, ids: Ids, level: str) -> str:
    fs = report.false_stops
    if fs is None:
        return ("<p>No treatment row reviewed a stop, so the false-stop gate does not "
                "apply.</p>")
    low, high = (None if v is None else 100 * v for v in fs.ci)
    row = ForestRow("false-stop rate", 100 * fs.rate, low, high, not fs.exceeds_max)
    verdict = "exceeds" if fs.exceeds_max else "is within"
    desc = (f"{fs.false_stops} of {fs.reviewed_stops} reviewed stops judged false: "
            f"{100 * fs.rate:.1f}% ({level} CI {_ci((low, high))}%), which {verdict} the "
            f"maximum rate {100 * fs.max_rate:g}%")
    svg = forest(ids, title=f"Share of reviewed stops judged false, with its {level} "
                            "interval and the maximum rate", desc=desc, rows=[row],
                 threshold=100 * fs.max_rate, threshold_label=f"maximum {100 * fs.max_rate:g}%",
                 axis_label="false stops (% of reviewed stops)", fmt=lambda v: f"{v:g}%",
                 domain=(0.0, 100.0))
    numbers = kv_table([
        ("Reviewed stops (treatment)", str(fs.reviewed_stops)),
        ("Judged false", str(fs.false_stops)),
        ("False-stop rate", f"{100 * fs.rate:.1f}%"),
        (f"{level} interval (reported; the gate reads the rate)",
         f"{_ci((low, high))}% ({esc(fs.ci_method)})"),
        ("Maximum rate", f"{100 * fs.max_rate:g}%"),
        ("Exceeds the maximum", _yes(fs.exceeds_max, False)),
    ], caption="False stops")
    caption = ("False stops count against the treatment: status false_stop_risk when the "
               "rate exceeds the maximum.")
    return f'<div class="plots">{figure(svg, caption)}</div>{numbers}'


def _savings(report: PublicEvalReport, ids: Ids, level: str) -> str:
    ordered = _ordered(_savings_rows(report))
    minimum = report.methodology.min_savings_percent
    plotted = [s for s in ordered if s.ci is not None or s.basis is None]
    rows = [ForestRow(_short(s), s.percent_saved, *(s.ci or (None, None)), None,
                      "not measured" if s.basis is None else "undefined") for s in plotted]
    desc = "; ".join(f"{_label(s.metric)} ({_basis(s)}): " + (
        "not measured" if s.percent_saved is None else
        f"{s.percent_saved:.1f}% saved ({level} CI {_ci(s.ci)})") for s in plotted)
    svg = forest(ids, title=f"Savings with {level} studentized intervals (percent of the "
                            "baseline)", desc=desc, rows=rows,
                 threshold=minimum, threshold_label=f"minimum {minimum:g}%",
                 axis_label="percent saved (treatment vs baseline)", fmt=lambda v: f"{v:g}%",
                 domain=(None, 100.0))
    tokens = report.savings.tokens
    if tokens is not None and tokens.basis == "net":
        basis = ("Headline savings are net: the agent's total plus the intervention's own "
                 "overhead recorded in the rows. Gross (agent-only) savings are shown beside "
                 "them and do not decide the status.")
    else:
        basis = "No row records intervention overhead: savings are agent totals."
    half = (1.0 - report.methodology.confidence_level) / 2.0 * 100
    gate = (f"The token-savings gate reads the headline token row's gate bound, the lower "
            f"end of the symmetric {100 - half:g}% studentized bootstrap interval (one-sided "
            f"error at most {half:g}%), against the minimum {minimum:g}%. "
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


def _arms(report: PublicEvalReport, level: str) -> str:
    base, treat = report.baseline, report.treatment

    def rate(a: Arm) -> str:
        low, high = (None if v is None else v * 100 for v in a.resolve_rate.ci)
        return (f"{a.resolved} ({a.resolve_rate.estimate * 100:.1f}%, {level} CI "
                f"{_ci((low, high))}%)")

    def source(file: InputFile | None) -> tuple[str, str]:
        return ("not recorded", "not recorded") if file is None else (esc(file.file),
                                                                        str(file.rows))

    files = [source(report.inputs.baseline), source(report.inputs.treatment)]
    rows = [["Input file", files[0][0], files[1][0]],
            ["Rows", files[0][1], files[1][1]],
            ["Resolved", rate(base), rate(treat)]]
    rows += [[f"{_label(k)}, agent only", _amount(k, getattr(base, k)),
              _amount(k, getattr(treat, k))] for k in ("tokens", "usd", "latency_ms",
                                                       "tool_calls")]
    for group in ("token_breakdown", "governance"):
        parts = [getattr(arm, group) for arm in (base, treat)]
        if parts[0] is None:
            continue
        other = {} if parts[1] is None else parts[1].to_json()
        rows += [[k.replace("_", " "), _f(v, 0), _f(other.get(k), 0)]
                 for k, v in parts[0].to_json().items()]
    return table(["", f"baseline ({base.name})", f"treatment ({treat.name})"],
                 [[esc(r[0]), *r[1:]] for r in rows], caption="Both arms", numeric=(1, 2))


def public_eval_sections(report: PublicEvalReport, ids: Ids,
                         prefix: str = "") -> list[Section]:
    """Every section of a public-eval page, from the report as written."""
    report = report.as_written()
    level = f"{report.methodology.confidence_level * 100:g}%"
    methods = [(key.replace("_", " "), str(value))
               for key, value in report.methodology.to_json().items()]
    return [
        Section(f"{prefix}status", "Status", _status(report)),
        Section(f"{prefix}quality", "Resolve-rate delta and the margin",
                _quality(report, ids, level)),
        Section(f"{prefix}changed", "Regressions and recoveries by instance",
                _instances(report), nav="Regressions and recoveries"),
        Section(f"{prefix}false-stops", "False stops", _false_stops(report, ids, level)),
        Section(f"{prefix}savings", "Savings", _savings(report, ids, level)),
        Section(f"{prefix}arms", "Baseline and treatment", _arms(report, level)),
        Section(f"{prefix}methodology", "Methodology",
                kv_table([(k, esc(v)) for k, v in methods])),
    ]
