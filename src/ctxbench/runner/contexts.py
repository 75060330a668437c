"""Build the context each condition sends: the compiler's strategies or an external one.

Contexts are deterministic per (task, condition), so each is built once and shared by
its replicates; the time spent building it is recorded as ``compile_ms``, separately from
request latency. A budget is the declared prompt budget: the compiler gets the budget
minus the prompt's fixed overhead (instructions and question) counted with the same
tokenizer, so the whole prompt, not only the context, aims to fit.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.core import InputError, blake3_hex, sha256_hex
from ctxbench.runner.prompt import TOOL_FORMAT_PROMPT, build_messages, build_tool_messages
from ctxbench.runner.spec import ConditionSpec
from ctxbench.runner.workload import Workload, WorkTask

if TYPE_CHECKING:
    from ctxbench.compiler.render import Excerpt

__all__ = ["BuiltContext", "ContextBuilder", "budget_lines_text", "prompt_overhead"]

# Chat templates add role markers the budget tokenizer does not see.
_TEMPLATE_SLACK = 16


def prompt_overhead(query: str, count: Callable[[str], int]) -> int:
    """Tokens a run's document prompt spends around its packet (instructions, question,
    role-marker slack), by ``count``: a prompt budget B leaves the packet B minus this."""
    return sum(count(m.content) for m in build_messages("", query)) + _TEMPLATE_SLACK


@dataclass(frozen=True, slots=True)
class BuiltContext:
    """The exact context text plus what it was built from."""

    text: str
    sha256: str  # of the text's UTF-8 bytes: every trial's context_sha256
    token_count: int
    selected: tuple[tuple[str, str], ...]  # (artifact id, source BLAKE3)
    commit_id: str | None
    rendered_blake3: str
    compile_ms: float
    # The tool schemas sent (a tool-schema workload); ``text`` is their canonical lines.
    tools: tuple[Any, ...] = ()
    # The trial's error_type when the strategy gave no usable packet (then nothing is
    # sent to the model): ``strategy_failed:KIND: reason`` (docs/strategies.md).
    failure: str | None = None


def budget_lines_text(condition: str, budget: int, overheads: list[int]) -> str:
    """``budget compiled@128: prompt 128 tokens = packet 98-101 + prompt overhead 27-30``."""
    def span(values: list[int]) -> str:
        lo, hi = min(values), max(values)
        return str(lo) if lo == hi else f"{lo}-{hi}"

    return (f"budget {condition}: prompt {budget} tokens = packet "
            f"{span([budget - o for o in overheads])} + prompt overhead {span(overheads)} "
            f"({len(overheads)} task(s))")


class ContextBuilder:
    """One per run: holds the tokenizer and the (lazily built) retrieval indexes."""

    def __init__(self, workload: Workload, tokenizer_name: str) -> None:
        from ctxbench.compiler import get_tokenizer
        from ctxbench.runner.workload_formats import workload_format

        self.workload = workload
        # What the tasks give the strategies: a corpus, each task's text or its tools.
        self.format = workload_format(workload.format)
        self.tokenizer = get_tokenizer(tokenizer_name)
        self._index: Any = None
        self._qa_dir: tempfile.TemporaryDirectory[str] | None = None
        # The plan runs a task's cells back to back: its index serves them all.
        self._qa_last: tuple[str, Any] | None = None
        self._cache: dict[tuple[str, str, int | None], BuiltContext] = {}
        self._overhead: dict[str, int] = {}

    def overhead(self, task: WorkTask) -> int:
        """Tokens of the prompt around the context (instructions, question, markers)."""
        cached = self._overhead.get(task.task_id)
        if cached is None:
            if self.format.context == "tool_schemas":
                messages = build_tool_messages(task.source_task.messages)
                cached = sum(self.tokenizer.count(m.content) for m in messages) + \
                    _TEMPLATE_SLACK
                # Providers without native tool calls add the call-format instruction.
                cached += self.tokenizer.count(TOOL_FORMAT_PROMPT)
            else:
                cached = prompt_overhead(task.query, self.tokenizer.count)
            self._overhead[task.task_id] = cached
        return cached

    def check_budgets(self, cells: Iterable[tuple[WorkTask, str, int | None]]) -> None:
        """Refuse, before any request, a budget no larger than the prompt's own overhead."""
        for task, condition, budget in cells:
            if budget is not None and budget - self.overhead(task) < 1:
                raise InputError(f"condition {condition}: the budget is smaller than the "
                                 f"prompt's own overhead ({self.overhead(task)} tokens for "
                                 f"task {task.task_id})")

    def budget_lines(self, cells: Iterable[tuple[WorkTask, str, int | None]]) -> list[str]:
        """One line per budgeted condition: the prompt budget it declares, side by side
        with the packet's room and the prompt's overhead (ranges over its tasks)."""
        seen: dict[str, tuple[int, dict[str, int]]] = {}
        for task, condition, budget in cells:
            if budget is not None:
                seen.setdefault(condition, (budget, {}))[1][task.task_id] = \
                    self.overhead(task)
        return [budget_lines_text(condition, budget, list(overheads.values()))
                for condition, (budget, overheads) in seen.items()]

    def _eceb_index(self) -> Any:
        from ctxbench.compiler import ContextIndex, Corpus

        if self._index is None:
            assert self.workload.corpus_dir is not None
            corpus = Corpus.from_benchmark(self.workload.benchmark, self.workload.corpus_dir)
            self._index = ContextIndex.build(corpus, self.tokenizer)
        return self._index

    def _qa_index(self, task: WorkTask) -> Any:
        from ctxbench.compiler import ContextIndex, Corpus

        if self._qa_last is not None and self._qa_last[0] == task.task_id:
            return self._qa_last[1]
        if self._qa_dir is None:
            self._qa_dir = tempfile.TemporaryDirectory(prefix="ctxbench-qa-")
        folder = Path(self._qa_dir.name) / blake3_hex(task.task_id.encode("utf-8"))[:16]
        folder.mkdir(exist_ok=True)
        (folder / "context.txt").write_text(task.context or "", encoding="utf-8")
        index = ContextIndex.build(Corpus.from_directory(folder), self.tokenizer)
        self._qa_last = (task.task_id, index)
        return index

    def build(self, task: WorkTask, condition: ConditionSpec, budget: int | None
              ) -> BuiltContext:
        """The context of (task, condition, budget), compiled once and then cached.

        It runs on the event loop: a worker-thread handoff measured ~0.8 ms more runner
        CPU per trial (benchmarks/bench_runner.py) than the brief stalls it would avoid,
        and compile time is recorded apart from latency (``compile_ms``) either way.
        """
        key = (task.task_id, condition.name, budget)
        cached = self._cache.get(key)
        if cached is None:
            from ctxbench.compiler.plugins import StrategyFailure

            started = time.perf_counter()
            try:
                cached = self._build(task, condition, budget)
            except StrategyFailure as exc:
                cached = _failed(exc.error_type, (time.perf_counter() - started) * 1000)
            self._cache[key] = cached
        return cached

    def _build(self, task: WorkTask, condition: ConditionSpec, budget: int | None
               ) -> BuiltContext:
        from ctxbench.compiler import Policy, compile_context

        started = time.perf_counter()
        effective = None if budget is None else budget - self.overhead(task)
        if effective is not None and effective < 1:
            self.check_budgets([(task, f"{condition.name}@{budget}", budget)])
        if self.format.context == "tool_schemas":
            return self._tools(task, condition, effective, started)
        # A QA row's context is a one-file corpus; its baseline is that file's canonical
        # packet, like every strategy's, so a strategy that keeps everything sends the
        # same bytes as the baseline (the raw text cost 4 tokens less than any packet).
        if self.format.context == "corpus":
            bench_task = self.workload.benchmark.task(task.task_id)
            policy = Policy(bench_task.allowed_classifications, bench_task.denied_artifacts)
            index = self._eceb_index()
        else:
            policy = Policy(("public", "internal", "confidential", "restricted"), ())
            index = self._qa_index(task)
        if condition.strategy == "external":
            from ctxbench.compiler.discovery import external_strategy
            from ctxbench.compiler.plugins import compile_with_strategy

            assert condition.command is not None
            compiled = compile_with_strategy(
                index, strategy=external_strategy(condition.command, condition.name),
                query=task.query, budget=effective, policy=policy, task_id=task.task_id)
        else:
            compiled = compile_context(index, query=task.query, budget=effective,
                                       policy=policy, strategy=condition.strategy)
        elapsed = (time.perf_counter() - started) * 1000
        baseline = condition.strategy == "full_permitted_context"
        return BuiltContext(
            text=compiled.text, sha256=sha256_hex(compiled.text.encode("utf-8")),
            token_count=compiled.token_count,
            selected=_selected(compiled.selected),
            commit_id=None if baseline else compiled.commit_id,
            rendered_blake3=compiled.rendered_blake3, compile_ms=elapsed)

    def _tools(self, task: WorkTask, condition: ConditionSpec, budget: int | None,
               started: float) -> BuiltContext:
        """The schemas the condition sends; selected = (registry artifact id, BLAKE3)."""
        from ctxbench.workloads.bfcl_registry import schema_artifact_id
        from ctxbench.workloads.tools import TOOL_STRATEGIES, select_tools

        tool_task = task.source_task
        if condition.strategy in TOOL_STRATEGIES:
            selection = select_tools(tool_task.schemas, task.query, budget,
                                     self.tokenizer, condition.strategy)
        else:  # a document strategy over the task's schemas as a corpus
            selection = self._schema_corpus(task).select(condition.strategy, budget)
        text = selection.text
        return BuiltContext(text=text, sha256=sha256_hex(text.encode("utf-8")),
                            token_count=selection.token_count,
                            selected=tuple((schema_artifact_id(tool_task, s.name), s.digest)
                                           for s in selection.schemas),
                            commit_id=None, rendered_blake3=blake3_hex(text.encode("utf-8")),
                            compile_ms=(time.perf_counter() - started) * 1000,
                            tools=selection.schemas)

    def _schema_corpus(self, task: WorkTask) -> Any:
        from ctxbench.workloads.tool_packets import SchemaCorpus

        if self._qa_last is not None and self._qa_last[0] == task.task_id:
            return self._qa_last[1]
        if self._qa_dir is None:
            self._qa_dir = tempfile.TemporaryDirectory(prefix="ctxbench-qa-")
        folder = Path(self._qa_dir.name) / blake3_hex(task.task_id.encode("utf-8"))[:16]
        corpus = SchemaCorpus(task.source_task, folder, self.tokenizer)
        self._qa_last = (task.task_id, corpus)
        return corpus

    def close(self) -> None:
        if self._qa_dir is not None:
            self._qa_dir.cleanup()


def _failed(error_type: str, compile_ms: float) -> BuiltContext:
    """No packet: an empty context that is never sent (the trial records the failure)."""
    return BuiltContext(text="", sha256=sha256_hex(b""), token_count=0, selected=(),
                        commit_id=None, rendered_blake3=blake3_hex(b""),
                        compile_ms=compile_ms, failure=error_type)


def _selected(excerpts: Iterable[Excerpt]) -> tuple[tuple[str, str], ...]:
    """(artifact id, source BLAKE3) of each selected artifact, first mention first."""
    first: dict[str, str] = {}
    for excerpt in excerpts:
        first.setdefault(excerpt.artifact_id, excerpt.source_blake3)
    return tuple(first.items())
