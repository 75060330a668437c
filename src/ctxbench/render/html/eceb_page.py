"""The ECEB page: claim class and corpus root, the task x budget gate grid with B*,
quality and tokens against budget, and every policy or provenance violation."""

from __future__ import annotations

from fractions import Fraction

from ctxbench.protocols.eceb.model import Failure, Report, Scalar, StrategyResult, Task, shown
from ctxbench.render.html.page import Section, figure, kv_table, table
from ctxbench.render.html.plots import Series, budget_lines
from ctxbench.render.html.svg import Ids, esc, num, svg_open

__all__ = ["bps", "eceb_sections", "eceb_verdict", "task_failures"]

_GATE = {"pass": "pass", "fail": "FAIL", "not_applicable": "n/a"}
_CSS = {"pass": "pass", "fail": "fail", "not_applicable": "na"}
_SERIES = {"compiled": "pass", "naive_top_k": "alt"}


def bps(value: int | None) -> str:
    """Basis points with their percent reading, made by moving the decimal point as text."""
    if value is None:
        return "\u2014"
    digits = f"{abs(value):03d}"
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-2]}.{digits[-2:]}%"


def _v(value: Scalar | Fraction | float) -> str:
    if isinstance(value, Fraction):
        value = shown(value)  # a mean, as the report writes it
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


Ladder = Task | StrategyResult  # a task carries its compiled ladder itself


def _ladders(task: Task) -> list[tuple[str, Ladder]]:
    """Each strategy's results on one task: compiled, then naive_top_k when it was run."""
    out: list[tuple[str, Ladder]] = [("compiled", task)]
    if task.naive_top_k is not None:
        out.append(("naive_top_k", task.naive_top_k))
    return out


def _budgets(report: Report, strategy: str) -> list[int]:
    return sorted({r.budget for t in report.tasks for name, lad in _ladders(t)
                   if name == strategy for r in lad.budgets})


def _ladder(task: Task, strategy: str) -> Ladder | None:
    return next((lad for name, lad in _ladders(task) if name == strategy), None)


def _grid(ids: Ids, view: Report, strategy: str) -> str:
    """Task x budget cells, each a strip of gate squares; the B* cell is ringed."""
    budgets = _budgets(view, strategy)
    sq, gap, label_w, row_h, top = 12, 2, 215, 26, 34
    cell_w = len(view.gates) * (sq + gap) + 14
    width = label_w + cell_w * len(budgets) + 10
    height = top + row_h * len(view.tasks) + 8
    desc: list[str] = []
    parts: list[str] = []
    for k, b in enumerate(budgets):
        parts.append(f'<text class="tick" x="{num(label_w + cell_w * k + cell_w / 2)}" y="14" '
                     f'text-anchor="middle">{b}</text>')
    parts.append(f'<text class="label" x="{num(label_w - 6)}" y="14" text-anchor="end">'
                 "budget (tokens)</text>")
    for i, task in enumerate(view.tasks):
        y = top + row_h * i
        lad = _ladder(task, strategy)
        parts.append(f'<text class="rowlabel" x="{num(label_w - 6)}" y="{num(y + 13)}" '
                     f'text-anchor="end">{esc(task.task_id[:32])}</text>')
        if lad is None:
            desc.append(f"{task.task_id}: not run")
            continue
        desc.append(f"{task.task_id}: B* {_v(lad.minimum_viable_budget)}; " + ", ".join(
            f"{r.budget} {'pass' if r.passed else 'fail'}" for r in lad.budgets))
        for row in lad.budgets:
            x0 = label_w + cell_w * budgets.index(row.budget)
            star = " bstar" if row.budget == lad.minimum_viable_budget else ""
            parts.append(f'<rect class="cellbox{star}" x="{num(x0 + 3)}" y="{num(y)}" '
                         f'width="{num(cell_w - 6)}" height="{row_h - 4}"/>')
            for g, gate in enumerate(view.gates):
                state = row.gates.status(gate)
                gx, gy = x0 + 7 + g * (sq + gap), y + 4.0
                parts.append(f'<rect class="cell {_CSS.get(state, "na")}" x="{num(gx)}" '
                             f'y="{num(gy)}" width="{sq}" height="{sq}"/>')
                if state == "fail":
                    parts.append(f'<path class="x fail" style="stroke:var(--bg)" '
                                 f'd="M{num(gx + 1)} {num(gy + 1)}L{num(gx + sq - 1)} '
                                 f'{num(gy + sq - 1)}M{num(gx + 1)} {num(gy + sq - 1)}'
                                 f'L{num(gx + sq - 1)} {num(gy + 1)}"/>')
    head, tail = svg_open(ids, width, height,
                          f"ECEB gates of {strategy} for every task and budget", "; ".join(desc))
    return head + "\n" + "\n".join(parts) + "\n" + tail


