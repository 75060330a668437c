"""The run page's drill-down: every pair of trials, discordant first, with its packets.

The data (trials, pairs, packets; :mod:`ctxbench.render.html.trials`) go into the page as
one JSON block, and each inlined packet as its own (parsed only when a trial is opened),
that the inline script (:mod:`ctxbench.render.html.drilldown_js`) turns
into a table to filter by comparison, stratum, outcome and task, sorted by score change,
tokens or latency; a trial opens in place and ``#trial-LINE`` (its line in trials.jsonl)
links to it. Without script, a ``<noscript>`` part lists the discordant pairs of each
comparison with both trials' values, in ``<details>`` elements that open without script.

Packets are inlined once each (content-addressed), those of discordant pairs first, up
to :data:`INLINE_PACKET_BYTES` bytes in all; the others link to their file in the
packet store, so a 10,000-trial page stays small. Every string is escaped: the JSON
block cannot close its element (``<``, ``>`` and ``&`` are written as ``\\u`` escapes) and
the script writes text with ``textContent`` only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from ctxbench.protocols.cef.records import Trial
from ctxbench.render.html.drilldown_js import SCRIPT
from ctxbench.render.html.page import Section, table
from ctxbench.render.html.svg import esc
from ctxbench.render.html.trials import (
    TRIALS_FILE,
    RunTrials,
    TrialView,
    packet_file,
    read_packet,
)

__all__ = ["INLINE_PACKET_BYTES", "STATIC_PAIRS", "drilldown_section"]

#: Packet bytes inlined in one page, at most (the rest link to their packet files).
INLINE_PACKET_BYTES = 1_000_000
#: Discordant pairs listed per comparison for a reader without script.
STATIC_PAIRS = 100

_CODE = {"lost": 0, "gained": 1, "same": 2}


def _labels(data: RunTrials) -> tuple[str, str]:
    if data.binary:
        return "baseline right, candidate wrong", "candidate right, baseline wrong"
    return "baseline scored higher", "candidate scored higher"


def _json_block(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _href(data: RunTrials, out: Path, sha: str) -> str:
    target = packet_file(data.path.parent, sha)
    return quote(Path(os.path.relpath(target, out.parent)).as_posix())


def _packets(data: RunTrials) -> tuple[list[list[str | int]], dict[str, int], list[str]]:
    """[sha, index of its inlined text or -1, 1 if the store holds it else 0] per distinct
    packet, each's index, and the inlined texts (each its own block, parsed only when
    opened)."""
    order = [data.trials[i].trial.context_sha256 for p in data.pairs if p.outcome != "same"
             for i in (p.baseline, p.candidate)]
    order += [v.trial.context_sha256 for v in data.trials]
    room = INLINE_PACKET_BYTES
    inline: set[str] = set()
    for sha in dict.fromkeys(order):
        size = data.packets[sha]
        if size is not None and size <= room:
            inline.add(sha)
            room -= size
    rows: list[list[str | int]] = []
    index: dict[str, int] = {}
    texts: list[str] = []
    for sha, size in data.packets.items():
        index[sha] = len(rows)
        if sha in inline:
            rows.append([sha, len(texts), 1])
            texts.append(read_packet(data.path.parent, sha))
        else:
            rows.append([sha, -1, 0 if size is None else 1])
    return rows, index, texts


class _Tables:
    """Each string, expected answer, scorer-details object and selection once, by index."""

    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.expected: dict[str, int] = {}
        self.details: dict[str, int] = {}
        self.artifacts: dict[tuple[str, str], int] = {}
        self.selected: dict[str, int] = {}

    def text(self, value: str | None) -> int:
        return -1 if value is None else self.texts.setdefault(value, len(self.texts))

    def _texts(self, values: Sequence[str]) -> list[int]:
        return [self.text(v) for v in values]

    @staticmethod
    def _once(table: dict[str, int], row: object) -> int:
        return table.setdefault(json.dumps(row, separators=(",", ":")), len(table))

    def trial(self, t: Trial) -> list[int]:
        """[query, expected, scorer details, selection] of a trial, -1 where not recorded."""
        expected = details = selected = -1
        if t.expected is not None:
            e = t.expected
            expected = self._once(self.expected, [self._texts(e.answers),
                                                  self._texts(e.answer_terms),
                                                  1 if e.abstention else 0])
        if t.scorer_details is not None:
            details = self._once(self.details, [
                [self.text(k), self.text(v) if isinstance(v, str) else self._texts(v)]
                for k, v in t.scorer_details.items()])
        if t.selected_artifacts is not None:
            selected = self._once(self.selected, [
                self.artifacts.setdefault((a.artifact_id, a.blake3), len(self.artifacts))
                for a in t.selected_artifacts])
        return [self.text(t.query), expected, details, selected]

    @staticmethod
    def rows(table: dict[str, int]) -> list[object]:
        return [json.loads(key) for key in table]


def _payload(data: RunTrials, out: Path, prefix: str, short: Sequence[str]
             ) -> tuple[dict[str, object], list[str]]:
    tables = _Tables()
    text = tables.text
    tasks: dict[str, int] = {}
    conditions = {c: k for k, c in enumerate(data.conditions)}
    packets, packet_index, packet_texts = _packets(data)
    trials = []
    for view in data.trials:
        t = view.trial
        extras = json.dumps(view.extras, ensure_ascii=False) if view.extras else None
        trials.append([t.line, tasks.setdefault(t.task_id, len(tasks)),
                       conditions[t.condition], t.replicate, view.stratum,
                       0 if t.failed else 1, text(t.error_type), text(t.response_text),
                       t.task_score, t.evidence_recall, t.unsupported_claim_rate,
                       t.context_tokens, t.output_tokens, t.latency_ms, t.billed_cost_usd,
                       packet_index[t.context_sha256], text(extras), *tables.trial(t)])
    lost, gained = _labels(data)
    return {"prefix": prefix, "baseline": data.baseline, "lost": lost, "gained": gained,
            "conditions": list(data.conditions), "strata": list(short),
            "strataFull": list(data.strata), "tasks": list(tasks),
            "texts": list(tables.texts), "expected": tables.rows(tables.expected),
            "details": tables.rows(tables.details),
            "artifacts": [list(a) for a in tables.artifacts],
            "selected": tables.rows(tables.selected),
            "packets": packets, "packetBase": _href(data, out, "")[: -len(".txt")],
            "trials": trials,
            "pairs": [[conditions[p.condition], p.baseline, p.candidate, _CODE[p.outcome]]
                      for p in data.pairs]}, packet_texts


def _value(v: object) -> str:
    return esc("\u2014" if v is None else str(v))


_DETAIL_LABELS = {"method": "scoring method", "matched": "matched",
                  "evidence_required": "evidence required",
                  "evidence_found": "evidence found", "judged_by": "judged by"}
_NOT_RECORDED = "not recorded (the trial line predates the member)"


def _items(values: Sequence[str], empty: str) -> str:
    if not values:
        return esc(empty)
    return '<ul class="dd-list">' + "".join(f"<li>{esc(v)}</li>" for v in values) + "</ul>"


def _task_rows(t: Trial) -> list[tuple[str, str]]:
    """(label, HTML) of the task's query and the expected answer, as the trial records."""
    rows = [("query", esc(_NOT_RECORDED) if t.query is None
             else f"<pre>{esc(t.query)}</pre>")]
    e = t.expected
    if e is None:
        return [*rows, ("expected answer", esc(_NOT_RECORDED))]
    if e.answers or not (e.answer_terms or e.abstention):
        rows.append(("expected answers", _items(e.answers, "none")))
    if e.answer_terms:
        rows.append(("expected answer terms", _items(e.answer_terms, "none")))
    rows.append(("abstention expected", "yes" if e.abstention else "no"))
    return rows


