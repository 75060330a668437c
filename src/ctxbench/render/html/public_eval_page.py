"""The public-eval page: status, the gated resolve-rate delta, savings, both arms."""

from __future__ import annotations

from ctxbench.render.html.page import Section, figure, kv_table, table
from ctxbench.render.html.plots import ForestRow, forest
from ctxbench.render.html.public_eval_view import Arm, PublicEvalView
from ctxbench.render.html.svg import Ids, esc

__all__ = ["public_eval_sections"]

_LABELS = {"tokens": "Tokens", "usd": "USD", "latency_ms": "Latency (ms)",
           "tool_calls": "Tool calls", "tokens_per_resolved": "Tokens per resolved task",
           "usd_per_resolved": "USD per resolved task"}


def _label(metric: str) -> str:
    return _LABELS.get(metric, metric.replace("_", " "))


def _f(value: float | None, digits: int = 1) -> str:
    return "not measured" if value is None else f"{value:,.{digits}f}"


def _amount(metric: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    if "usd" in metric:
        return f"${value:,.4f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _ci(low: float | None, high: float | None, digits: int = 1) -> str:
    if low is None or high is None:
        return "undefined"
    return f"{low:.{digits}f} to {high:.{digits}f}"


def _status(view: PublicEvalView) -> str:
    css = "ok" if view.status == "supported" else "bad"
    reasons = "".join(f"<li>{esc(r)}</li>" for r in view.reasons)
    warnings = ("<h3>Warnings</h3><ul>" + "".join(f"<li>{esc(w)}</li>" for w in view.warnings)
                + "</ul>") if view.warnings else ""
    runs = (str(view.runs_min) if view.runs_min == view.runs_max
            else f"{view.runs_min} to {view.runs_max}")
    return (f'<p class="headline">Status: <span class="{css}">{esc(view.status)}</span><br>'
            f"{esc(view.claim)}</p><ul>{reasons}</ul><p>{view.tasks} instances, "
            f"{view.cells} paired cells (runs per instance: {runs}).</p>{warnings}")


def _quality(view: PublicEvalView, ids: Ids, level: str) -> str:
    low, high = view.delta_ci if view.delta_ci is not None else (None, None)
    rows = [ForestRow("gate: paired bootstrap", view.delta_pp, low, high, view.non_inferior)]
    rows += [ForestRow(name.replace("_", " "), view.delta_pp, lo, hi, None)
             for name, lo, hi in view.score_cis]
    margin = -view.margin_pp
    desc = (f"Resolve-rate delta {view.delta_pp:+.2f} pp; gating {level} interval "
            f"{_ci(low, high, 2)} pp against the margin {margin:g} pp: "
            + ("non-inferior" if view.non_inferior else "not shown non-inferior") + "; "
            + "; ".join(f"{name} interval {_ci(lo, hi, 2)} pp" for name, lo, hi in
                        view.score_cis))
    svg = forest(ids, title=f"Resolve-rate delta (treatment - baseline) with its {level} "
                            "gating interval and the preregistered margin",
                 desc=desc, rows=rows, threshold=margin,
                 threshold_label=f"margin {margin:g} pp", axis_label="resolve-rate delta (pp)",
                 fmt=lambda v: f"{v:g}")
    fig = figure(svg, f"Non-inferior when the lower bound of the gating interval is at or "
                      f"above the dashed margin ({view.gate}).")
    numbers = kv_table([
        ("Resolve-rate delta", f"{view.delta_pp:+.2f} pp"),
        (f"Gating interval ({esc(view.delta_method)})", f"{_ci(low, high, 2)} pp"),
        *((f"Score interval: {name.replace('_', ' ')}", f"{_ci(lo, hi, 2)} pp")
          for name, lo, hi in view.score_cis),
        ("Margin", f"{view.margin_pp:g} pp"),
        ("Non-inferior (interval gate)", '<span class="ok">yes</span>' if view.non_inferior
         else '<span class="bad">no</span>'),
        ("Regressions (baseline resolved, treatment not)", str(view.regressions)),
        ("Recoveries (treatment resolved, baseline not)", str(view.recoveries)),
        ("Exact McNemar p (regressions vs recoveries)", f"{view.mcnemar_p:g}"),
    ], caption="Quality")
    return (f'<div class="plots">{fig}</div>{numbers}<p class="meta">The report counts '
            "regressions and recoveries; it does not list them by instance.</p>")


def _savings(view: PublicEvalView, ids: Ids, level: str) -> str:
    rows = [ForestRow(_label(s.metric), s.percent_saved, s.low, s.high, None,
                      "not measured" if s.baseline is None else "undefined")
            for s in view.savings]
    desc = "; ".join(f"{_label(s.metric)}: " + (
        "not measured" if s.percent_saved is None else
        f"{s.percent_saved:.1f}% saved ({level} CI {_ci(s.low, s.high)})")
        for s in view.savings)
    svg = forest(ids, title=f"Savings with {level} intervals (percent of the baseline)",
                 desc=desc, rows=rows, threshold=view.min_savings_percent,
                 threshold_label=f"minimum {view.min_savings_percent:g}%",
                 axis_label="percent saved (treatment vs baseline)", fmt=lambda v: f"{v:g}%")
    tab = table(["metric", "baseline", "treatment", "percent saved", f"{level} interval"],
                [[esc(_label(s.metric)), _amount(s.metric, s.baseline),
                  _amount(s.metric, s.treatment),
                  "not measured" if s.percent_saved is None else f"{s.percent_saved:.1f}%",
                  _ci(s.low, s.high)] for s in view.savings],
                caption="Savings", numeric=(1, 2, 3))
    return f'<div class="plots">{figure(svg, "Positive: the treatment used less.")}</div>{tab}'


def _arms(base: Arm, treat: Arm, level: str) -> str:
    def rate(a: Arm) -> str:
        low, high = (None if v is None else v * 100 for v in a.resolve_ci)
        return (f"{a.resolved} ({a.resolve_rate * 100:.1f}%, {level} CI "
                f"{_ci(low, high)}%)")

    rows = [["Input file", esc(base.file), esc(treat.file)],
            ["Rows", str(base.rows), str(treat.rows)],
            ["Resolved", rate(base), rate(treat)]]
    rows += [[_label(k), _amount(k, v), _amount(k, tv)]
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
        Section(f"{prefix}savings", "Savings", _savings(view, ids, level)),
        Section(f"{prefix}arms", "Baseline and treatment", _arms(view.baseline,
                                                                 view.treatment, level)),
        Section(f"{prefix}methodology", "Methodology",
                kv_table([(k, esc(v)) for k, v in view.method_lines])),
    ]
