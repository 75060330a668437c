"""Recorded agent traces: decision points replayed under a context manager, and their scores.

A :class:`RecordedTrace` is one session of a real agent, read by a reader per format
(:mod:`ctxbench.workloads.trace_hermes`, :mod:`ctxbench.workloads.trace_openclaw`) into
the conversation form context managers receive (:class:`~ctxbench.compiler.
context_managers.AgentMessage`), with its terminal outcome (``completed``).

Each assistant message of a completed trace is a :class:`DecisionPoint`: the history
before it is what a context manager compacts, and the recorded message is the reference
for the model's next move. Traces that did not complete yield none: what their agent did
next is no reference for what should be done.

- an **action** point (the agent called tools next) scores 1.0 when the model calls the
  same tools with the same arguments (a multiset of (name, canonical JSON arguments); the
  order of parallel calls is free), else 0.0;
- an **answer** point (the agent answered in text next) scores the token F1 of the model's
  text against the recorded answer (SQuAD's: lowercased, punctuation and articles
  dropped), 0.0 for a tool call instead.

The evidence of a point is the tool results since the last user message: what the
recorded move was made from. Its evidence recall is the share of them still present,
verbatim, in what the manager sent.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ToolCallRef
from ctxbench.core import canonical_json
from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.tools import ToolSchema

__all__ = ["MAX_TRACE_MESSAGES", "DecisionPoint", "RecordedTrace", "answer_f1",
           "decision_points", "recorded_tools", "skipped_summary"]

MAX_TRACE_MESSAGES = 20_000
"""The most messages one trace may hold (a reader refuses a longer one, located)."""
_COUNTED = re.compile(r"([^:]+): (\d+)")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


@dataclass(frozen=True, slots=True)
class RecordedTrace:
    """One recorded session: its messages, the tools it offered and how it ended;
    ``skipped`` names the recorded entries that are not conversation (file line, kind);
    ``not_moves`` holds the indices of assistant messages the agent wrote without its
    model (a compaction summary, a delivered-text mirror): history, never a reference."""

    trace_id: str
    agent: str
    source: str
    model: str | None
    completed: bool
    messages: tuple[AgentMessage, ...]
    tools: tuple[ToolSchema, ...]
    skipped: tuple[str, ...] = ()
    not_moves: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class DecisionPoint:
    """The history before one recorded assistant message, and that message."""

    point_id: str
    trace: RecordedTrace
    index: int
    history: tuple[AgentMessage, ...]
    expected: AgentMessage

    @property
    def kind(self) -> str:
        """``action`` (the agent called tools next) or ``answer``."""
        return "action" if self.expected.tool_calls else "answer"

    @property
    def evidence(self) -> tuple[str, ...]:
        """The tool results since the last user message."""
        out: list[str] = []
        for m in reversed(self.history):
            if m.role == "user":
                break
            if m.role == "tool" and m.content:
                out.append(m.content)
        return tuple(reversed(out))

    def evidence_recall(self, sent: Sequence[AgentMessage]) -> float:
        """Share of the evidence present verbatim in ``sent`` (1.0 when there is none)."""
        if not self.evidence:
            return 1.0
        texts = [m.content for m in sent]
        return sum(1 for e in self.evidence if any(e in t for t in texts)) / len(self.evidence)

    def score(self, calls: Sequence[ToolCall] | None, text: str | None) -> float:
        """The model's next move against the recorded one (see the module doc)."""
        if self.kind == "action":
            if not calls:
                return 0.0
            return 1.0 if _call_set(calls) == _ref_set(self.expected.tool_calls) else 0.0
        if calls:
            return 0.0
        return answer_f1(text or "", self.expected.content)


def _canonical_arguments(arguments: Mapping[str, Any]) -> str:
    return canonical_json(dict(arguments)).decode("utf-8")


def _call_set(calls: Sequence[ToolCall]) -> Counter[tuple[str, str]]:
    return Counter((c.name, _canonical_arguments(c.arguments)) for c in calls)


def _ref_set(refs: Sequence[ToolCallRef]) -> Counter[tuple[str, str]]:
    return Counter((r.name, _canonical_arguments(json.loads(r.arguments))) for r in refs)


def _tokens(text: str) -> list[str]:
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def answer_f1(answer: str, reference: str) -> float:
    """Token F1 of ``answer`` against ``reference`` (SQuAD's normalization)."""
    got, want = _tokens(answer), _tokens(reference)
    if not got or not want:
        return 1.0 if got == want else 0.0
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def decision_points(trace: RecordedTrace) -> tuple[DecisionPoint, ...]:
    """Every assistant message of a completed trace that follows a user message or tool
    results and is the model's move (not in ``not_moves``), as a decision point (none for
    a trace that did not complete)."""
    if not trace.completed:
        return ()
    points = []
    for n, message in enumerate(trace.messages):
        if message.role != "assistant" or n == 0 or n in trace.not_moves \
                or trace.messages[n - 1].role not in ("user", "tool"):
            continue
        points.append(DecisionPoint(f"{trace.trace_id}@{n}", trace, n, trace.messages[:n],
                                    message))
    return tuple(points)


def recorded_tools(messages: Sequence[AgentMessage]) -> tuple[ToolSchema, ...]:
    """Schemas for the tools a trace called, where the format records none: each takes
    the arguments it was called with (no types are claimed)."""
    seen: dict[str, set[str]] = {}
    for m in messages:
        for call in m.tool_calls:
            arguments = json.loads(call.arguments)
            seen.setdefault(call.name, set()).update(arguments)
    return tuple(ToolSchema(name, "a tool of the recorded session",
                            {"type": "object",
                             "properties": {k: {} for k in sorted(keys)}})
                 for name, keys in sorted(seen.items()))


def skipped_summary(traces: Sequence[RecordedTrace]) -> str | None:
    """One line counting what the traces recorded but replay does not use as conversation
    (by kind, each listed in its trace's ``skipped``) and the assistant messages that are
    not moves; None when there is nothing."""
    kinds: Counter[str] = Counter()
    for trace in traces:
        for text in trace.skipped:
            counted = _COUNTED.fullmatch(text)
            if counted is not None:  # "what: N", a count of entries
                kinds[counted.group(1)] += int(counted.group(2))
                continue
            what = text.split(": ", 1)[1] if text.startswith("line ") else text
            kinds[what.split(" (", 1)[0]] += 1
    not_moves = sum(len(t.not_moves) for t in traces)
    if not kinds and not not_moves:
        return None
    parts = [f"{kind} x{count}" for kind, count in sorted(kinds.items())]
    if not_moves:
        parts.append(f"assistant messages that are not the model's moves x{not_moves}")
    return (f"traces: {sum(kinds.values())} recorded entries not replayed as conversation, "
            "each listed in its trace's skipped: " + "; ".join(parts))
