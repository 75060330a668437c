"""Render a public-eval report model as Markdown (formatting only, no math).

The renderer reads :class:`~ctxbench.protocols.public_eval.model.PublicEvalReport` as
written (:meth:`~ctxbench.protocols.public_eval.model.PublicEvalReport.as_written`), so
the Markdown of a fresh analysis and of its ``report.json`` read back are the same bytes.
"""

from __future__ import annotations

import re

from ctxbench.protocols.public_eval.model import PerResolvedSaving, PublicEvalReport, Saving
from ctxbench.protocols.public_eval.model_io import Bounds
from ctxbench.protocols.public_eval.model_parts import Arm, ChangedCells, PerResolved

__all__ = ["claim_sentence", "render_markdown"]

_DASH = "\u2014"
_EN_DASH = "\u2013"
_BREAKDOWN_LABELS = {
    "input_tokens": "Input tokens (uncached)",
    "cached_input_tokens": "Cached input tokens",
    "output_tokens": "Output tokens",
    "reasoning_tokens": "Reasoning tokens",
    "total_tokens": "Total tokens (breakdown)",
}
_GOVERNANCE_LABELS = {
    "repeated_calls": "Repeated calls",
    "governance_tokens": "Governance tokens",
    "governance_usd": "Governance USD",
    "governance_latency_ms": "Governance latency (ms)",
    "reviewed_stops": "Reviewed stops",
    "false_stops": "False stops",
}


def _level(report: PublicEvalReport) -> str:
    return f"{report.methodology.confidence_level * 100:g}%"


def _range(ci: Bounds | None, digits: int = 1) -> str:
    """``31.0–45.2`` for non-negative bounds, ``-2.1 to 1.3`` otherwise."""
    if ci is None or ci[0] is None or ci[1] is None:
        return "undefined"
    low, high = f"{ci[0]:.{digits}f}", f"{ci[1]:.{digits}f}"
    if ci[0] >= 0 and ci[1] >= 0:
        return f"{low}{_EN_DASH}{high}"
    return f"{low} to {high}"


def _saving(entry: Saving | PerResolvedSaving | None, level: str,
            noun: str = "") -> str | None:
    """``31.0% fewer[ noun] (95% CI ...)``, or None when the saving is undefined."""
    if entry is None or entry.percent_saved is None:
        return None
    pct = entry.percent_saved
    noun = f" {noun}" if noun else ""
    if isinstance(entry, Saving):
        ci, kind = entry.ci, "CI"
    else:
        ci, kind = entry.percentile_ci_not_gating, "percentile CI, not gating"
    if pct >= 0:
        return f"{pct:.1f}% fewer{noun} ({level} {kind} {_range(ci)})"
    return f"{-pct:.1f}% more{noun} ({level} {kind} of the saving {_range(ci)})"


def _noun(entry: Saving | None, noun: str) -> str:
    if entry is not None and entry.basis == "net":
        return f"{noun} net of governance overhead"
    return noun


def claim_sentence(report: PublicEvalReport) -> str:
    """The protocol's claim form: cost and quality together, with intervals and margin."""
    report = report.as_written()
    level = _level(report)
    quality = report.quality
    if quality.shows_loss:
        verdict = "a loss beyond the margin"
    else:
        verdict = "non-inferior" if quality.non_inferior else "not shown non-inferior"
    entry = report.savings.tokens
    tokens = _saving(entry, level, _noun(entry, "tokens")) or "token savings undefined"
    return (
        f"{tokens} with a "
        f"{quality.resolved_delta_pp:.1f} pp resolve-rate delta ({level} CI "
        f"{_range(quality.gate_ci_pp)}) under a preregistered {quality.margin_pp:.1f} pp "
        f"margin: {verdict}."
    )


def _count(value: float | None) -> str:
    if value is None:
        return "not measured"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _usd(value: float | None) -> str:
    return "not measured" if value is None else f"${value:,.4f}"


def _ms(value: float | None) -> str:
    return "not measured" if value is None else f"{value:,.0f} ms"


def _with_ci(est: PerResolved | None, fmt: str, level: str) -> str:
    if est is None:
        return "undefined"
    text = fmt.format(est.estimate)
    if est.ci is None:
        return text
    low, high = (fmt.format(v) for v in est.ci)
    return f"{text} ({level} CI {low} to {high})"


def _change(entry: Saving | PerResolvedSaving | None, level: str) -> str:
    return _saving(entry, level) or _DASH


def _bound(value: float | None) -> float:
    """A Wilson bound (always defined: the rate has at least one cell)."""
    if value is None:
        raise ValueError("expected a defined resolve-rate bound, got null")
    return value


