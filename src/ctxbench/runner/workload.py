"""Workloads the runner executes: an ECEB benchmark (or the built-in enterprise seed), a
QA JSONL file in LongBench's shape (``_id``, ``input``, ``context``, ``answers``; format
``qa`` scores token F1, format ``longbench`` LongBench's per-dataset metric), or a BFCL
category (``bfcl:<category>``; tool-schema tasks, see :mod:`ctxbench.workloads.bfcl`).

Every task becomes a :class:`WorkTask`; tasks keep the order of their file, which is the
fixed task order of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import Fields, InputError, blake3_file, iter_jsonl
from ctxbench.runner.spec import BFCL_PREFIX, BUILTIN_SEED, WorkloadSpec

__all__ = ["BFCL", "ECEB", "LONGBENCH", "QA", "BuiltinFormat", "WorkTask", "Workload",
           "bfcl_registry_workload", "load_workload"]

# LongBench's row fields; the runner reads the first four, and any other name is an error.
_LONGBENCH_FIELDS = ("_id", "input", "context", "answers", "length", "dataset", "language",
                     "all_classes")


@dataclass(frozen=True, slots=True)
class WorkTask:
    """One task: the question, what a good answer needs, and (QA) its own context.

    ``source_task`` is the workload's own task (a ``ToolTask`` for BFCL, a
    ``LongBenchTask`` for LongBench) that its scorer reads; None for ECEB and QA.
    """

    task_id: str
    query: str
    answers: tuple[str, ...]
    answer_terms: tuple[str, ...]
    required_evidence: tuple[str, ...]
    expect_abstention: bool
    budget_ladder: tuple[int, ...]
    context: str | None = None
    source_task: Any = None


@dataclass(frozen=True, slots=True)
class Workload:
    """Loaded tasks plus what identifies the workload in every trial."""

    name: str
    version: str
    format: str
    tasks: tuple[WorkTask, ...]
    benchmark: Any = None  # ctxbench.protocols.eceb.Benchmark for ECEB workloads
    corpus_dir: Path | None = None
    source: str = ""

    @property
    def synthetic(self) -> bool:
        """True when the benchmark declares itself a conformance seed (synthetic data)."""
        return getattr(self.benchmark, "claim_class", None) == "conformance_seed"


def _load_eceb(spec: WorkloadSpec) -> Workload:
    from ctxbench.protocols.eceb import load_benchmark, verify_corpus
    from ctxbench.protocols.eceb.seed import seed_paths

    if spec.source == BUILTIN_SEED:
        paths = seed_paths()
        bench_path, corpus = paths.benchmark, spec.corpus or paths.corpus
    else:
        bench_path = Path(spec.source)
        corpus = spec.corpus or bench_path.parent / "corpus"
    benchmark = load_benchmark(bench_path)
    check = verify_corpus(benchmark, corpus)
    check.raise_for_problems()
    tasks = tuple(
        WorkTask(task_id=t.task_id, query=t.query, answers=(), answer_terms=t.answer_terms,
                 required_evidence=t.required_artifacts, expect_abstention=t.expect_abstention,
                 budget_ladder=t.budget_ladder)
        for t in benchmark.tasks)
    if spec.limit is not None:
        tasks = tasks[: spec.limit]
    return Workload(name=benchmark.benchmark_id, version=f"corpus-root:{benchmark.root}",
                    format="eceb", tasks=tasks, benchmark=benchmark,
                    corpus_dir=Path(corpus), source=spec.source)


def _load_qa(spec: WorkloadSpec) -> Workload:
    path = Path(spec.source)
    tasks: list[WorkTask] = []
    seen: set[str] = set()
    for item in iter_jsonl(path):
        obj = item.value
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{item.line}: expected a JSON object")
        f = Fields(obj, path=str(path), line=item.line)
        f.only(_LONGBENCH_FIELDS)
        task_id = f.req_string("_id")
        if task_id in seen:
            f.fail("_id", "an id used by no earlier line", task_id)
        seen.add(task_id)
        answers = f.array("answers")
        if not answers or not all(isinstance(a, str) for a in answers):
            f.fail("answers", "a non-empty array of strings", answers)
        tasks.append(WorkTask(
            task_id=task_id, query=f.req_string("input"), answers=tuple(answers),
            answer_terms=(), required_evidence=tuple(answers), expect_abstention=False,
            budget_ladder=(), context=f.req_string("context", nonblank=False)))
    if not tasks:
        raise InputError(f"{path}: expected at least one task, got an empty file")
    if spec.limit is not None:
        tasks = tasks[: spec.limit]
    return Workload(name=path.stem, version="blake3:" + blake3_file(path), format="qa",
                    tasks=tuple(tasks), source=str(path))


def _load_bfcl(spec: WorkloadSpec) -> Workload:
    from ctxbench.workloads.bfcl import load_bfcl
    from ctxbench.workloads.bfcl_registry import schema_artifact_id

    loaded = load_bfcl(spec.source[len(BFCL_PREFIX):], limit=spec.limit,
                       offset=spec.offset)
    # Required evidence: the registry ids of the schemas the ground truth calls
    # (ctxbench.workloads.bfcl_registry), the ids a context's ``selected`` names.
    tasks = tuple(
        WorkTask(task_id=t.task_id, query=t.query, answers=(), answer_terms=(),
                 required_evidence=tuple(schema_artifact_id(t, n)
                                         for n in t.expected_functions),
                 expect_abstention=False,
                 budget_ladder=(), source_task=t)
        for t in loaded.tasks)
    return Workload(name=loaded.name, version=loaded.version, format="bfcl", tasks=tasks,
                    source=spec.source)


def _load_longbench(spec: WorkloadSpec) -> Workload:
    from ctxbench.workloads.longbench import load_longbench

    path = Path(spec.source)
    loaded = load_longbench(path, limit=spec.limit)
    tasks = tuple(
        WorkTask(task_id=t.task_id, query=t.query, answers=t.answers, answer_terms=(),
                 required_evidence=t.answers, expect_abstention=False, budget_ladder=(),
                 context=t.context, source_task=t)
        for t in loaded.tasks)
    return Workload(name=loaded.name, version=loaded.version, format="longbench",
                    tasks=tasks, source=str(path))


def load_workload(spec: WorkloadSpec) -> Workload:
    """Load the spec's workload by its format (an ECEB corpus is verified first)."""
    from ctxbench.runner.workload_formats import workload_format

    return workload_format(spec.format).load(spec)


