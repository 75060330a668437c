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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import InputError, blake3_hex
from ctxbench.runner.prompt import build_messages
from ctxbench.runner.spec import ConditionSpec
from ctxbench.runner.workload import Workload, WorkTask

__all__ = ["BuiltContext", "ContextBuilder"]

# Chat templates add role markers the budget tokenizer does not see.
_TEMPLATE_SLACK = 16


@dataclass(frozen=True, slots=True)
class BuiltContext:
    """The exact context text plus what it was built from."""

    text: str
    token_count: int
    selected: tuple[tuple[str, str], ...]  # (artifact id, source BLAKE3)
    commit_id: str | None
    commit: dict[str, Any] | None
    rendered_blake3: str
    compile_ms: float


class ContextBuilder:
    """One per run: holds the tokenizer and the (lazily built) retrieval indexes."""

    def __init__(self, workload: Workload, tokenizer_name: str) -> None:
        from ctxbench.compiler import get_tokenizer

        self.workload = workload
        self.tokenizer = get_tokenizer(tokenizer_name)
        self._index: Any = None
        self._qa_dir: tempfile.TemporaryDirectory[str] | None = None
        self._cache: dict[tuple[str, str, int | None], BuiltContext] = {}
        self._overhead: dict[str, int] = {}

    def overhead(self, task: WorkTask) -> int:
        """Tokens of the prompt around the context (instructions, question, markers)."""
        cached = self._overhead.get(task.task_id)
        if cached is None:
            cached = sum(self.tokenizer.count(m.content)
                         for m in build_messages("", task.query)) + _TEMPLATE_SLACK
            self._overhead[task.task_id] = cached
        return cached

    def check_budgets(self, cells: Iterable[tuple[WorkTask, str, int | None]]) -> None:
        """Refuse, before any request, a budget no larger than the prompt's own overhead."""
        for task, condition, budget in cells:
            if budget is not None and budget - self.overhead(task) < 1:
                raise InputError(f"condition {condition}: the budget is smaller than the "
                                 f"prompt's own overhead ({self.overhead(task)} tokens for "
                                 f"task {task.task_id})")

    def _eceb_index(self) -> Any:
        from ctxbench.compiler import ContextIndex, Corpus

        if self._index is None:
            assert self.workload.corpus_dir is not None
            corpus = Corpus.from_benchmark(self.workload.benchmark, self.workload.corpus_dir)
            self._index = ContextIndex.build(corpus, self.tokenizer)
        return self._index

    def _qa_index(self, task: WorkTask) -> Any:
        from ctxbench.compiler import ContextIndex, Corpus

        if self._qa_dir is None:
            self._qa_dir = tempfile.TemporaryDirectory(prefix="ctxbench-qa-")
        folder = Path(self._qa_dir.name) / blake3_hex(task.task_id.encode("utf-8"))[:16]
        folder.mkdir(exist_ok=True)
        (folder / "context.txt").write_text(task.context or "", encoding="utf-8")
        return ContextIndex.build(Corpus.from_directory(folder), self.tokenizer)

    def build(self, task: WorkTask, condition: ConditionSpec, budget: int | None
              ) -> BuiltContext:
        key = (task.task_id, condition.name, budget)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._build(task, condition, budget)
            self._cache[key] = cached
        return cached

    def _build(self, task: WorkTask, condition: ConditionSpec, budget: int | None
               ) -> BuiltContext:
        from ctxbench.compiler import (
            Policy,
            compile_context,
            compile_external,
            load_external_strategy,
        )

        started = time.perf_counter()
        effective = None if budget is None else budget - self.overhead(task)
        if effective is not None and effective < 1:
            self.check_budgets([(task, f"{condition.name}@{budget}", budget)])
        if self.workload.format == "qa" and condition.strategy == "full_permitted_context":
            text = task.context or ""
            return BuiltContext(text=text, token_count=self.tokenizer.count(text), selected=(),
                                commit_id=None, commit=None,
                                rendered_blake3=blake3_hex(text.encode("utf-8")),
                                compile_ms=(time.perf_counter() - started) * 1000)
        if self.workload.format == "eceb":
            bench_task = self.workload.benchmark.task(task.task_id)
            policy = Policy(bench_task.allowed_classifications, bench_task.denied_artifacts)
            index = self._eceb_index()
        else:
            policy = Policy(("public", "internal", "confidential", "restricted"), ())
            index = self._qa_index(task)
        if condition.strategy == "external":
            assert condition.command is not None
            compiled = compile_external(
                index, query=task.query, budget=effective, policy=policy,
                system=load_external_strategy(condition.command), name=condition.name)
        else:
            compiled = compile_context(index, query=task.query, budget=effective,
                                       policy=policy, strategy=condition.strategy)
        elapsed = (time.perf_counter() - started) * 1000
        baseline = condition.strategy == "full_permitted_context"
        return BuiltContext(
            text=compiled.text, token_count=compiled.token_count,
            selected=tuple(_selected(compiled.selected)),
            commit_id=None if baseline else compiled.commit_id,
            commit=None if baseline else compiled.commit,
            rendered_blake3=compiled.rendered_blake3, compile_ms=elapsed)

    def close(self) -> None:
        if self._qa_dir is not None:
            self._qa_dir.cleanup()


def _selected(items: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in items:
        artifact = getattr(item, "artifact_id", None)
        digest = getattr(item, "blake3", None) or getattr(item, "source_blake3", None)
        if isinstance(item, dict):
            artifact = item.get("artifact_id")
            digest = item.get("blake3") or item.get("source_blake3")
        if isinstance(artifact, str) and artifact not in seen:
            seen.add(artifact)
            out.append((artifact, str(digest)))
    return out