def _rate(arm: Arm, cells: int, level: str) -> str:
    rate = arm.resolve_rate
    low, high = (_bound(v) for v in rate.ci)
    return (f"{arm.resolved} / {cells} ({rate.estimate * 100:.1f}%, {level} CI "
            f"{low * 100:.1f}{_EN_DASH}{high * 100:.1f})")


_FORMATS = {"tokens": ("Tokens", _count), "usd": ("USD", _usd),
            "latency_ms": ("Latency", _ms), "tool_calls": ("Tool calls", _count)}


def _metric_rows(report: PublicEvalReport, level: str) -> list[tuple[str, str, str, str]]:
    """Agent totals, then for metrics with overhead the net (headline) and gross rows."""
    savings = dict(report.savings.series())
    rows = []
    for metric, (label, fmt) in _FORMATS.items():
        entry = savings[metric]
        totals = (getattr(report.baseline, metric), getattr(report.treatment, metric))
        if f"gross_{metric}" not in savings:
            rows.append((label, fmt(totals[0]), fmt(totals[1]), _change(entry, level)))
            continue
        gross = savings[f"gross_{metric}"]
        rows.append((f"{label}, agent only (gross)", fmt(totals[0]), fmt(totals[1]),
                     _change(gross, level)))
        net = (None, None) if entry is None else (entry.baseline_total, entry.treatment_total)
        rows.append((f"**{label}, net: agent + governance (headline)**", fmt(net[0]),
                     fmt(net[1]), _change(entry, level)))
    return rows


def _table(report: PublicEvalReport, level: str) -> list[str]:
    base, treat, savings = report.baseline, report.treatment, report.savings
    quality = report.quality
    rows = [
        ("Resolved", _rate(base, report.cells, level), _rate(treat, report.cells, level),
         f"{quality.resolved_delta_pp:+.1f} pp ({level} CI {_range(quality.gate_ci_pp)})"),
        *_metric_rows(report, level),
        ("Tokens per resolved task", _with_ci(base.tokens_per_resolved, "{:,.1f}", level),
         _with_ci(treat.tokens_per_resolved, "{:,.1f}", level),
         _change(savings.tokens_per_resolved, level)),
        ("USD per resolved task", _with_ci(base.usd_per_resolved, "${:,.4f}", level),
         _with_ci(treat.usd_per_resolved, "${:,.4f}", level),
         _change(savings.usd_per_resolved, level)),
    ]
    for group, labels in (("token_breakdown", _BREAKDOWN_LABELS),
                          ("governance", _GOVERNANCE_LABELS)):
        if getattr(base, group) is None and getattr(treat, group) is None:
            continue
        for key, label in labels.items():
            values = [_DASH if getattr(arm, group) is None
                      else _count(getattr(getattr(arm, group), key)) for arm in (base, treat)]
            rows.append((label, values[0], values[1], _DASH))
    out = [f"| Metric | Baseline ({base.name}) | Treatment ({treat.name}) | Change |",
           "|---|---:|---:|---|"]
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return out


