"""Render a ``ctxbench.cef-report.v1`` report model as Markdown (numbers only from it).

Failed conditions, failures and caveats are shown beside passing ones; the unsupported-
claim (H3) result is always shown; the methodology ends with the exact command that
reproduces the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxbench.protocols.cef.model import (
    Aggregate,
    CefReport,
    Comparison,
    Estimate,
    Hypothesis,
    OperatingPoint,
    Stratum,
)
from ctxbench.render.cef_frontier import frontier_cell, frontier_line
from ctxbench.render.order import by_condition
from ctxbench.render.outcomes import outcome_line
from ctxbench.render.plan import recorded_plan_line
from ctxbench.render.strata import short_label

__all__ = ["render_markdown"]


_SOURCE = {"observed": "inferred from the trials", "preregistration": "preregistered"}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def _interval(est: Estimate, fmt: Callable[[float | None], str]) -> str:
    return f"{fmt(est.estimate)} [{fmt(est.low)}, {fmt(est.high)}]"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return out


def _operating_points(points: Sequence[OperatingPoint]) -> list[str]:
    rows = [[
        p.condition, str(p.trials), str(p.failures), _num(p.task_score),
        _num(p.evidence_recall), _num(p.unsupported_claim_rate),
        _num(p.context_tokens_mean, 1), _num(p.billed_cost_usd_mean, 6),
        _num(p.latency_ms_mean, 1), frontier_cell(p),
    ] for p in points]
    return _table(["condition", "trials", "failures", "task score", "evidence recall",
                   "unsupported-claim rate", "mean context tokens", "mean cost (USD)",
                   "mean latency (ms)", "Pareto frontier"], rows)


def _mark(h: Hypothesis) -> str:
    return "pass" if h.passed else "**FAIL**"


def _paired(comparisons: Sequence[Comparison]) -> list[str]:
    rows = []
    for c in comparisons:
        rows.append([
            c.condition, _units(c),
            f"{_interval(c.task_score_delta, _signed)} {_mark(c.hypothesis('H1'))}",
            f"{_interval(c.evidence_recall_delta, _signed)} {_mark(c.hypothesis('H2'))}",
            f"{_interval(c.unsupported_claim_rate_delta, _signed)} "
            f"{_mark(c.hypothesis('H3'))}",
            f"{_interval(c.context_reduction, _pct)} > {_pct(c.min_savings)} "
            f"{_mark(c.hypothesis('H4'))}",
            str(c.failed_pairs.either_side),
            "**" + c.claim + "**" if c.quality_preserving_context_win else c.claim,
        ])
    return _table(["condition", "paired units", "H1 task-score delta",
                   "H2 evidence-recall delta", "H3 unsupported-claim-rate delta",
                   "H4 context reduction", "failed pairs (zero credit)", "claim"], rows)


def _secondary(comparisons: Sequence[Comparison]) -> list[str]:
    rows = [[
        c.condition, _interval(c.mean_pair_context_reduction, _pct),
        _interval(c.cost_reduction, _pct), _interval(c.latency_reduction, _pct),
    ] for c in comparisons]
    return _table(["condition", "mean per-pair context reduction", "cost reduction",
                   "latency reduction"], rows)


def _reasons(comparisons: Sequence[Comparison]) -> list[str]:
    out = []
    for c in comparisons:
        if c.reasons:
            why = outcome_line(c)
            out.append(f"- **{c.condition}: NO CLAIM**" + ("" if why is None else f": {why}"))
            out += [f"  - {reason}" for reason in c.reasons]
        else:
            out.append(f"- {c.condition}: all four hypotheses pass with "
                       f"{c.paired_units} paired units")
    return out


def _section(title: str, block: Stratum | Aggregate, level: str, baseline: str,
             full: str = "") -> list[str]:
    """One stratum or the aggregate, conditions in natural order (the baseline first)."""
    points = by_condition(block.operating_points, lambda p: p.condition, baseline)
    comparisons = by_condition(block.comparisons, lambda c: c.condition, baseline)
    out = [f"{level} {title}", ""]
    if full:
        out += [f"Full stratum: `{full}`", ""]
    out += [f"{level}# Operating points", ""]
    out += _operating_points(points)
    out += ["", f"Pareto frontier (descriptive): {frontier_line(points)}", ""]
    out += [f"{level}# Paired results against the baseline", ""]
    out += _paired(comparisons)
    out += [""]
    out += _secondary(comparisons)
    out += ["", f"{level}# Claims", ""]
    out += _reasons(comparisons)
    out += [""]
    return out


def render_markdown(report: CefReport, *, report_name: str = "report.json") -> str:
    """The Markdown form of a CEF report (every figure is read from ``report``).

    Render the model as its JSON holds it (``CefReport.from_json`` of the file, or
    ``report.as_written()``), so the text shows exactly the written numbers.
    """
    m = report.methodology
    cc = report.claim_class
    level = f"{m.confidence_level * 100:g}%"
    out = [f"# {report.protocol.name} report", ""]
    out += [f"Protocol version {report.protocol.version}; baseline "
            f"`{m.baseline}`; {report.inputs.trials_analyzed} trials analyzed in "
            f"{report.inputs.strata} stratum/strata; claim class "
            f"`{cc.class_}`.", ""]
    out += ["## Headline", ""]
    headlines = report.headlines
    if headlines:
        out += [f"- {h}" for h in headlines]
    elif cc.class_ == "conformance_fixture":
        out.append("No headline: this is a conformance fixture (deterministic_fixture usage "
                   "or zero_cost_fixture cost), which cannot support a product claim.")
    else:
        out.append("No headline: no claimed condition holds a quality-preserving context "
                   "win.")
    out += ["", "## Claims", ""]
    rows = [[c.condition, "yes" if c.claimed else "no",
             "quality_preserving_context_win" if c.holds else "**NO CLAIM**",
             "; ".join(c.failed_strata) or "none"]
            for c in by_condition(report.summary.claims, lambda c: c.condition, m.baseline)]
    out += _table(["condition", "claimed", "aggregate result", "failed strata"], rows)
    out += [""]
    for stratum in report.strata:
        out += _section(f"Stratum: {short_label(stratum.label)} ({stratum.tasks} tasks)",
                        stratum, "##", m.baseline,
                        "" if short_label(stratum.label) == stratum.label else stratum.label)
    agg = report.aggregate
    out += _section(f"Aggregate over {agg.strata} stratum/strata ({agg.resampling})",
                    agg, "##", m.baseline)
    out += _failures(report)
    out += ["## Caveats", ""] + [f"- {c}" for c in report.caveats] + [""]
    out += _methodology(report, level, report_name)
    return "\n".join(out).rstrip("\n") + "\n"


def _units(c: Comparison) -> str:
    """Paired units, and how many of them had both sides succeed when that differs."""
    if c.evaluable_units == c.paired_units:
        return str(c.paired_units)
    return f"{c.paired_units} ({c.evaluable_units} with both sides succeeded)"


def _failures(report: CefReport) -> list[str]:
    f = report.failures
    over = f.overridden_failure_scores
    out = ["## Failures and exclusions", ""]
    out.append(f"- Failed trials (kept, with the preregistered failure scores): "
               f"{f.trials_failed}; by condition: "
               + ", ".join(f"{k} {v}" for k, v in by_condition(
                   f.by_condition.items(), lambda kv: kv[0], report.methodology.baseline)))
    out.append(f"- Recorded scores overridden by the failure scores: {over.trials} trial(s) "
               f"(fields replaced: task_score in {over.task_score}, evidence_recall in "
               f"{over.evidence_recall}, unsupported_claim_rate in "
               f"{over.unsupported_claim_rate})")
    out.append("- Pairs with a failure, credited zero reduction: "
               + ", ".join(f"{k} {v}" for k, v in
                           f.failed_pairs_credited_zero_reduction.items()))
    if report.exclusions:
        out.append("- Exclusions (preregistered, infrastructure only):")
        for e in report.exclusions:
            scope = f" in {e.workload}" if e.workload else ""
            out.append(f"  - task {e.task_id}{scope}: {e.reason} "
                       f"({e.trials_removed} trials removed)")
    else:
        out.append("- Exclusions: none")
    return [*out, ""]


def _methodology(report: CefReport, level: str, report_name: str) -> list[str]:
    m = report.methodology
    p = report.preregistration
    cc = report.claim_class
    out = ["## Methodology", ""]
    out += [
        f"- Preregistration: {p.source} (BLAKE3 `{p.digest_blake3}`)",
        *([f"- Study plan (preregistered): {plan}"] if (plan := recorded_plan_line(
            p.document, report.aggregate.tasks)) is not None else []),
        f"- Conditions: {', '.join(by_condition(m.conditions, str, m.baseline))} "
        f"({_SOURCE[m.conditions_source]}); "
        f"claimed: {', '.join(by_condition(m.claimed_conditions, str, m.baseline))}",
        f"- Gates: {m.gate_method}",
        f"- Clusters: {m.clusters}",
        f"- {m.bootstrap} Percentile bootstrap: {m.bootstrap_samples} resamples, "
        f"seed {m.seed}, {level} intervals, resampling unit {m.resampling_unit}",
        f"- Quality tolerance {m.quality_tolerance:g}; minimum paired units "
        f"{m.min_paired_units} (counted over units in which both sides succeeded); "
        "minimum savings by workload: "
        + (", ".join(f"{k} {_pct(v)}" for k, v in m.min_savings.items()) or "none (0)"),
        "- Failure scores: " + ", ".join(f"{k} {v:g}" for k, v in
                                         m.failure_scores.to_json().items()),
        f"- {m.one_sided_tests}",
        f"- {m.failed_pairs}",
        f"- {m.statistics}",
        f"- Pairing key: ({', '.join(m.pairing_key)}); strata: "
        f"({', '.join(m.strata_key)})",
        f"- Random streams: {m.random_streams}",
        "- Usage sources: " + ", ".join(f"{k} {v}" for k, v in cc.usage_sources.items()),
        "- Cost sources: " + ", ".join(f"{k} {v}" for k, v in cc.cost_sources.items()),
    ]
    refs = cc.cost_source_references
    if refs:
        shown = ", ".join(f"{r.cost_source}: {r.reference}" for r in refs)
        total = cc.cost_source_references_total
        more = f" (the first {len(refs)} of {total})" if total != len(refs) else ""
        out.append(f"- Cost references: {shown}{more}")
    # The invocation is free-form (what the caller declared); file entries are shown as
    # recorded.
    files = m.invocation.get("trial_files") or []
    for entry in files:
        out.append(f"- Trial file `{entry['path']}` BLAKE3 `{entry['blake3']}`")
    out += ["", "### Reproduce", ""]
    if m.reproduce:
        # The report's own file name is passed in by whoever renders it; the recorded
        # command is shown, never parsed.
        out += ["```sh", m.reproduce,
                f"ctxbench cef render {report_name} --output report.md", "```"]
    else:
        out.append("The report does not record the command that produced it.")
    return [*out, ""]
