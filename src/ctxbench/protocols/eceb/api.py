"""File-level entry points used by the command line and the runner."""

from __future__ import annotations

import os
from typing import NamedTuple

from ctxbench.core.jsonl import load_json_document
from ctxbench.core.node import Node
from ctxbench.protocols.eceb.analysis import evaluate
from ctxbench.protocols.eceb.benchmark import load_benchmark
from ctxbench.protocols.eceb.corpus import CorpusCheck, verify_corpus
from ctxbench.protocols.eceb.model import Report
from ctxbench.protocols.eceb.records import Benchmark, Run
from ctxbench.protocols.eceb.run import load_run

__all__ = ["Inputs", "benchmark_root", "evaluate_files", "load_report", "read_files"]


def benchmark_root(benchmark_path: str | os.PathLike[str],
                   corpus_dir: str | os.PathLike[str] | None = None) -> str:
    """The verified corpus root of a benchmark; with ``corpus_dir``, also re-hash the files."""
    benchmark = load_benchmark(benchmark_path)
    if corpus_dir is not None:
        verify_corpus(benchmark, corpus_dir).raise_for_problems()
    return benchmark.root


class Inputs(NamedTuple):
    """What an evaluation reads: the benchmark, the run and the corpus re-hashed."""

    benchmark: Benchmark
    run: Run
    corpus: CorpusCheck


def read_files(benchmark_path: str | os.PathLike[str], run_path: str | os.PathLike[str],
               corpus_dir: str | os.PathLike[str]) -> Inputs:
    """Load and validate the benchmark and the run, and re-hash every corpus file."""
    benchmark = load_benchmark(benchmark_path)
    run = load_run(run_path)
    return Inputs(benchmark, run, verify_corpus(benchmark, corpus_dir))


def evaluate_files(benchmark_path: str | os.PathLike[str], run_path: str | os.PathLike[str],
                   corpus_dir: str | os.PathLike[str]) -> Report:
    """Load, re-hash and evaluate: the report for a benchmark, run and corpus on disk."""
    return evaluate(*read_files(benchmark_path, run_path, corpus_dir))


def load_report(path: str | os.PathLike[str]) -> Report:
    """Read a report.json as a :class:`Report`, refusing any document that is not an ECEB-0.1
    report and naming the JSON pointer of any missing, mistyped or unknown member."""
    return Report.from_json(Node(str(path), "", load_json_document(path)))