@dataclass(frozen=True, slots=True)
class BuiltinFormat:
    """One of ctxbench's own workload formats (see
    :class:`~ctxbench.runner.workload_formats.WorkloadFormat`)."""

    name: str
    context: str
    loader: Callable[[WorkloadSpec], Workload]
    default_scorer: str = "token_f1"
    own_scorer: str | None = None
    scorer: Callable[[WorkTask, str], float] | None = None
    prefix: str | None = None
    takes_offset: bool = False
    judge_refusal: str | None = None
    extension: str | None = None  # the format of an unnamed source with this ending
    fallback: bool = False  # the format of an unnamed source without any such ending
    only_scorer: tuple[str, str] | None = None  # the one task_score it takes, and why
    # The workload with an ECEB benchmark of its context built under a folder, for a format
    # that has none of its own (see WorkloadFormat): (workload, folder, budgets, reps).
    eceb_registry: Callable[[Workload, Path, tuple[int, ...], int], Workload] | None = None

    def default_for(self, source: str) -> bool:
        if self.prefix is not None:
            return source.startswith(self.prefix)
        if self.fallback:
            return not source.endswith(_EXTENSIONS)
        return self.extension is not None and source.endswith(self.extension)

    def resolve_source(self, source: str, base: Path) -> str:
        if self.prefix is not None:
            return _bfcl_source(source)
        if source == BUILTIN_SEED:
            return source
        path = Path(source).expanduser()
        return str(path if path.is_absolute() else base / path)

    def check_scorer(self, scorer: str) -> str | None:
        if self.only_scorer is None or scorer == self.only_scorer[0]:
            return None
        return f"{self.only_scorer[0]} {self.only_scorer[1]}"

    def load(self, spec: WorkloadSpec) -> Workload:
        return self.loader(spec)

    def score(self, task: WorkTask, answer: str) -> float | None:
        return None if self.scorer is None else self.scorer(task, answer)


def _bfcl_source(source: str) -> str:
    from ctxbench.runner.workload_formats import SourceRefused
    from ctxbench.workloads.bfcl import BFCL_CATEGORIES

    if source[len(BFCL_PREFIX):] not in BFCL_CATEGORIES:
        raise SourceRefused("bfcl:<category> with a category among " +
                            ", ".join(BFCL_CATEGORIES))
    return source


def _score_bfcl(task: WorkTask, answer: str) -> float:
    from ctxbench.workloads.bfcl import score_tool_answer

    return score_tool_answer(task.source_task, answer)


def _score_longbench(task: WorkTask, answer: str) -> float:
    from ctxbench.workloads.longbench import score_longbench

    return score_longbench(task.source_task, answer)


_EXTENSIONS = (".jsonl",)  # the extensions of ctxbench's own formats (QA's)
ECEB = BuiltinFormat("eceb", "corpus", _load_eceb, default_scorer="answer_terms",
                     fallback=True,
                     only_scorer=("answer_terms", "for an ECEB workload (it has no gold answers)"))
QA = BuiltinFormat("qa", "task_text", _load_qa, extension=".jsonl")
LONGBENCH = BuiltinFormat("longbench", "task_text", _load_longbench, own_scorer="longbench",
                          scorer=_score_longbench)
BFCL = BuiltinFormat("bfcl", "tool_schemas", _load_bfcl, own_scorer="bfcl_ast",
                     scorer=_score_bfcl, prefix=BFCL_PREFIX, takes_offset=True,
                     judge_refusal="no judge (BFCL answers are checked by the AST checker)",
                     eceb_registry=lambda w, folder, budgets, reps: bfcl_registry_workload(
                         w, folder, budgets=budgets, repetitions=reps))


def bfcl_registry_workload(workload: Workload, folder: Path, *, budgets: tuple[int, ...],
                           repetitions: int, claim_class: str = "public_reproduction"
                           ) -> Workload:
    """The BFCL workload with its ECEB registry written under ``folder`` and loaded.

    Every schema is a ``public`` artifact, each task's ladder is ``budgets`` and its
    required evidence the schemas its ground truth calls
    (:mod:`ctxbench.workloads.bfcl_registry`); the result evaluates like an ECEB workload.
    """
    from dataclasses import replace

    from ctxbench.protocols.eceb import load_benchmark
    from ctxbench.workloads.bfcl import BfclWorkload
    from ctxbench.workloads.bfcl_registry import write_registry

    source = BfclWorkload(name=workload.name, version=workload.version,
                          category=workload.source[len(BFCL_PREFIX):],
                          tasks=tuple(t.source_task for t in workload.tasks))
    paths = write_registry(source, folder, budget_ladder=budgets, repetitions=repetitions,
                           claim_class=claim_class)
    ladder = tuple(sorted(set(budgets)))
    return replace(workload, tasks=tuple(replace(t, budget_ladder=ladder)
                                         for t in workload.tasks),
                   benchmark=load_benchmark(paths.benchmark), corpus_dir=paths.corpus)
