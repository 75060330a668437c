"""ECEB-0.1: corpus provenance, policy gates and the quality-constrained minimum budget.

    benchmark = load_benchmark("benchmark.json")          # validates, checks the root
    check = verify_corpus(benchmark, "corpus/")           # streamed re-hash of every file
    report = evaluate(benchmark, load_run("run.json"), check)

The embedded synthetic seed lives at :func:`seed_paths`.
"""

from ctxbench.protocols.eceb.benchmark import load_benchmark, parse_benchmark
from ctxbench.protocols.eceb.corpus import CorpusCheck, CorpusProblem, verify_corpus
from ctxbench.protocols.eceb.evaluate import TRUST_BOUNDARY, evaluate
from ctxbench.protocols.eceb.gates import GATES, Failure, GroupResult, evaluate_group
from ctxbench.protocols.eceb.model import (
    BENCHMARK_SCHEMA,
    CLAIM_CLASSES,
    CLASSIFICATIONS,
    KINDS,
    REPORT_SCHEMA,
    RUN_SCHEMA,
    SPEC_URN,
    STRATEGIES,
    Artifact,
    Benchmark,
    Observation,
    Run,
    Selected,
    Task,
)
from ctxbench.protocols.eceb.paths import path_problem, resolve_in_corpus, validate_portable_path
from ctxbench.protocols.eceb.register import register_directory
from ctxbench.protocols.eceb.root import corpus_root
from ctxbench.protocols.eceb.run import load_run, parse_run
from ctxbench.protocols.eceb.seed import SeedPaths, seed_paths

__all__ = [
    "BENCHMARK_SCHEMA",
    "CLAIM_CLASSES",
    "CLASSIFICATIONS",
    "GATES",
    "KINDS",
    "REPORT_SCHEMA",
    "RUN_SCHEMA",
    "SPEC_URN",
    "STRATEGIES",
    "TRUST_BOUNDARY",
    "Artifact",
    "Benchmark",
    "CorpusCheck",
    "CorpusProblem",
    "Failure",
    "GroupResult",
    "Observation",
    "Run",
    "SeedPaths",
    "Selected",
    "Task",
    "corpus_root",
    "evaluate",
    "evaluate_group",
    "load_benchmark",
    "load_run",
    "parse_benchmark",
    "parse_run",
    "path_problem",
    "register_directory",
    "resolve_in_corpus",
    "seed_paths",
    "validate_portable_path",
    "verify_corpus",
]
