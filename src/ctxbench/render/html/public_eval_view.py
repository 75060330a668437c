"""What the public-eval page reads from a ``ctxbench.public-eval-report.v1`` document.

Savings are read generically: every member of ``savings`` that carries ``percent_saved``
and ``ci`` becomes a row, so net and gross savings (or any later metric) appear without a
change here. Every field the page shows is read in this module and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.render.html._node import Node, read_notes

__all__ = ["Arm", "PublicEvalView", "Saving", "read_public_eval"]


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    file: str
    rows: int
    resolved: int
    resolve_rate: float
    resolve_ci: tuple[float | None, float | None]
    totals: tuple[tuple[str, float | None], ...]
    breakdown: tuple[tuple[str, int | None], ...]
    governance: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True, slots=True)
class Saving:
    metric: str
    percent_saved: float | None
    low: float | None
    high: float | None
    baseline: float | None
    treatment: float | None


@dataclass(frozen=True, slots=True)
class PublicEvalView:
    claim: str
    status: str
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    tasks: int
    cells: int
    runs_min: int
    runs_max: int
    baseline: Arm
    treatment: Arm
    delta_pp: float
    delta_ci: tuple[float | None, float | None] | None
    delta_method: str
    score_cis: tuple[tuple[str, float | None, float | None], ...]
    margin_pp: float
    non_inferior: bool
    gate: str
    regressions: int
    recoveries: int
    mcnemar_p: float
    savings: tuple[Saving, ...]
    min_savings_percent: float
    confidence: float
    method_lines: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]


def _pair(node: Node) -> tuple[float | None, float | None]:
    items = node.items()
    if len(items) != 2:
        raise node.fail("an array of two bounds")
    return tuple(None if i.value is None else i.num() for i in items)  # type: ignore[return-value]


def _opt_num(node: Node | None) -> float | None:
    return None if node is None else node.num()


def _arm(node: Node, source: Node) -> Arm:
    rate = node.at("resolve_rate")
    totals = tuple((key, node.on(key)) for key in ("tokens", "usd", "latency_ms", "tool_calls"))
    breakdown_node = node.opt("token_breakdown")
    breakdown = () if breakdown_node is None else tuple(
        (k, None if v.value is None else v.int_()) for k, v in breakdown_node.entries())
    gov_node = node.opt("governance")
    governance = () if gov_node is None else tuple(
        (k, None if v.value is None else v.num()) for k, v in gov_node.entries())
    return Arm(name=node.s("name"), file=source.s("file"), rows=source.i("rows"),
               resolved=node.i("resolved"), resolve_rate=rate.n("estimate"),
               resolve_ci=_pair(rate.at("ci")), totals=totals, breakdown=breakdown,
               governance=governance)


def _savings(node: Node) -> tuple[Saving, ...]:
    out = []
    for metric, entry in node.entries():
        if entry.value is None:
            out.append(Saving(metric, None, None, None, None, None))
            continue
        if not isinstance(entry.value, dict) or "percent_saved" not in entry.value:
            continue
        ci = entry.opt("ci")
        low, high = (None, None) if ci is None else _pair(ci)
        base = entry.opt("baseline_total") or entry.opt("baseline")
        treat = entry.opt("treatment_total") or entry.opt("treatment")
        out.append(Saving(metric, entry.on("percent_saved"), low, high, _opt_num(base),
                          _opt_num(treat)))
    return tuple(out)


def read_public_eval(doc: Node) -> PublicEvalView:
    """Read the fields the public-eval page shows; a missing one raises PointerError."""
    q = doc.at("quality")
    m = doc.at("methodology")
    inputs = doc.at("inputs")
    score = q.opt("score_ci_pp")
    score_cis = () if score is None else tuple(
        (name, *_pair(ci)) for name, ci in score.entries())
    delta = q.opt("delta_ci_pp")
    method = tuple((key.replace("_", " "), str(value.value)) for key, value in m.entries()
                   if isinstance(value.value, str | int | float))
    runs = doc.at("runs_per_task")
    savings = _savings(doc.at("savings"))
    # The protocol's claim sentence, worded once for Markdown and HTML alike.
    from ctxbench.render.public_eval import claim_sentence

    return PublicEvalView(
        status=doc.s("status"), reasons=doc.at("reasons").texts(),
        warnings=doc.at("warnings").texts(), tasks=doc.i("tasks"), cells=doc.i("cells"),
        runs_min=runs.i("min"), runs_max=runs.i("max"),
        baseline=_arm(doc.at("baseline"), inputs.at("baseline")),
        treatment=_arm(doc.at("treatment"), inputs.at("treatment")),
        delta_pp=q.n("resolved_delta_pp"), delta_ci=None if delta is None else _pair(delta),
        delta_method=q.s("delta_ci_method"), score_cis=score_cis, margin_pp=q.n("margin_pp"),
        non_inferior=q.b("non_inferior"), gate=q.s("non_inferiority_gate"),
        regressions=q.i("regressions"), recoveries=q.i("recoveries"),
        mcnemar_p=q.n("mcnemar_p"), savings=savings,
        min_savings_percent=m.n("min_savings_percent"), confidence=m.n("confidence_level"),
        method_lines=method, notes=read_notes(doc),
        claim=claim_sentence(doc.value))  # last: after every field it reads was checked