def _code(text: str) -> str:
    """A Markdown code span that holds ``text`` whatever backticks it contains (CommonMark)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    pad = " " if longest else ""
    return f"{'`' * (longest + 1)}{pad}{text}{pad}{'`' * (longest + 1)}"


def _cells(title: str, entry: ChangedCells, single_runs: bool) -> list[str]:
    total, listed = entry.total, entry.listed
    if total == 0:
        return [f"- {title}: none"]
    unit = "instance" if single_runs else "cell"
    shown = (f"all {total:,} {unit}s listed" if len(listed) == total else
             f"the first {len(listed):,} of {total:,} {unit}s in (instance_id, run) order")
    items = [_code(iid) if single_runs else
             f"{_code(iid)} (run{'s' if len(runs) > 1 else ''} "
             f"{', '.join(str(r) for r in runs)})" for iid, runs in entry.groups()]
    return [f"- {title}, {shown}: {', '.join(items)}"]


def render_markdown(report: PublicEvalReport) -> str:
    """The Markdown report: verdict, claim sentence, metric table, quality, warnings."""
    report = report.as_written()
    level = _level(report)
    quality = report.quality
    base, treat = report.baseline, report.treatment
    runs = report.runs_per_task
    run_text = f"{runs.min}" if runs.min == runs.max else f"{runs.min}{_EN_DASH}{runs.max}"
    lines = [
        f"# Public-eval comparison: {treat.name} vs {base.name}",
        "",
        f"**Status: {report.status}**",
        "",
        *[f"- {reason}" for reason in report.reasons],
        "",
        f"> {claim_sentence(report)}",
        "",
        f"{report.tasks} instances, {report.cells} paired cells "
        f"(runs per instance: {run_text}).",
        "",
    ]
    for side, source in (("baseline", report.inputs.baseline),
                         ("treatment", report.inputs.treatment)):
        if source is not None:
            lines.append(f"- {side}: `{source.file}` ({source.rows} rows, "
                         f"BLAKE3 `{source.blake3}`)")
    if report.inputs.baseline is not None or report.inputs.treatment is not None:
        lines.append("")
    lines += _table(report, level)
    extra = quality.not_gating
    lines += ["", "## Quality", "",
              f"- Regressions (baseline resolved, treatment not): {quality.regressions}",
              f"- Recoveries (treatment resolved, baseline not): {quality.recoveries}",
              f"- Exact McNemar test of regressions vs recoveries: p = {quality.mcnemar_p:g}",
              f"- Resolve-rate delta: {quality.resolved_delta_pp:+.2f} pp; gating {level} "
              f"interval ({quality.gate_method}): {_range(quality.gate_ci_pp, 2)} pp "
              f"(non-inferior when the lower bound >= -{quality.margin_pp:g} pp)"]
    if quality.design_effect is not None:
        lines.append(f"- Design effect of the instance clustering (not gating): "
                     f"{quality.design_effect:.3f}")
    lines.append(f"- Not gating: {level} {extra.bootstrap_method} "
                 f"{_range(extra.bootstrap_ci_pp, 2)} pp")
    if extra.newcombe_hybrid_score_ci_pp is not None:
        lines.append(f"- Not gating: {level} Newcombe hybrid score interval "
                     f"{_range(extra.newcombe_hybrid_score_ci_pp, 2)} pp")
    within = "yes" if extra.point_estimate_within_margin else "no"
    lines += [f"- Non-inferior (interval gate): {'yes' if quality.non_inferior else 'no'}",
              f"- Loss beyond the margin shown: {'yes' if quality.shows_loss else 'no'}",
              f"- Point estimate within the margin (older criterion, for comparison only, "
              f"not used for the status): {within}"]
    single = report.single_runs
    lines += ["", "### Regressions and recoveries by instance", "",
              *_cells("Regressions (baseline resolved, treatment not)",
                      quality.regressed_cells, single),
              *_cells("Recoveries (treatment resolved, baseline not)",
                      quality.recovered_cells, single)]
    stops = report.false_stops
    if stops is not None:
        lines += ["", "## False stops", "",
                  f"- {stops.false_stops} of {stops.reviewed_stops} reviewed stops "
                  f"judged false: {stops.rate * 100:.1f}% ({level} {stops.ci_method} "
                  f"{stops.ci[0] * 100:.1f}{_EN_DASH}{stops.ci[1] * 100:.1f}%); maximum "
                  f"{stops.max_rate * 100:g}%: "
                  f"{'exceeded' if stops.exceeds_max else 'within'}"]
    half_alpha = (1 - report.methodology.confidence_level) / 2 * 100
    gate_level = f"{100 - half_alpha:g}%"
    lines += ["", "## Savings intervals", "",
              f"Gating: the gate bound of the headline token savings (net of governance "
              f"overhead where rows record it), the lower end of the symmetric {gate_level} "
              f"studentized bootstrap interval (one-sided error at most "
              f"{half_alpha:g}%). The {level} studentized interval is the "
              "reported interval; percentile intervals are shown for comparison and do not "
              "gate.", "",
              f"| Saving | Basis | Percent saved | Studentized {level} CI | Gate bound "
              "(one-sided; gates tokens) | Percentile CI (not gating) |",
              "|---|---|---:|---|---:|---|"]
    for key, entry in report.savings.series():
        if entry is None:
            continue
        basis = "net (agent + governance)" if entry.basis == "net" else "agent only"
        saved, bound = entry.percent_saved, entry.gate_lower_bound
        shown = "n/a" if saved is None else f"{saved:.2f}%"
        lines.append(f"| {key} | {basis} | {shown} | "
                     f"{_range(entry.ci, 2)} | "
                     f"{'undefined' if bound is None else f'{bound:.2f}%'} | "
                     f"{_range(entry.percentile_ci_not_gating, 2)} |")
    if report.warnings:
        lines += ["", "## Warnings", "", *[f"- {w}" for w in report.warnings]]
    lines += ["", "## Methodology", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}"
              for key, value in report.methodology.to_json().items()]
    return "\n".join(lines) + "\n"
