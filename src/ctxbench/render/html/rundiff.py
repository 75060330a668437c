"""Diff two runs: the same tasks paired across runs A and B, and what changed for each.

``ctxbench report RUN_A RUN_B --html OUT`` pairs each (task, condition) recorded in both
runs (a new compiler version against the old, one model against another) and lists the
ones whose task score or context tokens differ, replicate by replicate: the scores and
tokens as each run's trial log records them, and which way each changed. A cell links
to its trial in that run's drill-down. Nothing is averaged: replicates are listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.render.html.page import Section, table
from ctxbench.render.html.svg import esc
from ctxbench.render.html.trials import RunTrials, TrialView
from ctxbench.render.order import by_condition, natural_key

__all__ = ["MAX_ROWS", "diff_section"]

#: Changed (task, condition) rows listed at most; the rest are counted.
MAX_ROWS = 2000
_ORDER = {"score down": 0, "mixed": 1, "score up": 2, "tokens only": 3}


@dataclass(frozen=True, slots=True)
class _Row:
    task: str
    condition: str
    a: tuple[TrialView, ...]
    b: tuple[TrialView, ...]
    change: str  # a key of _ORDER, or "same"


def _cells(data: RunTrials) -> dict[tuple[str, str], dict[int, TrialView]]:
    cells: dict[tuple[str, str], dict[int, TrialView]] = {}
    for view in data.trials:
        t = view.trial
        cells.setdefault((t.task_id, t.condition), {})[t.replicate] = view
    return cells


def _change(a: dict[int, TrialView], b: dict[int, TrialView]) -> str:
    both = sorted(set(a) & set(b))
    down = any(b[r].trial.task_score < a[r].trial.task_score for r in both)
    up = any(b[r].trial.task_score > a[r].trial.task_score for r in both)
    if down and up:
        return "mixed"
    if down or up:
        return "score down" if down else "score up"
    tokens = any(b[r].trial.context_tokens != a[r].trial.context_tokens for r in both)
    return "tokens only" if tokens or set(a) != set(b) else "same"


def _rows(a: RunTrials, b: RunTrials) -> list[_Row]:
    ca, cb = _cells(a), _cells(b)
    rows = []
    for key in ca.keys() & cb.keys():
        ra, rb = ca[key], cb[key]
        rows.append(_Row(key[0], key[1], tuple(ra[r] for r in sorted(ra)),
                         tuple(rb[r] for r in sorted(rb)), _change(ra, rb)))
    return rows


def _list(views: tuple[TrialView, ...], prefix: str, member: str) -> str:
    return ", ".join(
        f'<a href="#{prefix}trial-{v.line}">{esc(str(getattr(v.trial, member)))}</a>'
        for v in views)


def diff_section(a: RunTrials, b: RunTrials, names: tuple[str, str],
                 prefixes: tuple[str, str]) -> Section:
    """The ``Run diff`` section: run A (``names[0]``) against run B, task by task."""
    rows = _rows(a, b)
    tasks_a = {v.trial.task_id for v in a.trials}
    tasks_b = {v.trial.task_id for v in b.trials}
    conds_a, conds_b = set(a.conditions), set(b.conditions)
    changed = [r for r in rows if r.change != "same"]
    changed.sort(key=lambda r: (_ORDER[r.change], natural_key(r.task),
                                natural_key(r.condition)))
    facts = [("Run A", esc(names[0])), ("Run B", esc(names[1])),
             ("Tasks in both runs", f"{len(tasks_a & tasks_b):,}"),
             ("Tasks only in A", f"{len(tasks_a - tasks_b):,}"),
             ("Tasks only in B", f"{len(tasks_b - tasks_a):,}"),
             ("Conditions in both",
              esc(", ".join(by_condition(conds_a & conds_b, lambda c: c, a.baseline))
                  or "none")),
             ("Conditions only in A", esc(", ".join(by_condition(conds_a - conds_b,
                                                                 lambda c: c)) or "none")),
             ("Conditions only in B", esc(", ".join(by_condition(conds_b - conds_a,
                                                                 lambda c: c)) or "none"))]
    counts = {k: sum(r.change == k for r in rows) for k in (*_ORDER, "same")}
    facts.append(("(task, condition) cells in both",
                  f"{len(rows):,}: " + ", ".join(f"{counts[k]:,} {k}" for k in
                                                  (*_ORDER, "same"))))
    head = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{v}</td></tr>' for k, v in facts)
    grid = []
    pa, pb = prefixes
    for r in changed[:MAX_ROWS]:
        cls = "bad" if r.change in ("score down", "mixed") else "ok" if r.change == \
            "score up" else ""
        grid.append([esc(r.task), esc(r.condition), f'<span class="{cls}">{esc(r.change)}'
                     "</span>" if cls else esc(r.change),
                     _list(r.a, pa, "task_score"), _list(r.b, pb, "task_score"),
                     _list(r.a, pa, "context_tokens"), _list(r.b, pb, "context_tokens")])
    cut = (f"all {len(changed):,} listed" if len(changed) <= MAX_ROWS
           else f"the first {MAX_ROWS:,} of {len(changed):,} listed")
    body = (f'<p class="headline">Run diff: {counts["score down"]:,} (task, condition) '
            f"cells score lower in B, {counts['score up']:,} higher, "
            f"{counts['mixed']:,} both ways by replicate, {counts['tokens only']:,} send "
            f"other context tokens with the same scores, {counts['same']:,} unchanged.</p>"
            "<p>Each (task, condition) recorded in both runs, paired by task id and "
            "condition name; scores and context tokens are each replicate's, in replicate "
            "order, as the trial logs record them, and each links to its trial.</p>"
            f'<div class="tablewrap"><table><tbody>{head}</tbody></table></div>'
            + table(["task", "condition", "change", "task score A", "task score B",
                     "context tokens A", "context tokens B"], grid,
                    caption=f"Cells that changed, score losses first ({cut})"))
    return Section("diff", "Run diff", body, "Run diff")