def _grid_table(view: Report, strategy: str) -> str:
    budgets = _budgets(view, strategy)
    rows = []
    for task in view.tasks:
        lad = _ladder(task, strategy)
        if lad is None:
            continue
        by_budget = {r.budget: r for r in lad.budgets}
        cells = [esc(task.task_id), _v(lad.minimum_viable_budget)]
        for b in budgets:
            r = by_budget.get(b)
            if r is None:
                cells.append("\u2014")
                continue
            failed = [g for g, s in r.gates.items() if s == "fail"]
            text = ('<span class="ok">pass</span>' if r.passed else
                    '<span class="bad">FAIL</span>' + (": " + esc(", ".join(failed))
                                                       if failed else ""))
            cells.append(("<strong>B*</strong> " if b == lad.minimum_viable_budget else "")
                         + text)
        rows.append(cells)
    return table(["task", "B*", *(str(b) for b in budgets)], rows,
                 caption=f"{strategy}: gates by budget (the failing gates are named)")


def _lines(ids: Ids, view: Report) -> str:
    figs = []
    for task in view.tasks:
        budgets = sorted({r.budget for _, lad in _ladders(task) for r in lad.budgets})
        quality, tokens = [], []
        for name, lad in _ladders(task):
            by = {r.budget: r for r in lad.budgets}
            css = _SERIES.get(name, "other")
            quality.append(Series(name, css, tuple(
                by[b].min_quality_milli if b in by else None for b in budgets)))
            tokens.append(Series(name, css, tuple(
                shown(by[b].mean_input_tokens) if b in by else None for b in budgets)))
        q_desc = "; ".join(f"{s.name}: " + ", ".join(
            f"{b} {_v(v)}" for b, v in zip(budgets, s.values, strict=True)) for s in quality)
        t_desc = "; ".join(f"{s.name}: " + ", ".join(
            f"{b} {_v(v)}" for b, v in zip(budgets, s.values, strict=True)) for s in tokens)
        pair = figure(budget_lines(
            ids, title=f"{task.task_id}: minimum quality (milli) by budget",
            desc=f"{q_desc}; floor {task.floor_quality_milli}; B* "
                 f"{_v(task.minimum_viable_budget)}",
            budgets=budgets, series=quality, y_label="min quality (milli)",
            y_fmt=lambda v: f"{v:g}",
            y_line=(task.floor_quality_milli, f"floor {task.floor_quality_milli}"),
            mark=task.minimum_viable_budget, y_domain=(0.0, 1000.0)),
            "minimum quality against the floor")
        base = shown(task.baseline_input_tokens)
        pair += figure(budget_lines(
            ids, title=f"{task.task_id}: mean input tokens by budget",
            desc=f"{t_desc}; full-context baseline {_v(base)}",
            budgets=budgets, series=tokens, y_label="input tokens",
            y_fmt=lambda v: f"{v:,.0f}",
            y_line=None if base is None else (base, f"baseline {base}"),
            mark=task.minimum_viable_budget),
            f"mean input tokens; savings at B*: {bps(task.token_savings_bps)}")
        figs.append(f'<div class="task"><h4>{esc(task.task_id)}</h4>'
                    f'<div class="plots">{pair}</div></div>')
    numbers = table(
        ["task", "strategy", "budget", "observations", "min quality (milli)",
         "mean input tokens", "passed"],
        [[esc(task.task_id), esc(name), str(r.budget), str(r.observations),
          _v(r.min_quality_milli), _v(r.mean_input_tokens),
          ("B* " if r.budget == lad.minimum_viable_budget else "")
          + ("pass" if r.passed else "FAIL")]
         for task in view.tasks for name, lad in _ladders(task) for r in lad.budgets],
        numeric=(2, 3, 4, 5))
    legend = ", ".join(f"{name} ({'solid' if css == 'pass' else 'dashed'})"
                       for name, css in _SERIES.items())
    return (f"<p class=\"meta\">Lines: {esc(legend)}; dashed horizontal: the quality floor or "
            "the full-context baseline; ringed column: B* of compiled.</p>"
            f'<div class="tasks">{"".join(figs)}</div>'
            f"<details><summary>The plotted numbers, every task, strategy and budget"
            f"</summary>{numbers}</details>")


def task_failures(task: Task) -> tuple[Failure, ...]:
    """Every failed assertion of a task: baseline and compiled, then naive_top_k."""
    naive = task.naive_top_k
    return task.failures + (naive.failures if naive is not None else ())


def eceb_verdict(view: Report) -> str:
    """The page's first line: the claim class reported and how many tasks qualified."""
    return (f"Claim class {view.claim_class.reported}: {view.summary.qualified} of "
            f"{view.summary.tasks} tasks qualified.")


