"""What the public-eval page reads from a ``ctxbench.public-eval-report.v1`` document.

Savings are read generically: every member of ``savings`` that carries ``percent_saved``
becomes a row with its basis (net or agent), its reported interval (``ci``, the
studentized one; absent for the per-resolved ratios) and its percentile interval (not
gating), so a later metric appears without a change here. The quality gate is read as
written (``gate_ci_pp``, ``gate_method``, ``design_effect``); every ``*_ci_pp`` member of
``quality.not_gating`` becomes a non-gating interval row. Every field the page shows is
read in this module and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxbench.core.node import Node, read_notes

__all__ = ["Arm", "ChangedCells", "FalseStops", "Interval", "PublicEvalView", "Saving",
           "read_public_eval"]

Bounds = tuple[float | None, float | None]


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    file: str
    rows: int
    resolved: int
    resolve_rate: float
    resolve_ci: Bounds
    totals: tuple[tuple[str, float | None], ...]
    breakdown: tuple[tuple[str, int | None], ...]
    governance: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True, slots=True)
class Saving:
    metric: str
    basis: str | None
    """``net`` (agent + overhead), ``agent``, or None when the saving is not measured."""
    percent_saved: float | None
    ci: Bounds | None
    """The reported (studentized) interval; None for ratios that only have a percentile one."""
    gate_low: float | None
    """The one-sided gate bound (``gate_lower_bound``); None where the entry has none."""
    percentile_ci: Bounds | None
    baseline: float | None
    treatment: float | None


@dataclass(frozen=True, slots=True)
class Interval:
    """A resolve-rate-delta interval reported beside the gate; it never decides."""

    name: str
    short: str
    """The first word of its report key (``bootstrap``, ``newcombe``), for plot labels."""
    low: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class ChangedCells:
    """Regressed or recovered cells: the total and the listed ones grouped by instance."""

    total: int
    limit: int
    listed: int
    groups: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class FalseStops:
    reviewed: int
    false: int
    rate: float
    ci: Bounds
    method: str
    max_rate: float
    exceeds: bool


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
    gate_ci: Bounds
    gate_method: str
    design_effect: float | None
    margin_pp: float
    non_inferior: bool
    shows_loss: bool
    gate: str
    not_gating: tuple[Interval, ...]
    point_within_margin: bool
    point_criterion: str
    regressions: int
    recoveries: int
    regressed: ChangedCells
    recovered: ChangedCells
    mcnemar_p: float
    false_stops: FalseStops | None
    savings: tuple[Saving, ...]
    min_savings_percent: float
    confidence: float
    method_lines: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]

    @property
    def headline_basis(self) -> str | None:
        """The basis of the headline token saving (``net`` or ``agent``), if measured."""
        return next((s.basis for s in self.savings if s.metric == "tokens"), None)


def _pair(node: Node) -> Bounds:
    items = node.items()
    if len(items) != 2:
        raise node.fail("an array of two bounds")
    low, high = (None if i.value is None else i.num() for i in items)
    return low, high


def _opt_pair(node: Node | None) -> Bounds | None:
    return None if node is None else _pair(node)


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
            out.append(Saving(metric, None, None, None, None, None, None, None))
            continue
        if not isinstance(entry.value, dict) or "percent_saved" not in entry.value:
            continue
        base = entry.opt("baseline_total") or entry.opt("baseline")
        treat = entry.opt("treatment_total") or entry.opt("treatment")
        out.append(Saving(metric, entry.s("basis"), entry.on("percent_saved"),
                          _opt_pair(entry.opt("ci")), _opt_num(entry.opt("gate_lower_bound")),
                          _opt_pair(entry.opt("percentile_ci_not_gating")),
                          _opt_num(base), _opt_num(treat)))
    return tuple(out)


def _not_gating(node: Node) -> tuple[Interval, ...]:
    method = node.opt("bootstrap_method")
    out = []
    for key, entry in node.entries():
        if not key.endswith("_ci_pp") or entry.value is None:
            continue
        name = key.removesuffix("_ci_pp").replace("_", " ")
        if key == "bootstrap_ci_pp" and method is not None:
            name = method.text()
        out.append(Interval(name, key.split("_")[0], *_pair(entry)))
    return tuple(out)


def _changed(node: Node) -> ChangedCells:
    from ctxbench.render.public_eval import cell_groups

    cells = [{"instance_id": c.s("instance_id"), "run": c.i("run")}
             for c in node.at("listed").items()]
    groups = cell_groups(cells)
    return ChangedCells(total=node.i("total"), limit=node.i("limit"), listed=len(cells),
                        groups=tuple((iid, tuple(runs)) for iid, runs in groups))


def _false_stops(node: Node | None) -> FalseStops | None:
    if node is None:
        return None
    return FalseStops(reviewed=node.i("reviewed_stops"), false=node.i("false_stops"),
                      rate=node.n("rate"), ci=_pair(node.at("ci")), method=node.s("ci_method"),
                      max_rate=node.n("max_rate"), exceeds=node.b("exceeds_max"))


def read_public_eval(doc: Node) -> PublicEvalView:
    """Read the fields the public-eval page shows; a missing one raises PointerError."""
    q = doc.at("quality")
    m = doc.at("methodology")
    inputs = doc.at("inputs")
    extra = q.at("not_gating")
    method = tuple((key.replace("_", " "), str(value.value)) for key, value in m.entries()
                   if isinstance(value.value, str | int | float))
    runs = doc.at("runs_per_task")
    design = q.at("design_effect")
    # The protocol's claim sentence, worded once for Markdown and HTML alike.
    from ctxbench.render.public_eval import claim_sentence

    view = PublicEvalView(
        status=doc.s("status"), reasons=doc.at("reasons").texts(),
        warnings=doc.at("warnings").texts(), tasks=doc.i("tasks"), cells=doc.i("cells"),
        runs_min=runs.i("min"), runs_max=runs.i("max"),
        baseline=_arm(doc.at("baseline"), inputs.at("baseline")),
        treatment=_arm(doc.at("treatment"), inputs.at("treatment")),
        delta_pp=q.n("resolved_delta_pp"), gate_ci=_pair(q.at("gate_ci_pp")),
        gate_method=q.s("gate_method"),
        design_effect=None if design.value is None else design.num(),
        margin_pp=q.n("margin_pp"), non_inferior=q.b("non_inferior"),
        shows_loss=q.b("shows_loss"), gate=q.s("non_inferiority_gate"),
        not_gating=_not_gating(extra),
        point_within_margin=extra.b("point_estimate_within_margin"),
        point_criterion=extra.s("point_estimate_criterion"),
        regressions=q.i("regressions"), recoveries=q.i("recoveries"),
        regressed=_changed(q.at("regressed_cells")), recovered=_changed(q.at("recovered_cells")),
        mcnemar_p=q.n("mcnemar_p"), false_stops=_false_stops(doc.opt("false_stops")),
        savings=_savings(doc.at("savings")),
        min_savings_percent=m.n("min_savings_percent"), confidence=m.n("confidence_level"),
        method_lines=method, notes=read_notes(doc),
        claim="")
    # The claim sentence is worded last: after every field it reads was checked.
    return replace(view, claim=claim_sentence(doc.value))