def _scorer_rows(t: Trial) -> list[tuple[str, str]]:
    """(label, HTML) of the scorer's details and the selected artifacts."""
    rows: list[tuple[str, str]] = []
    if t.scorer_details is None:
        rows.append(("scorer details", esc(_NOT_RECORDED)))
    else:
        for key, value in t.scorer_details.items():
            label = _DETAIL_LABELS.get(key, key)
            rows.append((label, esc(value) if isinstance(value, str)
                         else _items(value, "none")))
    if t.selected_artifacts is None:
        rows.append(("selected artifacts", esc(_NOT_RECORDED)))
    else:
        rows.append(("selected artifacts", _items(
            [a.artifact_id for a in t.selected_artifacts], "none (no packet)")))
    return rows


def _dl(rows: Sequence[tuple[str, str]]) -> str:
    return "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows)


def _static_trial(view: TrialView, role: str, prefix: str, packet: str, task: bool) -> str:
    t = view.trial
    rows = [("outcome", t.outcome), ("failure reason", t.error_type),
            ("task score", t.task_score), ("evidence recall", t.evidence_recall),
            ("context tokens", t.context_tokens), ("latency ms", t.latency_ms)]
    cells = "".join(f"<dt>{esc(k)}</dt><dd>{_value(v)}</dd>" for k, v in rows
                    if not (k == "failure reason" and v is None))
    answer = ("no answer recorded" if t.response_text is None
              else f"<pre>{esc(t.response_text)}</pre>")
    extras = "".join(f"<dt>{esc(k)}</dt><dd><pre>{esc(v)}</pre></dd>" for k, v in view.extras)
    own = _dl(_task_rows(t)) if task else ""
    return (f'<div class="dd-trial"><h4>{esc(role)}: {esc(t.condition)} '
            f'<a href="#{prefix}trial-{t.line}">trial {t.line}</a></h4><dl>{own}{cells}'
            f"<dt>answer</dt><dd>{answer}</dd>{_dl(_scorer_rows(t))}{extras}"
            f"<dt>packet</dt><dd>{packet}</dd></dl></div>")


