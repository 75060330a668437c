"""The context-strategy interface, and the checks ctxbench applies to whatever one returns.

A strategy receives a :class:`StrategyRequest` (task, query, budget, declared tokenizer,
policy, and the permitted documents and ranked candidate chunks) and returns a
:class:`StrategyResult` (the context text and what it selected)::

    class MyStrategy:
        name = "my-packer"
        budgeted = True
        summary = "the best chunks, whole"

        def build(self, request: StrategyRequest) -> StrategyResult:
            best = request.candidates()[:3]
            selected = tuple(Selected(c.artifact_id, ((c.start, c.end),)) for c in best)
            return StrategyResult(request.render(selected), selected)

ctxbench trusts none of it (:func:`compile_with_strategy`): before the strategy runs it
fixes, from its own index and the policy, which artifacts are permitted (every alias of
a file included) and what restricted text is; then it recounts the context with the
declared tokenizer, refuses an unknown, denied or disallowed artifact in ``selected``,
refuses a context not made of the selected bytes (the canonical packet of the selection,
or whole lines of it plus framing, :func:`ctxbench.compiler.commit.external_context_problem`),
refuses a context over the budget, refuses ``details`` or ``empty_reason`` holding
restricted text (:mod:`ctxbench.compiler.restricted`), withholds a failure message that
holds it, and writes the commit itself. Every refusal, an exception (any
``BaseException`` but ``KeyboardInterrupt``, ``SystemExit`` included), a result of the
wrong type or a run past :data:`STRATEGY_TIMEOUT_S` raises :class:`StrategyFailure`,
naming the kind of failure and the reason. Third-party strategies run in a worker
process (:mod:`ctxbench.compiler.isolation`); an object passed here runs in-process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ctxbench.compiler.commit import EXTERNAL_TEMPLATE, external_context_problem
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.packet import CompiledContext, finish_packet
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import RENDER_TEMPLATE, Excerpt, merge_ranges, render_excerpt
from ctxbench.compiler.restricted import RestrictedText
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import RuntimeFailure

__all__ = [
    "CANDIDATE_LIMIT",
    "FAILURE_KINDS",
    "STRATEGY_TIMEOUT_S",
    "Candidate",
    "Document",
    "Selected",
    "Strategy",
    "StrategyFailure",
    "StrategyRequest",
    "StrategyResult",
    "compile_with_strategy",
]

CANDIDATE_LIMIT = 200
#: The most characters a result's ``details`` may hold in all (names and values).
MAX_DETAILS_BYTES = 16_384
#: Seconds a third-party strategy may take for one packet before it is a failure.
STRATEGY_TIMEOUT_S = 120.0
FAILURE_KINDS = ("exception", "timeout", "invalid_output", "forbidden_artifact",
                 "forbidden_text", "over_budget")
Range = tuple[int, int]


class StrategyFailure(RuntimeFailure):
    """A strategy's packet was refused or never came; ``kind`` is one of FAILURE_KINDS."""

    def __init__(self, strategy: str, kind: str, reason: str) -> None:
        reason = " ".join(reason.split())[:300]
        super().__init__(f"strategy {strategy}: {kind}: {reason}")
        self.strategy = strategy
        self.kind = kind
        self.reason = reason

    @property
    def error_type(self) -> str:
        """The trial's ``error_type``: ``strategy_failed:KIND: reason``."""
        return f"strategy_failed:{self.kind}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Document:
    """A whole permitted artifact."""

    artifact_id: str
    path: str
    kind: str
    classification: str
    source_blake3: str
    text: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A permitted chunk (line-aligned byte range ``[start, end)``) and its BM25 score."""

    artifact_id: str
    path: str
    kind: str
    classification: str
    source_blake3: str
    start: int
    end: int
    score: float
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"artifact_id": self.artifact_id, "path": self.path, "kind": self.kind,
                "classification": self.classification, "source_blake3": self.source_blake3,
                "start": self.start, "end": self.end, "score": self.score, "text": self.text}


@dataclass(frozen=True, slots=True)
class Selected:
    """Byte ranges taken from one artifact (``None``: the whole artifact)."""

    artifact_id: str
    ranges: tuple[Range, ...] | None = None


@dataclass(frozen=True, slots=True)
class StrategyResult:
    """The context to send and what it holds; ``details`` are recorded in the commit."""

    context: str
    selected: tuple[Selected, ...]
    empty_reason: str | None = None
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class StrategyRequest:
    """Everything a strategy may use for one packet.

    ``documents()`` and ``candidates()`` hold only what ``policy`` permits; ``index`` is
    the compiler's index, for the built-in strategies.
    """

    task_id: str | None
    query: str
    budget: int | None
    tokenizer: Tokenizer
    policy: Policy
    index: ContextIndex
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def count(self, text: str) -> int:
        """Tokens of ``text`` under the declared tokenizer (the count ctxbench enforces)."""
        return self.tokenizer.count(text)

    def _allowed(self) -> frozenset[int]:
        """Positions of the permitted artifacts (fixed by ctxbench before a build)."""
        if "allowed" not in self._memo:
            self._memo["allowed"] = frozenset(self.index.permitted_artifacts(self.policy))
        return self._memo["allowed"]  # type: ignore[no-any-return]

    def documents(self) -> tuple[Document, ...]:
        """Every permitted artifact with text, whole, in artifact-id order."""
        if "documents" not in self._memo:
            out = []
            for position in sorted(self._allowed()):
                a = self.index.artifact_at(position)
                data = self.index.source(position)
                if data:
                    out.append(Document(a.artifact_id, a.path, a.kind, a.classification,
                                        a.blake3, data.decode("utf-8", "replace")))
            self._memo["documents"] = tuple(out)
        return self._memo["documents"]  # type: ignore[no-any-return]

    def candidates(self) -> tuple[Candidate, ...]:
        """Permitted chunks, best BM25 match first (ties in corpus order), at most
        :data:`CANDIDATE_LIMIT`; chunks with no query term are included after the rest."""
        if "candidates" not in self._memo:
            index = self.index
            view = index.view(self.policy)
            scores = view.scores(index.query_ids(self.query))
            order = np.lexsort((view.chunk_ids, -scores))[:CANDIDATE_LIMIT]
            out = []
            allowed = self._allowed()
            for row in order:
                chunk = index.chunks[int(view.chunk_ids[row])]
                position = int(index.chunk_artifact[view.chunk_ids[row]])
                if position not in allowed:
                    continue  # never: the view holds permitted chunks only
                a = index.artifact_at(position)
                text = index.source(position)[chunk.start:chunk.end].decode("utf-8", "replace")
                out.append(Candidate(a.artifact_id, a.path, a.kind, a.classification, a.blake3,
                                     chunk.start, chunk.end, round(float(scores[row]), 6),
                                     text))
            self._memo["candidates"] = tuple(out)
        return self._memo["candidates"]  # type: ignore[no-any-return]

    def render(self, selected: Sequence[Selected]) -> str:
        """The canonical packet (the current ``RENDER_TEMPLATE``) of a selection.

        A strategy that returns it verbatim gets a commit anyone can re-render.
        """
        excerpts = _excerpts(self.index, self._allowed(), "render", tuple(selected),
                             self.budget)
        return "".join(render_excerpt(e, self.index.source(_pos(self.index, e.artifact_id)))
                       for e in excerpts)

    def to_json(self) -> dict[str, Any]:
        """The request of the JSON protocol (``external``): query, budget, tokenizer id,
        policy, candidates."""
        return {"query": self.query, "budget": self.budget, "tokenizer": self.tokenizer.id,
                "policy": self.policy.to_json(),
                "candidates": [c.to_json() for c in self.candidates()]}


@runtime_checkable
class Strategy(Protocol):
    """A context strategy: ``build`` is called once per (task, budget)."""

    name: str
    budgeted: bool
    summary: str

    def build(self, request: StrategyRequest) -> StrategyResult: ...


def _pos(index: ContextIndex, artifact_id: str) -> int:
    position = index.position(artifact_id)
    assert position is not None  # excerpts hold only artifacts found in the index
    return position


def _excerpts(index: ContextIndex, allowed: frozenset[int], name: str,
              selected: tuple[Selected, ...], budget: int | None) -> tuple[Excerpt, ...]:
    """Checked, merged excerpts (first-mention order), each with its template-v5 label for
    ``budget``; StrategyFailure on anything else. ``allowed``: the permitted positions,
    fixed before the strategy ran."""
    merged: dict[str, tuple[int, list[Range]]] = {}
    for n, item in enumerate(selected):
        if not isinstance(item, Selected) or not isinstance(item.artifact_id, str):
            raise StrategyFailure(name, "invalid_output",
                                  f"selected[{n}]: expected a Selected, got "
                                  f"{type(item).__name__}")
        position = index.position(item.artifact_id)
        if position is None:
            raise StrategyFailure(name, "forbidden_artifact", f"selected[{n}]: unknown "
                                  f"artifact {item.artifact_id[:80]!r}")
        artifact = index.artifact_at(position)
        if position not in allowed:
            # Never read: a denied or disallowed artifact's bytes are not even compared.
            raise StrategyFailure(name, "forbidden_artifact", f"selected[{n}]: artifact "
                                  f"{artifact.artifact_id!r} is denied or disallowed by the "
                                  "task's policy")
        size = len(index.source(position))
        if item.ranges is not None and not isinstance(item.ranges, tuple | list):
            raise StrategyFailure(name, "invalid_output", f"selected[{n}].ranges: expected a "
                                  f"tuple of (start, end), got {type(item.ranges).__name__}")
        ranges = [(0, size)] if item.ranges is None else list(item.ranges)
        for pair in ranges:
            ok = (isinstance(pair, tuple | list) and len(pair) == 2
                  and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
                  and 0 <= pair[0] < pair[1] <= size)
            if not ok:
                raise StrategyFailure(name, "invalid_output", f"selected[{n}]: "
                                      f"{str(pair)[:60]} is not a byte range within "
                                      f"{artifact.artifact_id} ({size} bytes)")
        merged.setdefault(artifact.artifact_id, (position, []))[1].extend(
            (int(a), int(b)) for a, b in ranges)
    out = []
    for artifact_id, (position, ranges) in merged.items():
        a = index.artifact_at(position)
        out.append(Excerpt(artifact_id, a.path, a.classification, a.blake3,
                           merge_ranges(ranges), index.label(position, budget)))
    return tuple(out)


def _call(strategy: Strategy, request: StrategyRequest, timeout_s: float | None) -> Any:
    """``strategy.build(request)``; in a worker thread under a deadline when timed."""
    name = strategy.name
    if timeout_s is None:
        try:
            return strategy.build(request)
        except (StrategyFailure, KeyboardInterrupt):
            raise  # Ctrl-C stops the run (a resumable interruption), as anywhere else
        except BaseException as exc:  # SystemExit(0) too: this packet's failure
            raise StrategyFailure(name, "exception", f"{type(exc).__name__}: {exc}") from exc
    box: list[Any] = []

    def work() -> None:
        try:
            box.append(("ok", strategy.build(request)))
        except BaseException as exc:  # handed to the caller's thread below
            box.append(("error", exc))

    # A daemon thread: a strategy that never returns cannot be killed in-process, but it
    # no longer holds up the run (the command-line protocol kills its process instead).
    worker = threading.Thread(target=work, name=f"ctxbench-strategy-{name}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not box:
        raise StrategyFailure(name, "timeout", f"no packet within {timeout_s:g} s")
    kind, value = box[0]
    if kind == "ok":
        return value
    if isinstance(value, StrategyFailure | KeyboardInterrupt):
        raise value
    raise StrategyFailure(name, "exception", f"{type(value).__name__}: {value}") from value


def compile_with_strategy(
    index: ContextIndex,
    *,
    strategy: Strategy,
    query: str,
    budget: int | None,
    policy: Policy,
    task_id: str | None = None,
    timeout_s: float | None = STRATEGY_TIMEOUT_S,
    source: dict[str, Any] | None = None,
) -> CompiledContext:
    """Ask ``strategy`` for a packet, then check, recount and commit it (see the module).

    ``timeout_s`` None runs the strategy inline (the built-ins); ``source`` (where the
    strategy came from, :func:`ctxbench.compiler.discovery.strategy_source`) is recorded
    in the commit as ``strategy_source``.
    """
    name = strategy.name
    # Fixed before any strategy code runs, from ctxbench's own index: what may be sent.
    allowed = frozenset(index.permitted_artifacts(policy))
    # ctxbench's own strategies write only ctxbench's text: their free text is not searched
    # (the search reads every denied artifact).
    trusted = source is not None and source.get("origin") == "built-in"
    restricted = RestrictedText(index, () if trusted else allowed, trusted=trusted)
    try:
        return _checked(index, strategy, name, allowed, restricted, query=query,
                        budget=budget, policy=policy, task_id=task_id, timeout_s=timeout_s,
                        source=source)
    except StrategyFailure as exc:
        if restricted.holds(exc.reason):
            raise StrategyFailure(name, exc.kind, "the message is withheld: it holds text "
                                  "of an artifact the policy denies") from None
        raise


def _checked(index: ContextIndex, strategy: Strategy, name: str, allowed: frozenset[int],
             restricted: RestrictedText, *, query: str, budget: int | None, policy: Policy,
             task_id: str | None, timeout_s: float | None, source: dict[str, Any] | None
             ) -> CompiledContext:
    request = StrategyRequest(task_id, query, budget, index.tokenizer, policy, index)
    request._memo["allowed"] = allowed
    result = _call(strategy, request, timeout_s)
    if not isinstance(result, StrategyResult):
        raise StrategyFailure(name, "invalid_output", f"expected a StrategyResult, got "
                              f"{type(result).__name__}")
    if not isinstance(result.context, str):
        raise StrategyFailure(name, "invalid_output", f"context: expected a string, got "
                              f"{type(result.context).__name__}")
    if not isinstance(result.selected, tuple | list):
        raise StrategyFailure(name, "invalid_output", f"selected: expected a tuple of "
                              f"Selected, got {type(result.selected).__name__}")
    excerpts = _excerpts(index, allowed, name, tuple(result.selected), budget)
    context = result.context
    canonical = "".join(render_excerpt(e, index.source(_pos(index, e.artifact_id)))
                        for e in excerpts)
    template = RENDER_TEMPLATE
    if context != canonical:
        template = EXTERNAL_TEMPLATE
        problem = external_context_problem(
            context, [(e, index.source(_pos(index, e.artifact_id))) for e in excerpts])
        if problem is not None:
            raise StrategyFailure(name, "forbidden_text", f"the context is not made of the "
                                  f"selected bytes: {problem}")
    count = index.count(context)
    if budget is not None and count > budget:
        raise StrategyFailure(name, "over_budget", f"{count} tokens ({index.tokenizer.id}) "
                              f"exceed the budget {budget}")
    empty = result.empty_reason if isinstance(result.empty_reason, str) else None
    details = _details(name, result.details)
    if restricted.holds(name, empty or "", json.dumps(source or {}, ensure_ascii=False),
                        *(f"{k}\n{v}" for k, v in details.items())):
        raise StrategyFailure(name, "forbidden_text", "its name, empty_reason or details hold "
                              "text of an artifact the policy denies")
    packet = finish_packet(
        index, query=query, budget=budget, policy=policy, strategy=name, text=context,
        token_count=count, excerpts=excerpts,
        empty_reason=(empty or "the strategy selected nothing") if not context else None,
        template=template)
    if source is None and not details:
        return packet
    extra = dict(source or {})
    if details:
        extra["details"] = details
    return replace(packet, commit={**packet.commit, "strategy_source": extra})


def _details(name: str, pairs: Any) -> dict[str, str]:
    """A result's ``details`` as strings, at most :data:`MAX_DETAILS_BYTES` in all."""
    try:
        details = {str(k): str(v) for k, v in pairs}
    except (TypeError, ValueError) as exc:
        raise StrategyFailure(name, "invalid_output", "details: expected (name, value) "
                              "pairs") from exc
    size = sum(len(k) + len(v) for k, v in details.items())
    if size > MAX_DETAILS_BYTES:
        raise StrategyFailure(name, "invalid_output", f"details: expected at most "
                              f"{MAX_DETAILS_BYTES} characters in all, got {size}")
    return details
