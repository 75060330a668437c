"""The context managers agent products ship, as ctxbench's built-ins.

- ``full_history``: every message, every turn (the baseline);
- ``last_k_turns``: the system prompt and task, then the newest ``k`` steps (default
  :data:`KEEP_STEPS`; a step: an assistant message and the tool results that answer it),
  fewer if the budget asks for it;
- ``elide_tool_outputs``: every message, but tool results older than the newest
  ``keep_newest`` steps (default 1) cut to their first ``head_lines`` lines (default 1)
  and a marker saying how much was elided;
- ``summarize_older``: the steps before the newest ``keep`` (default :data:`KEEP_STEPS`)
  replaced by one summary written by the trial's own model (the ``native_compaction``
  emulation; the summary call's tokens are counted in the trial);
- ``compiled_history``: the reference compiler over the history: tool results older than
  the newest ``keep_newest`` steps (default 1) keep only their lines that best match the
  task (Lucene BM25, :mod:`ctxbench.compiler.retrieval`), chosen best first within the
  budget and shown in their own order;
- ``combined``: ``elide_tool_outputs`` (``head_lines``), then ``summarize_older``
  (``keep``) when still over budget.

The parameters are each manager's ``params`` (:mod:`ctxbench.compiler.context_managers.
params`), set per condition; their defaults are the values above. Each is deterministic
given the conversation and its parameters; the budgeted ones never return more than
the budget when the head and newest step fit in it (else the smallest answer they can).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ctxbench.compiler.context_managers.interface import (
    AgentMessage,
    ContextDecision,
    ContextRequest,
)
from ctxbench.compiler.context_managers.params import ManagerParam, param
from ctxbench.compiler.retrieval import LuceneBM25, TermMapper, raw_terms

__all__ = ["COMBINED", "COMPILED_HISTORY", "ELIDE_TOOL_OUTPUTS", "FULL_HISTORY", "KEEP_STEPS",
           "LAST_K_TURNS", "SUMMARIZE_OLDER", "SUMMARY_PREFIX", "SUMMARY_ROOM", "elided"]

#: Steps ``last_k_turns`` and ``summarize_older`` keep whole by default.
KEEP_STEPS = 2
_NEWEST = ManagerParam("keep_newest", 1, "the newest steps whose tool results stay whole",
                       minimum=1, maximum=1000)
_HEAD = ManagerParam("head_lines", 1, "the lines an elided tool result keeps", minimum=1,
                     maximum=1000)
_KEEP = ManagerParam("keep", KEEP_STEPS, "the newest steps kept whole, not summarized",
                     minimum=1, maximum=1000)
#: Tokens of the budget ``summarize_older`` leaves for its summary (the summary call's
#: output is capped at this many tokens).
SUMMARY_ROOM = 96
SUMMARY_PREFIX = "Summary of the earlier steps: "
SUMMARY_PROMPT = ("Summarize these earlier steps of a task in at most three short sentences. "
                  "Keep every number, name and value that a later step could need.\n\n")

Steps = tuple[tuple[AgentMessage, ...], ...]


def _flat(head: Sequence[AgentMessage], steps: Sequence[Sequence[AgentMessage]]
          ) -> tuple[AgentMessage, ...]:
    return (*head, *(m for step in steps for m in step))


def elided(message: AgentMessage, head_lines: int = 1) -> AgentMessage:
    """A tool result cut to its first ``head_lines`` lines, with a marker counting the
    characters dropped."""
    lines = message.content.split("\n")
    if len(lines) <= head_lines:
        return message
    head, rest = "\n".join(lines[:head_lines]), "\n".join(lines[head_lines:])
    return replace(message, content=f"{head}\n[{len(rest) + 1} characters elided]")


class _FullHistory:
    name = "full_history"
    budgeted = False
    summarizes = False
    summary = "every message of the conversation, every turn (the baseline)"
    params: tuple[ManagerParam, ...] = ()

    def manage(self, request: ContextRequest) -> ContextDecision:
        return ContextDecision(request.messages)


class _LastK:
    name = "last_k_turns"
    budgeted = True
    summarizes = False
    summary = "the system prompt and task, then the newest k steps"
    params = (ManagerParam("k", KEEP_STEPS, "the newest steps sent (fewer if the budget "
                           "asks)", minimum=1, maximum=1000),)

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        keep = min(int(param(request, self.params, "k")), len(steps))
        while keep > 1 and request.budget is not None and request.count_messages(
                _flat(head, steps[-keep:])) > request.budget:
            keep -= 1
        kept = steps[len(steps) - keep:] if keep else ()
        return ContextDecision(_flat(head, kept),
                               (("dropped_steps", str(len(steps) - keep)),))


class _Elide:
    name = "elide_tool_outputs"
    budgeted = True
    summarizes = False
    summary = "every message; tool results older than the newest steps cut to their head"
    params = (_NEWEST, _HEAD)

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        newest = int(param(request, self.params, "keep_newest"))
        lines = int(param(request, self.params, "head_lines"))
        cut = max(len(steps) - newest, 0)
        older = [tuple(elided(m, lines) if m.role == "tool" else m for m in s)
                 for s in steps[:cut]]
        return ContextDecision(_flat(head, [*older, *steps[cut:]]),
                               (("elided_steps", str(len(older))),))


def _summarized(request: ContextRequest, head: tuple[AgentMessage, ...],
                steps: Steps, keep_steps: int) -> tuple[tuple[AgentMessage, ...], int]:
    """Head, one summary of all but the newest steps, then those; (messages, summarized).

    Fewer than ``keep_steps`` are kept whole when they would leave less than
    :data:`SUMMARY_ROOM` tokens of the budget for the summary."""
    keep = min(keep_steps, len(steps))
    while keep > 1 and request.budget is not None and request.count_messages(
            _flat(head, steps[len(steps) - keep:])) > request.budget - SUMMARY_ROOM:
        keep -= 1
    older, newest = steps[:len(steps) - keep], steps[len(steps) - keep:]
    if not older:
        return _flat(head, newest), 0
    text = "\n".join(f"{m.role}: {m.content}" for s in older for m in s)
    summary = request.summarize(SUMMARY_PROMPT + text)
    return (*head, AgentMessage("user", SUMMARY_PREFIX + summary),
            *_flat((), newest)), len(older)


class _Summarize:
    name = "summarize_older"
    budgeted = True
    summarizes = True
    summary = ("steps before the newest keep replaced by a summary the model writes "
               "(native_compaction emulated; its tokens count)")
    params = (_KEEP,)

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        if request.budget is None or request.count_messages(request.messages) <= request.budget:
            return ContextDecision(request.messages, (("summarized_steps", "0"),))
        messages, count = _summarized(request, head, steps,
                                      int(param(request, self.params, "keep")))
        return ContextDecision(messages, (("summarized_steps", str(count)),))


def _marker(total: int, kept: int) -> str:
    return f"[{total - kept} of {total} lines elided]"


class _Compiled:
    name = "compiled_history"
    budgeted = True
    summarizes = False
    summary = ("older tool results cut to their lines that best match the task (BM25), "
               "best first within the budget")
    params = (_NEWEST,)

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        if not steps or request.budget is None or request.count_messages(
                request.messages) <= request.budget:
            return ContextDecision(request.messages, (("cut_lines", "0"),))
        cut = max(len(steps) - int(param(request, self.params, "keep_newest")), 0)
        older, newest = [list(s) for s in steps[:cut]], steps[cut:]
        spots = [(i, j) for i, s in enumerate(older) for j, m in enumerate(s)
                 if m.role == "tool"]
        lines = [(i, j, n, line) for i, j in spots
                 for n, line in enumerate(older[i][j].content.split("\n"))]
        # The fixed part: everything but the older tool results' lines, each result's
        # marker included at its longest (every line elided), so the markers fit too.
        bare = [[replace(m, content=_marker(m.content.count("\n") + 1, 0))
                 if m.role == "tool" else m for m in s] for s in older]
        room = request.budget - request.count_messages(_flat(head, [*bare, *newest]))
        chosen: set[int] = set()
        if lines and room > 0:
            mapper = TermMapper()
            terms = [mapper.ids(raw_terms(line)) for _, _, _, line in lines]
            lengths = np.array([len(t) for t in terms], dtype=np.int64)
            flat = np.concatenate(terms) if int(lengths.sum()) else np.zeros(0, np.int32)
            keep = flat >= 0
            kept_lengths = np.array([int((t >= 0).sum()) for t in terms], dtype=np.int64)
            query = mapper.ids(raw_terms("\n".join(m.content for m in head
                                                   if m.role == "user")))
            scores = np.zeros(len(lines), dtype=np.float32)
            if int(kept_lengths.sum()) and len(query[query >= 0]):
                bm25 = LuceneBM25(flat[keep], np.maximum(kept_lengths, 0),
                                  len(mapper.vocab))
                scores = bm25.scores(query[query >= 0])
            for k in np.lexsort((np.arange(len(lines)), -scores)):
                cost = request.count(lines[int(k)][3] + "\n")
                if scores[k] <= 0 or cost > room:
                    continue
                chosen.add(int(k))
                room -= cost
        for i, j in spots:
            picked = [line for k, (a, b, _, line) in enumerate(lines)
                      if (a, b) == (i, j) and k in chosen]
            total = len(older[i][j].content.split("\n"))
            marker = _marker(total, len(picked))
            older[i][j] = replace(older[i][j], content="\n".join([*picked, marker]))
        return ContextDecision(_flat(head, [*older, *newest]),
                               (("kept_lines", str(len(chosen))),
                                ("cut_lines", str(len(lines) - len(chosen)))))


class _Combined:
    name = "combined"
    budgeted = True
    summarizes = True
    summary = "old tool results elided, then older steps summarized if still over budget"
    params = (_HEAD, _KEEP)

    def manage(self, request: ContextRequest) -> ContextDecision:
        lines = int(param(request, self.params, "head_lines"))
        first = _Elide().manage(replace(request, params={"head_lines": lines}))
        if request.budget is None or request.count_messages(first.messages) <= request.budget:
            return ContextDecision(first.messages, (*first.details, ("summarized_steps", "0")))
        head, steps = request.head(), request.steps()
        older = tuple(tuple(elided(m, lines) if m.role == "tool" else m for m in s)
                      for s in steps[:-1])
        messages, count = _summarized(request, head, (*older, *steps[-1:]),
                                      int(param(request, self.params, "keep")))
        return ContextDecision(messages, (*first.details, ("summarized_steps", str(count))))


FULL_HISTORY = _FullHistory()
LAST_K_TURNS = _LastK()
ELIDE_TOOL_OUTPUTS = _Elide()
SUMMARIZE_OLDER = _Summarize()
COMPILED_HISTORY = _Compiled()
COMBINED = _Combined()
