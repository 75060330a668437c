"""Static evidence evaluation: does each strategy's packet hold the answer, at every budget?

For every task of an ECEB benchmark and every budget of its ladder, each named strategy
compiles a packet under the task's policy, and the row records: *answer present* (every
``evidence_markers`` string of the task, a ctxbench extension of ECEB, occurs in the
packet text), required-artifact recall, tokens, the share of tokens that are excerpt
headers and separators, whether the budget was exceeded, the bytes of restricted
(denied or disallowed) artifacts in the packet, and the compile latency.

Strategies: any installed strategy (``compiled``, ``naive_top_k``,
``full_permitted_context`` -- compiled once per task, without a budget, and judged against
each budget --, the shipped baselines ``chunk-bm25``, ``truncate-*``, ``middle-out``,
``entroly``, plugins), the ``langchain-bm25`` peer (:mod:`ctxbench.compiler.peer`, langchain
chunks ranked by ``rank_bm25``), and ``external:SPEC`` for any other system
(``module:function`` or a command line, as ``ctxbench compile --external``). Each system
has one name: the chunk-BM25 peer is the shipped ``chunk-bm25`` strategy, the very packets
``ctxbench compile --strategy chunk-bm25`` sends (the name ``chunk_bm25`` is refused with a
pointer to both, as it named the langchain peer in reports before).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.external import compile_external, load_external_strategy
from ctxbench.compiler.peer import PeerIndex
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import STRATEGIES, CompiledContext, compile_context
from ctxbench.core import InputError
from ctxbench.protocols.compile_evaluation.model import (
    EVALUATION_SCHEMA,
    EvaluationReport,
    EvaluationRow,
    SummaryRow,
)

__all__ = ["EVALUATION_SCHEMA", "LANGCHAIN_PEER", "PEER", "EvaluationReport", "EvaluationRow",
           "evaluate", "render_evaluation", "summarize"]

#: The chunk-BM25 peer: the shipped strategy (ctxbench.compiler.baselines.CHUNK_BM25).
PEER = "chunk-bm25"
#: The langchain chunks + rank_bm25 peer (ctxbench.compiler.peer), evaluation only.
LANGCHAIN_PEER = "langchain-bm25"
# The name the langchain peer had in reports before chunk-bm25 became the one chunk peer.
_RETIRED = "chunk_bm25"


def summarize(rows: Sequence[EvaluationRow], strategies: Sequence[str],
              budgets: Sequence[int]) -> tuple[SummaryRow, ...]:
    """Per strategy and budget: rates, means, counts and latency percentiles."""
    out = []
    for strategy in strategies:
        for budget in budgets:
            group = [r for r in rows if r.strategy == strategy and r.budget == budget]
            if not group:
                continue
            latency = np.asarray([r.latency_ms for r in group])
            tokens = sum(r.tokens for r in group)
            present = sum(r.answer_present for r in group)
            out.append(SummaryRow(
                strategy=strategy, budget=budget, tasks=len(group), answer_present=present,
                answer_present_rate=present / len(group),
                required_recall=sum(r.required_recall for r in group) / len(group),
                mean_tokens=tokens / len(group),
                header_share=sum(r.header_tokens for r in group) / tokens if tokens else 0.0,
                over_budget=sum(r.over_budget for r in group),
                restricted_bytes=sum(r.restricted_bytes for r in group),
                latency_ms_p50=float(np.percentile(latency, 50)),
                latency_ms_p99=float(np.percentile(latency, 99))))
    return tuple(out)


def _check_strategies(strategies: tuple[str, ...]) -> None:
    if not strategies:
        raise InputError("strategy: expected at least one strategy")
    installed: set[str] | None = None
    for name in strategies:
        if name == _RETIRED:
            raise InputError(f"strategy: expected {PEER} (the shipped chunk-BM25 strategy) "
                             f"or {LANGCHAIN_PEER} (langchain chunks + rank_bm25), got "
                             f"{name!r}")
        if name in (*STRATEGIES, LANGCHAIN_PEER) or name.startswith("external:"):
            continue
        if installed is None:  # plugins and the baselines (entroly, truncate-head, ...)
            from ctxbench.compiler.discovery import installed_strategies

            installed = {s.name for s in installed_strategies()}
        if name not in installed:
            raise InputError(f"strategy: expected one of "
                             f"{', '.join((*STRATEGIES, LANGCHAIN_PEER))}, "
                             f"an installed strategy or external:SPEC, got {name!r}")


def _restricted_bytes(packet: CompiledContext, policy: Policy) -> int:
    return sum(b - a for e in packet.selected if not policy.permits(e.artifact_id,
                                                                    e.classification)
               for a, b in e.ranges)


def _header_tokens(index: Any, packet: CompiledContext) -> int:
    bodies = []
    for excerpt in packet.selected:
        position = index.position(excerpt.artifact_id)
        data = index.source(position)
        bodies += [data[a:b].decode("utf-8", "replace") for a, b in excerpt.ranges]
    return max(0, packet.token_count - int(index.count("".join(bodies))))


def evaluate(
    benchmark_path: str | os.PathLike[str],
    corpus_dir: str | os.PathLike[str],
    *,
    strategies: tuple[str, ...] = ("compiled", "naive_top_k", "full_permitted_context"),
    tokenizer: str = "cl100k_base",
) -> EvaluationReport:
    """Compile every task at every ladder budget with each strategy (see the module)."""
    _check_strategies(strategies)
    benchmark, index = benchmark_index(benchmark_path, corpus_dir, tokenizer)
    peers: dict[str, PeerIndex] = {}
    systems = {s: load_external_strategy(s.removeprefix("external:"))
               for s in strategies if s.startswith("external:")}
    rows: list[EvaluationRow] = []
    budgets: set[int] = set()
    for task in benchmark.tasks:
        policy = Policy.from_task(task)
        required = set(task.required_artifacts)
        full: tuple[CompiledContext, float] | None = None
        for budget in task.budget_ladder:
            budgets.add(budget)
            for strategy in strategies:
                started = time.perf_counter()
                if strategy == LANGCHAIN_PEER:
                    peer = peers.get(policy.digest())
                    if peer is None:
                        peer = peers[policy.digest()] = PeerIndex(index, policy)
                        started = time.perf_counter()
                    got = peer.compile(task.query, budget)
                    elapsed = (time.perf_counter() - started) * 1000
                    text, tokens, ids = got.text, got.token_count, got.artifact_ids
                    restricted = 0
                    header = tokens - index.count(text.replace("\n\n", "")) if text else 0
                else:
                    if strategy == "full_permitted_context":
                        if full is None:
                            full = (compile_context(index, query=task.query, budget=None,
                                                    policy=policy, strategy=strategy),
                                    (time.perf_counter() - started) * 1000)
                        packet, elapsed = full
                    elif strategy in systems:
                        packet = compile_external(index, query=task.query, budget=budget,
                                                  policy=policy, system=systems[strategy])
                        elapsed = (time.perf_counter() - started) * 1000
                    else:
                        packet = compile_context(index, query=task.query, budget=budget,
                                                 policy=policy, strategy=strategy)
                        elapsed = (time.perf_counter() - started) * 1000
                    text, tokens, ids = packet.text, packet.token_count, packet.artifact_ids
                    restricted = _restricted_bytes(packet, policy)
                    header = _header_tokens(index, packet) if strategy not in systems else 0
                markers = task.evidence_markers
                rows.append(EvaluationRow(
                    task.task_id, budget, strategy,
                    bool(markers) and all(m in text for m in markers),
                    len(required & set(ids)) / len(required) if required else 1.0,
                    tokens, max(0, header), tokens > budget, restricted, elapsed,
                ))
    ladder = tuple(sorted(budgets))
    return EvaluationReport(EVALUATION_SCHEMA, benchmark.benchmark_id, index.tokenizer.id,
                            strategies, ladder, summarize(rows, strategies, ladder), tuple(rows))


def render_evaluation(report: EvaluationReport) -> str:
    """The report's summary as a Markdown table (read from the model, nothing recomputed)."""
    lines = [
        f"{report.benchmark_id}: local token counts ({report.tokenizer}); answer = every "
        "evidence marker in the packet.",
        "",
        "| strategy | budget | answer present | required recall | mean tokens | header share "
        "| over budget | restricted bytes | p50 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in report.summary:
        lines.append(
            f"| {s.strategy} | {s.budget} | {s.answer_present}/{s.tasks} "
            f"({s.answer_present_rate:.0%}) | {s.required_recall:.2f} | "
            f"{s.mean_tokens:.0f} | {s.header_share:.1%} | {s.over_budget} | "
            f"{s.restricted_bytes} | {s.latency_ms_p50:.1f} | {s.latency_ms_p99:.1f} |"
        )
    return "\n".join(lines) + "\n"
