"""ECEB-0.1: corpus provenance, policy gates and the quality-constrained minimum budget.

    benchmark = load_benchmark("benchmark.json")          # validates, checks the root
    check = verify_corpus(benchmark, "corpus/")           # streamed re-hash of every file
    report = evaluate(benchmark, load_run("run.json"), check)

The embedded synthetic seed lives at :func:`seed_paths`.

Names are imported from their modules on first use, so a caller that needs one module
(``ctxbench compile`` reads a benchmark, not a run or a report) does not import the rest.
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.protocols.eceb.analysis import TRUST_BOUNDARY, evaluate
    from ctxbench.protocols.eceb.benchmark import load_benchmark, parse_benchmark
    from ctxbench.protocols.eceb.corpus import CorpusCheck, CorpusProblem, verify_corpus
    from ctxbench.protocols.eceb.gates import GATES, Failure, GroupResult, evaluate_group
    from ctxbench.protocols.eceb.paths import (
        path_problem,
        resolve_in_corpus,
        validate_portable_path,
    )
    from ctxbench.protocols.eceb.records import (
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

_WHERE = {
    "BENCHMARK_SCHEMA": "ctxbench.protocols.eceb.records",
    "CLAIM_CLASSES": "ctxbench.protocols.eceb.records",
    "CLASSIFICATIONS": "ctxbench.protocols.eceb.records",
    "GATES": "ctxbench.protocols.eceb.gates",
    "KINDS": "ctxbench.protocols.eceb.records",
    "REPORT_SCHEMA": "ctxbench.protocols.eceb.records",
    "RUN_SCHEMA": "ctxbench.protocols.eceb.records",
    "SPEC_URN": "ctxbench.protocols.eceb.records",
    "STRATEGIES": "ctxbench.protocols.eceb.records",
    "Artifact": "ctxbench.protocols.eceb.records",
    "Benchmark": "ctxbench.protocols.eceb.records",
    "CorpusCheck": "ctxbench.protocols.eceb.corpus",
    "CorpusProblem": "ctxbench.protocols.eceb.corpus",
    "Failure": "ctxbench.protocols.eceb.gates",
    "GroupResult": "ctxbench.protocols.eceb.gates",
    "Observation": "ctxbench.protocols.eceb.records",
    "Run": "ctxbench.protocols.eceb.records",
    "SeedPaths": "ctxbench.protocols.eceb.seed",
    "Selected": "ctxbench.protocols.eceb.records",
    "Task": "ctxbench.protocols.eceb.records",
    "TRUST_BOUNDARY": "ctxbench.protocols.eceb.analysis",
    "corpus_root": "ctxbench.protocols.eceb.root",
    "evaluate": "ctxbench.protocols.eceb.analysis",
    "evaluate_group": "ctxbench.protocols.eceb.gates",
    "load_benchmark": "ctxbench.protocols.eceb.benchmark",
    "load_run": "ctxbench.protocols.eceb.run",
    "parse_benchmark": "ctxbench.protocols.eceb.benchmark",
    "parse_run": "ctxbench.protocols.eceb.run",
    "path_problem": "ctxbench.protocols.eceb.paths",
    "register_directory": "ctxbench.protocols.eceb.register",
    "resolve_in_corpus": "ctxbench.protocols.eceb.paths",
    "seed_paths": "ctxbench.protocols.eceb.seed",
    "validate_portable_path": "ctxbench.protocols.eceb.paths",
    "verify_corpus": "ctxbench.protocols.eceb.corpus",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
