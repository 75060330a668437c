"""One-call entry points used by the command line and the demo."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from ctxbench.compiler.commit import verify_commit
from ctxbench.compiler.corpus import Corpus
from ctxbench.compiler.external import compile_external, load_external_strategy
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import CompiledContext, compile_context
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import InputError, IntegrityError, load_json_document, read_utf8

__all__ = ["benchmark_index", "compile_benchmark_task", "compile_directory", "verify_commit_file"]


@cache
def _index(benchmark_path: str, corpus_dir: str, tokenizer: str) -> tuple[Any, ContextIndex]:
    from ctxbench.protocols.eceb import load_benchmark

    benchmark = load_benchmark(benchmark_path)
    corpus = Corpus.from_benchmark(benchmark, corpus_dir)
    return benchmark, ContextIndex.build(corpus, get_tokenizer(tokenizer))


def benchmark_index(
    benchmark_path: str | os.PathLike[str], corpus_dir: str | os.PathLike[str],
    tokenizer: str = "cl100k_base",
) -> tuple[Any, ContextIndex]:
    """The loaded ECEB benchmark and its index (built once per process per corpus)."""
    return _index(str(Path(benchmark_path).resolve()), str(Path(corpus_dir).resolve()), tokenizer)


def compile_benchmark_task(
    benchmark_path: str | os.PathLike[str],
    corpus_dir: str | os.PathLike[str],
    task_id: str,
    *,
    budget: int | None,
    strategy: str = "compiled",
    tokenizer: str = "cl100k_base",
    external: str | None = None,
) -> CompiledContext:
    """Compile the packet for one task of an ECEB benchmark, under the task's own policy.

    ``external`` (``module:function`` or a command line) asks that system instead of a
    built-in strategy; its answer is recounted, rehashed and policy-checked.
    """
    benchmark, index = benchmark_index(benchmark_path, corpus_dir, tokenizer)
    task = benchmark.task(task_id)
    if task is None:
        known = ", ".join(t.task_id for t in benchmark.tasks)
        raise InputError(f"task: expected one of {known}, got {task_id!r}")
    policy = Policy.from_task(task)
    if external is not None:
        return compile_external(index, query=task.query, budget=budget, policy=policy,
                                system=load_external_strategy(external))
    return compile_context(index, query=task.query, budget=budget, policy=policy,
                           strategy=strategy)


def compile_directory(
    corpus_dir: str | os.PathLike[str],
    *,
    query: str,
    budget: int | None,
    policy: Policy,
    strategy: str = "compiled",
    tokenizer: str = "cl100k_base",
) -> CompiledContext:
    """Compile a packet from a plain directory (every file classified ``internal``)."""
    index = ContextIndex.build(Corpus.from_directory(corpus_dir), get_tokenizer(tokenizer))
    return compile_context(index, query=query, budget=budget, policy=policy, strategy=strategy)


def verify_commit_file(
    commit_path: str | os.PathLike[str],
    corpus_dir: str | os.PathLike[str],
    *,
    tokenizer: str | None = None,
    context_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Load a commit JSON file and verify it against ``corpus_dir``; returns the commit."""
    commit = load_json_document(commit_path, display=str(commit_path))
    if not isinstance(commit, dict):
        raise InputError(f"{commit_path}: expected a context commit JSON object")
    context = None
    if context_path is not None:
        # Exact text: newline translation would change the bytes the commit digests.
        context = read_utf8(context_path)
    try:
        verify_commit(
            commit, corpus_dir, tokenizer=get_tokenizer(tokenizer) if tokenizer else None,
            context_text=context,
        )
    except IntegrityError as exc:
        # Name the file the user gave; the commit checks only know "the context commit".
        raise IntegrityError(f"{commit_path}: {exc}") from exc
    return commit