def eceb_sections(view: Report, ids: Ids, prefix: str = "") -> list[Section]:
    """Every section of an ECEB page."""
    claim_class, corpus, summary = view.claim_class, view.corpus, view.summary
    claim = kv_table([
        ("Claim class", f"<strong>{esc(claim_class.reported)}</strong> (run declared "
                        f"{esc(claim_class.run)}, benchmark {esc(claim_class.benchmark)})"),
        *(("Claim note", esc(n)) for n in claim_class.notes),
        ("Corpus root", f"<code>{esc(corpus.root)}</code>"),
        ("Corpus", f"{corpus.artifacts} artifacts, {corpus.bytes_verified} bytes re-hashed, "
                   f"verified: {'yes' if corpus.verified else 'NO'}"),
        ("Run", f"<code>{esc(view.run_id)}</code>"),
        ("Tasks qualified", f"{summary.qualified} of {summary.tasks} "
                            f"({summary.observations} observations)"),
    ])
    run = [(name, a) for name, a in view.aggregate.items() if a is not None]
    not_run_names = [name for name, a in view.aggregate.items() if a is None]
    agg = table(["strategy", "qualified / tasks", "mean token savings", "mean cost savings",
                 "policy violations", "provenance failures", "failures"],
                [[esc(name), f"{a.qualified_tasks.numerator} / {a.qualified_tasks.denominator}",
                  bps(a.mean_token_savings_bps), bps(a.mean_cost_savings_bps),
                  str(a.policy_violations), str(a.provenance_failures), str(a.failures)]
                 for name, a in run],
                caption="Savings are averaged over qualifying tasks; the denominator keeps "
                        "every task.", numeric=(2, 3, 4, 5, 6))
    not_run = ("<p>Not run: " + esc(", ".join(not_run_names)) + "</p>") if not_run_names else ""
    grids = []
    for strategy in ("compiled", "naive_top_k"):
        if not _budgets(view, strategy):
            continue
        caption = ("Squares in gate order: " + ", ".join(view.gates) + ". Filled: pass; "
                   "crossed: fail; grey: not applicable. Ringed: B*, the minimum viable budget.")
        grids.append(f"<h3>{esc(strategy)}</h3><div class=\"plots\">"
                     f"{figure(_grid(ids, view, strategy), caption)}</div>"
                     + _grid_table(view, strategy))
    tasks = table(["task", "qualified", "B*", "baseline tokens", "compiled tokens",
                   "token savings", "cost savings", "quality (base / floor / compiled)",
                   "coverage", "policy violations"],
                  [[esc(t.task_id) + (" (abstention)" if t.expect_abstention else ""),
                    "yes" if t.qualified else '<span class="bad">no</span>',
                    _v(t.minimum_viable_budget), _v(t.baseline_input_tokens),
                    _v(t.compiled_input_tokens), bps(t.token_savings_bps),
                    bps(t.cost_savings_bps), f"{_v(t.baseline_quality_milli)} / "
                    f"{t.floor_quality_milli} / {_v(t.compiled_quality_milli)}",
                    bps(t.provenance_coverage_bps), str(t.policy_violations)]
                   for t in view.tasks],
                  caption="Tasks (compiled at B*)", numeric=(2, 3, 4, 5, 6, 8, 9))
    failures = [(t.task_id, f) for t in view.tasks for f in task_failures(t)]
    violations = [(t, f) for t, f in failures if f.gate in ("policy", "provenance")]

    def rows(items: list[tuple[str, Failure]]) -> list[list[str]]:
        return [[esc(task_id), esc(f.strategy), _v(f.budget), _v(f.repetition), esc(f.gate),
                 esc(f.code), esc(f.message),
                 "<code>" + esc(", ".join(f.artifact_ids)) + "</code>" if f.artifact_ids
                 else "\u2014"] for task_id, f in items]

    header = ["task", "strategy", "budget", "repetition", "gate", "code", "message", "artifacts"]
    viol = (table(header, rows(violations), caption=f"{len(violations)} policy and provenance "
                  "violations") if violations else "<p>No policy or provenance violation.</p>")
    viol += (f"<details><summary>All {len(failures)} failed assertions</summary>"
             + table(header, rows(failures)) + "</details>") if failures else ""
    trust = (f"<p>{esc(view.trust_boundary.statement)}</p>"
             + kv_table([(k, esc(_v(v))) for k, v in view.trust_boundary.judge.items],
                        caption="Judge")
             + kv_table([(name, esc(", ".join(f"{k}={_v(v)}" for k, v in ident.items)))
                         for name, ident in view.identities.items()], caption="Identities"))
    return [
        Section(f"{prefix}claim", "Claim class and corpus",
                f'<p class="headline">{esc(eceb_verdict(view))}</p>' + claim + agg + not_run),
        Section(f"{prefix}grid", "Task x budget gates", "".join(grids)),
        Section(f"{prefix}budgets", "Quality and tokens against budget",
                _lines(ids, view) + tasks),
        Section(f"{prefix}violations", "Policy and provenance violations", viol),
        Section(f"{prefix}trust", "Trust boundary and identities", trust),
    ]
