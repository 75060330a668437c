"""File-level entry points used by the command line and the runner."""

from __future__ import annotations

import os

from ctxbench.core.jsonl import load_json_document
from ctxbench.core.node import Node
from ctxbench.protocols.eceb.analysis import evaluate
from ctxbench.protocols.eceb.benchmark import load_benchmark
from ctxbench.protocols.eceb.corpus import verify_corpus
from ctxbench.protocols.eceb.model import Report
from ctxbench.protocols.eceb.run import load_run

__all__ = ["benchmark_root", "evaluate_files", "load_report"]


def benchmark_root(benchmark_path: str | os.PathLike[str],
                   corpus_dir: str | os.PathLike[str] | None = None) -> str:
    """The verified corpus root of a benchmark; with ``corpus_dir``, also re-hash the files."""
    benchmark = load_benchmark(benchmark_path)
    if corpus_dir is not None:
        verify_corpus(benchmark, corpus_dir).raise_for_problems()
    return benchmark.root


def evaluate_files(benchmark_path: str | os.PathLike[str], run_path: str | os.PathLike[str],
                   corpus_dir: str | os.PathLike[str]) -> Report:
    """Load, re-hash and evaluate: the report for a benchmark, run and corpus on disk."""
    benchmark = load_benchmark(benchmark_path)
    run = load_run(run_path)
    check = verify_corpus(benchmark, corpus_dir)
    return evaluate(benchmark, run, check)


def load_report(path: str | os.PathLike[str]) -> Report:
    """Read a report.json as a :class:`Report`, refusing any document that is not an ECEB-0.1
    report and naming the JSON pointer of any missing, mistyped or unknown member."""
    return Report.from_json(Node(str(path), "", load_json_document(path)))
