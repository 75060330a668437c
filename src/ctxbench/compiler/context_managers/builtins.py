"""The context managers agent products ship, as ctxbench's built-ins.

- ``full_history``: every message, every turn (the baseline);
- ``last_k_turns``: the system prompt and task, then the newest :data:`KEEP_STEPS` steps
  (a step: an assistant message and the tool results that answer it), fewer if the budget
  asks for it;
- ``elide_tool_outputs``: every message, but tool results older than the newest step cut
  to their first line and a marker saying how much was elided;
- ``summarize_older``: the steps before the newest :data:`KEEP_STEPS` replaced by one
  summary written by the trial's own model (the ``native_compaction`` emulation; the
  summary call's tokens are counted in the trial);
- ``compiled_history``: the reference compiler over the history: older tool results keep
  only their lines that best match the task (Lucene BM25, :mod:`ctxbench.compiler.
  retrieval`), chosen best first within the budget and shown in their own order;
- ``combined``: ``elide_tool_outputs``, then ``summarize_older`` when still over budget.

Each is deterministic given the conversation; the budgeted ones never return more than
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
from ctxbench.compiler.retrieval import LuceneBM25, TermMapper, raw_terms

__all__ = ["COMBINED", "COMPILED_HISTORY", "ELIDE_TOOL_OUTPUTS", "FULL_HISTORY", "KEEP_STEPS",
           "LAST_K_TURNS", "SUMMARIZE_OLDER", "SUMMARY_PREFIX", "SUMMARY_ROOM", "elided"]

#: Steps ``last_k_turns`` and ``summarize_older`` keep whole.
KEEP_STEPS = 2
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


def elided(message: AgentMessage) -> AgentMessage:
    """A tool result cut to its first line, with a marker counting what was dropped."""
    first, _, rest = message.content.partition("\n")
    if not rest:
        return message
    return replace(message, content=f"{first}\n[{len(rest) + 1} characters elided]")


class _FullHistory:
    name = "full_history"
    budgeted = False
    summarizes = False
    summary = "every message of the conversation, every turn (the baseline)"

    def manage(self, request: ContextRequest) -> ContextDecision:
        return ContextDecision(request.messages)


class _LastK:
    name = "last_k_turns"
    budgeted = True
    summarizes = False
    summary = f"the system prompt and task, then the newest {KEEP_STEPS} steps"

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        keep = min(KEEP_STEPS, len(steps))
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
    summary = "every message; tool results older than the newest step cut to one line"

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        older = [tuple(elided(m) if m.role == "tool" else m for m in s) for s in steps[:-1]]
        return ContextDecision(_flat(head, [*older, *steps[-1:]]),
                               (("elided_steps", str(len(older))),))


def _summarized(request: ContextRequest, head: tuple[AgentMessage, ...],
                steps: Steps) -> tuple[tuple[AgentMessage, ...], int]:
    """Head, one summary of all but the newest steps, then those; (messages, summarized).

    Fewer than :data:`KEEP_STEPS` are kept whole when they would leave less than
    :data:`SUMMARY_ROOM` tokens of the budget for the summary."""
    keep = min(KEEP_STEPS, len(steps))
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
    summary = (f"steps before the newest {KEEP_STEPS} replaced by a summary the model "
               "writes (native_compaction emulated; its tokens count)")

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        if request.budget is None or request.count_messages(request.messages) <= request.budget:
            return ContextDecision(request.messages, (("summarized_steps", "0"),))
        messages, count = _summarized(request, head, steps)
        return ContextDecision(messages, (("summarized_steps", str(count)),))


class _Compiled:
    name = "compiled_history"
    budgeted = True
    summarizes = False
    summary = ("older tool results cut to their lines that best match the task (BM25), "
               "best first within the budget")

    def manage(self, request: ContextRequest) -> ContextDecision:
        head, steps = request.head(), request.steps()
        if not steps or request.budget is None or request.count_messages(
                request.messages) <= request.budget:
            return ContextDecision(request.messages, (("cut_lines", "0"),))
        older = [list(s) for s in steps[:-1]]
        spots = [(i, j) for i, s in enumerate(older) for j, m in enumerate(s)
                 if m.role == "tool"]
        lines = [(i, j, n, line) for i, j in spots
                 for n, line in enumerate(older[i][j].content.split("\n"))]
        # The fixed part: everything but the older tool results' lines.
        bare = [[replace(m, content="") if m.role == "tool" else m for m in s] for s in older]
        room = request.budget - request.count_messages(_flat(head, [*bare, *steps[-1:]]))
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
            marker = f"[{total - len(picked)} of {total} lines elided]"
            older[i][j] = replace(older[i][j], content="\n".join([*picked, marker]))
        return ContextDecision(_flat(head, [*older, *steps[-1:]]),
                               (("kept_lines", str(len(chosen))),
                                ("cut_lines", str(len(lines) - len(chosen)))))


class _Combined:
    name = "combined"
    budgeted = True
    summarizes = True
    summary = "old tool results elided, then older steps summarized if still over budget"

    def manage(self, request: ContextRequest) -> ContextDecision:
        first = _Elide().manage(request)
        if request.budget is None or request.count_messages(first.messages) <= request.budget:
            return ContextDecision(first.messages, (*first.details, ("summarized_steps", "0")))
        head, steps = request.head(), request.steps()
        older = tuple(tuple(elided(m) if m.role == "tool" else m for m in s)
                      for s in steps[:-1])
        messages, count = _summarized(request, head, (*older, *steps[-1:]))
        return ContextDecision(messages, (*first.details, ("summarized_steps", str(count))))


FULL_HISTORY = _FullHistory()
LAST_K_TURNS = _LastK()
ELIDE_TOOL_OUTPUTS = _Elide()
SUMMARIZE_OLDER = _Summarize()
COMPILED_HISTORY = _Compiled()
COMBINED = _Combined()
