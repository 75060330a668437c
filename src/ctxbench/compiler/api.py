"""One-call entry points used by the command line and the demo."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ctxbench.compiler.commit import verify_commit
from ctxbench.compiler.corpus import Corpus
from ctxbench.compiler.entroly_commit import ENTROLY_COMMIT_SCHEMA, verify_entroly_commit
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import CompiledContext, compile_context
from ctxbench.compiler.tokenizers import get_tokenizer, reference_tokenizer
from ctxbench.core import (
    InputError,
    IntegrityError,
    SettingError,
    load_json_document,
    read_utf8,
)

__all__ = [
    "COMMIT_FORMATS",
    "VerifiedCommit",
    "benchmark_index",
    "compile_batch",
    "compile_benchmark_task",
    "compile_directory",
    "verify_any_commit_file",
    "verify_commit_file",
]


@cache
def _index(benchmark_path: str, corpus_dir: str, tokenizer: str) -> tuple[Any, ContextIndex]:
    from ctxbench.protocols.eceb import load_benchmark

    benchmark = load_benchmark(benchmark_path)
    corpus = Corpus.from_benchmark(benchmark, corpus_dir)
    return benchmark, ContextIndex.load_or_build(corpus, get_tokenizer(tokenizer))


def benchmark_index(
    benchmark_path: str | os.PathLike[str], corpus_dir: str | os.PathLike[str],
    tokenizer: str = "cl100k_base",
) -> tuple[Any, ContextIndex]:
    """The loaded ECEB benchmark and its index (once per process per corpus; from the
    on-disk cache when the corpus is unchanged, see :mod:`ctxbench.compiler.index_cache`)."""
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
        from ctxbench.compiler.external import compile_external, load_external_strategy

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
    """Compile a packet from a plain directory (every file classified ``internal``).

    ``policy`` may name files as a person types them; it is bound to the corpus first
    (:meth:`Policy.resolved_for`), and a name that matches nothing is an error.
    """
    corpus = Corpus.from_directory(corpus_dir)
    policy = policy.resolved_for(corpus)
    index = ContextIndex.load_or_build(corpus, get_tokenizer(tokenizer))
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
            commit, corpus_dir, tokenizer=reference_tokenizer(tokenizer) if tokenizer else None,
            context_text=context,
        )
    except IntegrityError as exc:
        # Name the file the user gave; the commit checks only know "the context commit".
        raise IntegrityError(f"{commit_path}: {exc}") from exc
    return commit


COMMIT_FORMATS = {
    "ctxbench.context-commit.v1": "RFC 8785 JSON, BLAKE3",
    ENTROLY_COMMIT_SCHEMA: "Entroly's sorted-key JSON, SHA-256",
}


@dataclass(frozen=True, slots=True)
class VerifiedCommit:
    """A commit file that verified: its format, id and what was checked."""

    format: str
    commit_id: str
    detail: str

    def line(self) -> str:
        return (f"verified: {self.commit_id} ({self.detail}); format {self.format} "
                f"({COMMIT_FORMATS[self.format]})")


def verify_any_commit_file(
    commit_path: str | os.PathLike[str],
    corpus_dir: str | os.PathLike[str] | None,
    *,
    tokenizer: str | None = None,
    context_path: str | os.PathLike[str] | None = None,
) -> VerifiedCommit:
    """Verify a ctxbench or an Entroly context commit file, told apart by ``schema_version``.

    An Entroly commit carries its own recovery text, so ``corpus_dir`` is optional for it
    (given, each source file and selected byte range is checked too); a ctxbench commit is
    re-rendered from ``corpus_dir``.
    """
    doc = load_json_document(commit_path, display=str(commit_path))
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if version == ENTROLY_COMMIT_SCHEMA:
        for setting, given in (("context", context_path), ("tokenizer", tokenizer)):
            if given is not None:
                raise SettingError(setting, f"expected none for an Entroly commit ({commit_path} "
                                            "carries its own recovery text), got one")
        try:
            check = verify_entroly_commit(doc, corpus_dir)
        except IntegrityError as exc:
            raise IntegrityError(f"{commit_path}: {exc}") from exc
        sources = (f", {check.sources_checked} source file(s) checked against the corpus"
                   if corpus_dir is not None else "")
        return VerifiedCommit(
            version, check.commit_id,
            f"{check.selected_chunks} selected, {check.omitted_chunks} omitted chunk(s) "
            f"recovered, {check.engine} engine{sources}")
    if version != "ctxbench.context-commit.v1":
        raise InputError(f"{commit_path}: schema_version: expected one of "
                         f"{', '.join(sorted(COMMIT_FORMATS))}, got {version!r}"[:300])
    if corpus_dir is None:
        raise SettingError("corpus", f"expected the corpus directory of the ctxbench context "
                                     f"commit {commit_path}, got none")
    commit = verify_commit_file(commit_path, corpus_dir, tokenizer=tokenizer,
                                context_path=context_path)
    return VerifiedCommit(
        version, commit["commit_id"],
        f"{len(commit['excerpts'])} excerpt(s), {commit['token_count']} tokens")


def compile_batch(
    benchmark_path: str | os.PathLike[str],
    corpus_dir: str | os.PathLike[str],
    *,
    tasks: tuple[str, ...] = (),
    budgets: tuple[int, ...] = (),
    strategy: str = "compiled",
    tokenizer: str = "cl100k_base",
    output_dir: str | os.PathLike[str],
) -> list[tuple[CompiledContext, str]]:
    """Compile each task (default: all) at each budget (default: its ladder) and write
    ``<task>-<budget>.commit.json`` and ``.txt`` to ``output_dir``; returns the packets."""
    from ctxbench.core import atomic_write_json, atomic_write_text

    benchmark, index = benchmark_index(benchmark_path, corpus_dir, tokenizer)
    known = {t.task_id: t for t in benchmark.tasks}
    for task_id in tasks:
        if task_id not in known:
            raise InputError(f"task: expected one of {', '.join(known)}, got {task_id!r}")
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    done: list[tuple[CompiledContext, str]] = []
    for task_id in tasks or tuple(known):
        task = known[task_id]
        for budget in budgets or task.budget_ladder:
            packet = compile_context(index, query=task.query, budget=budget,
                                     policy=Policy.from_task(task), strategy=strategy)
            stem = out / f"{task_id}-{budget}"
            atomic_write_json(f"{stem}.commit.json", packet.commit)
            atomic_write_text(f"{stem}.txt", packet.text)
            done.append((packet, f"{stem}.commit.json"))
    return done
