"""Markdown for a ``symgliph.eceb/report-v0.1`` report, computed from the report alone."""

from __future__ import annotations

from fractions import Fraction

from ctxbench.protocols.eceb.model import BudgetRow, Report, Scalar, Task, shown

__all__ = ["render_markdown"]

_GATE_MARK = {"pass": "pass", "fail": "**FAIL**", "not_applicable": "n/a"}


def _v(value: Scalar | Fraction | float) -> str:
    if isinstance(value, Fraction):
        value = shown(value)  # a mean, as the report writes it
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _bps(value: int | None) -> str:
    # Basis points are shown as written in the report, with their percent reading made by
    # moving the decimal point two places (text only: no arithmetic on report values).
    if value is None:
        return "—"
    digits = f"{value:03d}"
    return f"{value} bps ({digits[:-2]}.{digits[-2:]}%)"


def render_markdown(report: Report) -> str:
    """The report as Markdown: claim, trust boundary, aggregate, then every task's gates."""
    out: list[str] = []
    claim = report.claim_class
    out += [f"# ECEB-0.1 report: {report.benchmark_id}", "",
            f"- Run: `{report.run_id}`",
            f"- Claim class: **{claim.reported}** (run declared {claim.run}, "
            f"benchmark {claim.benchmark})"]
    out += [f"  - {note}" for note in claim.notes]
    corpus = report.corpus
    out += [f"- Corpus root: `{corpus.root}` ({corpus.artifacts} artifacts, "
            f"{corpus.bytes_verified} bytes re-hashed)", ""]
    out += ["## Trust boundary", "", report.trust_boundary.statement, ""]
    judge = report.trust_boundary.judge
    out += [f"Judge: profile `{judge.get('profile')}`, model `{judge.get('model')}`, "
            f"rubric BLAKE3 `{judge.get('rubric_blake3')}`, human review "
            f"{judge.get('human_review')}.", ""]
    out += ["## Identities", "", "| what | identity |", "|---|---|"]
    for name, identity in report.identities.items():
        text = ", ".join(f"{k}={_v(v)}" for k, v in identity.items)
        out.append(f"| {name} | {text} |")
    out.append("")
    summary = report.summary
    out += ["## Summary", "",
            f"{summary.qualified} of {summary.tasks} tasks qualified "
            f"({summary.observations} observations).", ""]
    out += ["| strategy | qualified / tasks | mean token savings | mean cost savings "
            "| policy violations | provenance failures | failures |",
            "|---|---|---|---|---|---|---|"]
    for name, agg in report.aggregate.items():
        if agg is None:
            continue
        q = agg.qualified_tasks
        out.append(f"| {name} | {q.numerator} / {q.denominator} | "
                   f"{_bps(agg.mean_token_savings_bps)} | "
                   f"{_bps(agg.mean_cost_savings_bps)} | {agg.policy_violations} | "
                   f"{agg.provenance_failures} | {agg.failures} |")
    out += ["", "Savings are averaged over qualifying tasks only; the denominator keeps "
            "every task.", ""]
    out += ["## Tasks", "",
            "| task | qualified | B* | baseline tokens | compiled tokens | token savings "
            "| cost savings | quality (base / floor / compiled) | coverage | policy | repeatable |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in report.tasks:
        out.append(
            f"| {t.task_id} | {_v(t.qualified)} | {_v(t.minimum_viable_budget)} | "
            f"{_v(t.baseline_input_tokens)} | {_v(t.compiled_input_tokens)} | "
            f"{_bps(t.token_savings_bps)} | {_bps(t.cost_savings_bps)} | "
            f"{_v(t.baseline_quality_milli)} / {t.floor_quality_milli} / "
            f"{_v(t.compiled_quality_milli)} | {_bps(t.provenance_coverage_bps)} | "
            f"{t.policy_violations} | {_v(t.repeatable)} |")
    out.append("")
    for t in report.tasks:
        out += _task(report.gates, t)
    return "\n".join(out).rstrip("\n") + "\n"


def _task(gates: tuple[str, ...], t: Task) -> list[str]:
    title = f"### {t.task_id}" + (" (abstention task)" if t.expect_abstention else "")
    out = [title, ""]
    base = t.baseline
    out.append(f"Baseline (full_permitted_context): {base.repetitions} repetition(s), "
               f"quality {_v(base.quality_milli)}, mean input tokens "
               f"{_v(base.mean_input_tokens)}, gates {'pass' if base.passed else 'FAIL'}.")
    out.append("")
    out += _gate_table("compiled", gates, t.budgets)
    naive = t.naive_top_k
    if naive is not None:
        out.append(f"naive_top_k: B* {_v(naive.minimum_viable_budget)}, qualified "
                   f"{_v(naive.qualified)}, token savings {_bps(naive.token_savings_bps)}, "
                   f"policy violations {naive.policy_violations}.")
        out.append("")
        out += _gate_table("naive_top_k", gates, naive.budgets)
    failures = t.failures + (naive.failures if naive is not None else ())
    if failures:
        out += [f"Failed assertions ({len(failures)}):", ""]
        for f in failures:
            where = f"{f.strategy} @ {_v(f.budget)}"
            rep = "" if f.repetition is None else f", repetition {f.repetition}"
            out.append(f"- {where}{rep}: {f.gate}/{f.code}: {f.message}")
        out.append("")
    return out


def _gate_table(strategy: str, gates: tuple[str, ...], rows: tuple[BudgetRow, ...]) -> list[str]:
    out = [f"| {strategy} budget | obs | " + " | ".join(gates) + " | passed |",
           "|---|---|" + "---|" * len(gates) + "---|"]
    for row in rows:
        cells = " | ".join(_GATE_MARK[row.gates.status(g)] for g in gates)
        out.append(f"| {row.budget} | {row.observations} | {cells} | "
                   f"{_v(row.passed)} |")
    out.append("")
    return out
