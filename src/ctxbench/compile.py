"""Compile context packets with a strategy or the reference compiler, verify their
commits, and evaluate strategies' evidence, as a library.

    import ctxbench.compile

    packet = ctxbench.compile.compile_packet("docs/", query="how do I rotate the key?",
                                             budget=800)        # every file ``internal``
    packet.text, packet.token_count, packet.commit_id
    packet = ctxbench.compile.compile_task("benchmark.json", "corpus/", "late-fee-rule",
                                           budget=512, strategy="compiled")
    ctxbench.compile.verify_commit("commit.json", "corpus/")   # raises IntegrityError
    report = ctxbench.compile.evaluate("benchmark.json", "corpus/")
    markdown = ctxbench.compile.render_markdown(report)

A strategy is a built-in name (``compiled``, the reference compiler; ``naive_top_k``;
``full_permitted_context``), one shipped in ``ctxbench.strategies`` entry points
(``truncate-head``, ``chunk-bm25``, ...) or an installed third-party one. This module
holds no logic of its own; it calls :mod:`ctxbench.compiler`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.compiler.api import VerifiedCommit
    from ctxbench.compiler.policy import Policy
    from ctxbench.compiler.strategies import CompiledContext
    from ctxbench.protocols.compile_evaluation.model import EvaluationReport
    from ctxbench.report_reader import ReportSource

__all__ = [
    "CompiledContext",
    "EvaluationReport",
    "Policy",
    "VerifiedCommit",
    "compile_packet",
    "compile_task",
    "evaluate",
    "read_report",
    "render_markdown",
    "verify_commit",
    "write_report",
]

_WHERE = {
    "CompiledContext": "ctxbench.compiler.strategies",
    "EvaluationReport": "ctxbench.protocols.compile_evaluation.model",
    "Policy": "ctxbench.compiler.policy",
    "VerifiedCommit": "ctxbench.compiler.api",
}
__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)

PathLike = str | os.PathLike[str]
_EVALUATED = ("compiled", "naive_top_k", "full_permitted_context")


def compile_packet(corpus: PathLike, *, query: str, budget: int | None,
                   policy: Policy | None = None, strategy: str = "compiled",
                   tokenizer: str = "cl100k_base") -> CompiledContext:
    """The packet ``strategy`` builds from a plain directory for ``query`` within
    ``budget`` tokens (``None``: only for ``full_permitted_context``).

    Every file is classified ``internal``; ``policy`` (default: allow ``internal``) may
    deny files by name, and a name that matches no file is an error.
    """
    from ctxbench.compiler.api import compile_directory
    from ctxbench.compiler.policy import Policy

    return compile_directory(corpus, query=query, budget=budget,
                             policy=policy if policy is not None else Policy(("internal",)),
                             strategy=strategy, tokenizer=tokenizer)


def compile_task(benchmark: PathLike, corpus: PathLike, task: str, *, budget: int | None,
                 strategy: str = "compiled", tokenizer: str = "cl100k_base",
                 external: str | None = None) -> CompiledContext:
    """The packet for one task of an ECEB benchmark, under the task's own access policy;
    ``external`` (``module:function`` or a command line) asks that system instead, and
    its answer is recounted, rehashed and policy-checked."""
    from ctxbench.compiler.api import compile_benchmark_task

    return compile_benchmark_task(benchmark, corpus, task, budget=budget, strategy=strategy,
                                  tokenizer=tokenizer, external=external)


def verify_commit(commit: PathLike, corpus: PathLike | None = None, *,
                  tokenizer: str | None = None,
                  context: PathLike | None = None) -> VerifiedCommit:
    """Verify a ctxbench context commit file against ``corpus`` (re-rendered and
    rehashed), or an Entroly commit (its recovery text; ``corpus`` optional); a mismatch
    raises :class:`~ctxbench.core.errors.IntegrityError`."""
    from ctxbench.compiler.api import verify_any_commit_file

    return verify_any_commit_file(commit, corpus, tokenizer=tokenizer, context_path=context)


def evaluate(benchmark: PathLike, corpus: PathLike, *,
             strategies: Sequence[str] = _EVALUATED,
             tokenizer: str = "cl100k_base") -> EvaluationReport:
    """Compile every task at every ladder budget with each strategy and check each packet
    for the task's evidence markers (no model is called)."""
    from ctxbench.compiler.evaluation import evaluate as run

    return run(benchmark, corpus, strategies=tuple(strategies), tokenizer=tokenizer)


def read_report(source: ReportSource, *, display: str | None = None) -> EvaluationReport:
    """A compile evaluation report read back from a path, bytes or a decoded dict."""
    from ctxbench.report_reader import read_report_of

    report: EvaluationReport = read_report_of("compile_evaluation", source, display=display)
    return report


def write_report(path: PathLike, report: EvaluationReport) -> None:
    """Write ``report`` as JSON atomically."""
    from ctxbench.core.atomic import atomic_write_json

    atomic_write_json(path, report.to_json())


def render_markdown(report: EvaluationReport) -> str:
    """The evaluation's summary table as Markdown (read from the report, nothing
    recomputed)."""
    from ctxbench.compiler.evaluation import render_evaluation

    return render_evaluation(report)
