"""Render a ``ctxbench.public-eval-report.v1`` dict as Markdown (formatting only, no math)."""

from __future__ import annotations

from typing import Any

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


def _level(report: dict[str, Any]) -> str:
    return f"{report['methodology']['confidence_level'] * 100:g}%"


def _range(ci: list[float | None] | None, digits: int = 1) -> str:
    """``31.0–45.2`` for non-negative bounds, ``-2.1 to 1.3`` otherwise."""
    if ci is None or ci[0] is None or ci[1] is None:
        return "undefined"
    low, high = f"{ci[0]:.{digits}f}", f"{ci[1]:.{digits}f}"
    if ci[0] >= 0 and ci[1] >= 0:
        return f"{low}{_EN_DASH}{high}"
    return f"{low} to {high}"


def _saving(entry: dict[str, Any] | None, level: str, noun: str = "") -> str | None:
    """``31.0% fewer[ noun] (95% CI ...)``, or None when the saving is undefined."""
    if entry is None or entry["percent_saved"] is None:
        return None
    pct = entry["percent_saved"]
    noun = f" {noun}" if noun else ""
    if pct >= 0:
        return f"{pct:.1f}% fewer{noun} ({level} CI {_range(entry['ci'])})"
    return f"{-pct:.1f}% more{noun} ({level} CI of the saving {_range(entry['ci'])})"


def claim_sentence(report: dict[str, Any]) -> str:
    """The protocol's claim form: cost and quality together, with intervals and margin."""
    level = _level(report)
    quality = report["quality"]
    verdict = "non-inferior" if quality["non_inferior"] else "not shown non-inferior"
    tokens = _saving(report["savings"]["tokens"], level, "tokens") or "tokens savings undefined"
    return (
        f"{tokens} with a "
        f"{quality['resolved_delta_pp']:.1f} pp resolve-rate delta ({level} CI "
        f"{_range(quality['delta_ci_pp'])}) under a preregistered {quality['margin_pp']:.1f} pp "
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


def _with_ci(est: dict[str, Any] | None, fmt: str, level: str) -> str:
    if est is None:
        return "undefined"
    text = fmt.format(est["estimate"])
    if est["ci"] is None:
        return text
    low, high = (fmt.format(v) for v in est["ci"])
    return f"{text} ({level} CI {low} to {high})"


def _change(entry: dict[str, Any] | None, level: str) -> str:
    return _saving(entry, level) or _DASH


def _rate(arm: dict[str, Any], cells: int, level: str) -> str:
    rate = arm["resolve_rate"]
    low, high = rate["ci"]
    return (f"{arm['resolved']} / {cells} ({rate['estimate'] * 100:.1f}%, {level} CI "
            f"{low * 100:.1f}{_EN_DASH}{high * 100:.1f})")


def _table(report: dict[str, Any], level: str) -> list[str]:
    base, treat, savings = report["baseline"], report["treatment"], report["savings"]
    quality = report["quality"]
    rows = [
        ("Resolved", _rate(base, report["cells"], level), _rate(treat, report["cells"], level),
         f"{quality['resolved_delta_pp']:+.1f} pp ({level} CI {_range(quality['delta_ci_pp'])})"),
        ("Tokens", _count(base["tokens"]), _count(treat["tokens"]),
         _change(savings["tokens"], level)),
        ("USD", _usd(base["usd"]), _usd(treat["usd"]), _change(savings["usd"], level)),
        ("Latency", _ms(base["latency_ms"]), _ms(treat["latency_ms"]),
         _change(savings["latency_ms"], level)),
        ("Tool calls", _count(base["tool_calls"]), _count(treat["tool_calls"]),
         _change(savings["tool_calls"], level)),
        ("Tokens per resolved task", _with_ci(base["tokens_per_resolved"], "{:,.1f}", level),
         _with_ci(treat["tokens_per_resolved"], "{:,.1f}", level),
         _change(savings["tokens_per_resolved"], level)),
        ("USD per resolved task", _with_ci(base["usd_per_resolved"], "${:,.4f}", level),
         _with_ci(treat["usd_per_resolved"], "${:,.4f}", level),
         _change(savings["usd_per_resolved"], level)),
    ]
    for group, labels in (("token_breakdown", _BREAKDOWN_LABELS),
                          ("governance", _GOVERNANCE_LABELS)):
        if base[group] is None and treat[group] is None:
            continue
        for key, label in labels.items():
            values = [_DASH if arm[group] is None else _count(arm[group][key])
                      for arm in (base, treat)]
            rows.append((label, values[0], values[1], _DASH))
    out = [f"| Metric | Baseline ({base['name']}) | Treatment ({treat['name']}) | Change |",
           "|---|---:|---:|---|"]
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """The Markdown report: verdict, claim sentence, metric table, quality, warnings."""
    level = _level(report)
    quality = report["quality"]
    base, treat = report["baseline"], report["treatment"]
    runs = report["runs_per_task"]
    run_text = (f"{runs['min']}" if runs["min"] == runs["max"]
                else f"{runs['min']}{_EN_DASH}{runs['max']}")
    lines = [
        f"# Public-eval comparison: {treat['name']} vs {base['name']}",
        "",
        f"**Status: {report['status']}**",
        "",
        *[f"- {reason}" for reason in report["reasons"]],
        "",
        f"> {claim_sentence(report)}",
        "",
        f"{report['tasks']} instances, {report['cells']} paired cells "
        f"(runs per instance: {run_text}).",
        "",
    ]
    for side in ("baseline", "treatment"):
        source = report["inputs"].get(side)
        if source is not None:
            lines.append(f"- {side}: `{source['file']}` ({source['rows']} rows, "
                         f"BLAKE3 `{source['blake3']}`)")
    if report["inputs"]:
        lines.append("")
    lines += _table(report, level)
    lines += ["", "## Quality", "",
              f"- Regressions (baseline resolved, treatment not): {quality['regressions']}",
              f"- Recoveries (treatment resolved, baseline not): {quality['recoveries']}",
              f"- Exact McNemar test of regressions vs recoveries: p = {quality['mcnemar_p']:g}",
              f"- Resolve-rate delta: {quality['resolved_delta_pp']:+.2f} pp, {level} "
              f"{quality['delta_ci_method']}: {_range(quality['delta_ci_pp'], 2)} pp "
              f"(the non-inferiority gate: lower bound >= -{quality['margin_pp']:g} pp)"]
    score = quality["score_ci_pp"]
    if score is not None:
        lines.append(f"- Score intervals for matched pairs ({level}): Tango "
                     f"{_range(score['tango_score'], 2)} pp; Newcombe hybrid "
                     f"{_range(score['newcombe_hybrid_score'], 2)} pp")
    within = "yes" if quality["point_estimate_within_margin"] else "no"
    lines += [f"- Non-inferior (interval gate): {'yes' if quality['non_inferior'] else 'no'}",
              f"- Point estimate within the margin (older criterion, for comparison only, "
              f"not used for the status): {within}"]
    if report["warnings"]:
        lines += ["", "## Warnings", "", *[f"- {w}" for w in report["warnings"]]]
    lines += ["", "## Methodology", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}"
              for key, value in report["methodology"].items()]
    return "\n".join(lines) + "\n"