def _static(data: RunTrials, out: Path, prefix: str) -> str:
    """Without script: each comparison's discordant pairs, both trials side by side."""
    lost, gained = _labels(data)
    named = {"lost": lost, "gained": gained}

    def packet(view: TrialView) -> str:
        sha = view.trial.context_sha256
        if data.packets[sha] is None:
            return f"packet not kept (sha256 <code>{esc(sha)}</code>)"
        return f'<a href="{esc(_href(data, out, sha))}">packet file {esc(sha[:12])}\u2026</a>'

    parts = []
    for condition in data.conditions:
        pairs = [p for p in data.pairs if p.condition == condition and p.outcome != "same"]
        if condition == data.baseline:
            continue
        pairs.sort(key=lambda p: _CODE[p.outcome])
        items = []
        for p in pairs[:STATIC_PAIRS]:
            b, c = data.trials[p.baseline], data.trials[p.candidate]
            # the task's query and expected answer once, when both trials record the same
            same = (b.trial.query, b.trial.expected) == (c.trial.query, c.trial.expected)
            task = f'<dl class="dd-task">{_dl(_task_rows(c.trial))}</dl>' if same else ""
            items.append(
                f'<details id="{prefix}trial-{c.line}"><summary>{esc(c.trial.task_id)} '
                f"replicate {c.trial.replicate}: {esc(named[p.outcome])}, task score "
                f"{_value(b.trial.task_score)} \u2192 {_value(c.trial.task_score)}</summary>"
                f'{task}<div class="dd-pair">'
                f'{_static_trial(b, "baseline", prefix, packet(b), not same)}'
                f'{_static_trial(c, "candidate", prefix, packet(c), not same)}</div></details>')
        shown = (f"all {len(pairs):,} listed" if len(pairs) <= STATIC_PAIRS
                 else f"the first {STATIC_PAIRS:,} of {len(pairs):,} listed")
        parts.append(f"<h3>{esc(condition)} vs {esc(data.baseline or '')}: discordant pairs "
                     f"({shown})</h3>" + ("".join(items) or "<p>None.</p>"))
    return ("<noscript><div class=\"dd-static\"><p>Without script this part lists the "
            "discordant pairs of each comparison; every pair, the filters and the inlined "
            f"packets need script.</p>{''.join(parts)}</div></noscript>")


def drilldown_section(data: RunTrials, out: Path, prefix: str,
                      short_strata: Sequence[str]) -> Section:
    """The ``Trials`` section of a run page (``prefix`` keeps its ids unique on the page)."""
    link = quote(Path(os.path.relpath(data.path, out.parent)).as_posix())
    lost, gained = _labels(data)
    intro = (f"<p>Every pair of trials ({len(data.pairs):,}) of the {len(data.trials):,} in "
             f'<a href="{esc(link)}">{esc(TRIALS_FILE)}</a>: the baseline '
             f"<code>{esc(data.baseline or '')}</code> and a candidate on the same task and "
             f"replicate. Discordant pairs come first ({esc(lost)}, then {esc(gained)}). "
             "Open a pair to see the task's query and expected answer, both answers, the "
             "scorer's details, scores, tokens, latency, failure reason, the selected "
             "artifacts and the packet each condition sent "
             "(from the run's packet store). A trial's link is "
             f"<code>#{esc(prefix)}trial-LINE</code>, LINE its line in {esc(TRIALS_FILE)}."
             "</p>")
    if data.torn:
        intro += ("<p class=\"note\">The trial log ends in a line being written: the run "
                  "is going on, and that trial is not shown yet.</p>")
    if data.baseline is None:
        body = intro + "<p>No CEF report names a baseline, so there are no pairs.</p>"
        return Section(f"{prefix}trials", "Trials", body, "Trials")
    counts = []
    for condition in data.conditions:
        if condition == data.baseline:
            continue
        mine = [p for p in data.pairs if p.condition == condition]
        counts.append([esc(condition), f"{len(mine):,}",
                       f"{sum(p.outcome == 'lost' for p in mine):,}",
                       f"{sum(p.outcome == 'gained' for p in mine):,}"])
    summary = table(["comparison", "pairs", lost, gained], counts,
                    caption="Pairs per comparison", numeric=(1, 2, 3))
    payload, texts = _payload(data, out, prefix, short_strata)
    packets = "".join(f'<script type="application/json" class="dd-pk">{_json_block(t)}'
                      "</script>" for t in texts)
    # The program right after its data: the table is live before the browser has parsed
    # the packets, the no-script listing and the rest of the page.
    body = (intro + summary + f'<div class="drill" data-prefix="{esc(prefix)}">'
            f'<script type="application/json" class="dd-data">{_json_block(payload)}'
            f'</script><div class="dd-live"></div><script>{SCRIPT}</script>{packets}'
            f"{_static(data, out, prefix)}</div>")
    return Section(f"{prefix}trials", "Trials", body, "Trials")

