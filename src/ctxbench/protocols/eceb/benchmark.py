"""Load and validate a ``symgliph.eceb/benchmark-v0.1`` document.

Every rule of spec §5-§6 is checked here, and a broken rule is reported as
``file: /json/pointer: expected ..., got ...`` (exit 2). A declared corpus root that
differs from the root of the registered artifacts is an IntegrityError.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ctxbench.core.digests import HEX64
from ctxbench.core.errors import IntegrityError, PointerError, describe_value, pointer_join
from ctxbench.core.fields import Fields
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.limits import MAX_COUNT
from ctxbench.protocols.eceb.paths import path_problem
from ctxbench.protocols.eceb.records import (
    BENCHMARK_SCHEMA,
    CLAIM_CLASSES,
    CLASSIFICATIONS,
    KINDS,
    SPEC_URN,
    Artifact,
    Benchmark,
    Task,
)
from ctxbench.protocols.eceb.root import corpus_root

__all__ = [
    "HEX_TEXT",
    "ID_PATTERN",
    "MAX_REPETITIONS",
    "document_fields",
    "load_benchmark",
    "parse_benchmark",
]

# A task asks for at most this many repetitions per strategy and budget: evaluation
# visits every one, so a count nobody meant (10**12) must be refused, not attempted.
MAX_REPETITIONS = 10_000

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_ID_TEXT = "an id of 1-128 characters from [A-Za-z0-9._:-] starting with a letter or digit"
HEX_TEXT = "a BLAKE3 digest (64 lowercase hex digits)"
_TOP = ("schema", "spec", "benchmark_id", "claim_class", "corpus", "tasks")
_ARTIFACT = ("artifact_id", "path", "kind", "classification", "blake3")
_TASK = (
    "task_id", "query", "required_artifacts", "allowed_classifications", "denied_artifacts",
    "budget_ladder", "minimum_quality_milli", "maximum_quality_regression_milli",
    "answer_terms", "required_repetitions",
)


def load_benchmark(path: str | os.PathLike[str]) -> Benchmark:
    """Read, validate and return the benchmark at ``path`` (errors name file and pointer)."""
    return parse_benchmark(load_json_document(path), path=str(path))


def document_fields(value: Any, *, path: str, schema: str, fields: tuple[str, ...]) -> Fields:
    """The checked top level of an ECEB document: exactly ``fields``, ``schema``, the spec URN."""
    if not isinstance(value, dict):
        raise PointerError(path, "/", f"expected a JSON object, got {describe_value(value)}")
    top = Fields(value, path=path, pointer="")
    top.only(fields)
    top.require(fields)
    if top.raw("schema") != schema:
        top.fail("schema", f'"{schema}"', top.raw("schema"))
    if top.raw("spec") != SPEC_URN:
        top.fail("spec", f'the specification URN "{SPEC_URN}"', top.raw("spec"))
    return top


def parse_benchmark(value: Any, *, path: str) -> Benchmark:
    """Validate an already-decoded benchmark document (see :func:`load_benchmark`)."""
    top = document_fields(value, path=path, schema=BENCHMARK_SCHEMA, fields=_TOP)
    benchmark_id = _id(top, "benchmark_id")
    claim_class = top.req_enum("claim_class", CLAIM_CLASSES)
    corpus = top.child("corpus", _obj(top, "corpus"))
    corpus.only(("root", "artifacts"))
    corpus.require(("root", "artifacts"))
    declared = corpus.matching("root", HEX64, HEX_TEXT)
    artifacts = _artifacts(corpus)
    computed = corpus_root(artifacts)
    if declared != computed:
        raise IntegrityError(
            f"{path}: /corpus/root: expected the root of the registered artifacts, "
            f"{computed}, got {declared}"
        )
    by_id = {a.artifact_id: a for a in artifacts}
    tasks = _tasks(top, by_id)
    return Benchmark(benchmark_id, claim_class, computed, artifacts, tasks, path=path)


def _obj(f: Fields, name: str) -> dict[str, Any]:
    value = f.obj(name)
    assert value is not None
    return value


def _arr(f: Fields, name: str) -> list[Any]:
    value = f.array(name)
    assert value is not None
    return value


def _id(f: Fields, name: str) -> str:
    value = f.matching(name, ID_PATTERN, _ID_TEXT)
    assert value is not None
    return value


def _item(f: Fields, name: str, index: int, value: Any) -> Fields:
    assert f.pointer is not None
    pointer = pointer_join(f.pointer, name, index)
    if not isinstance(value, dict):
        raise PointerError(f.path, pointer, f"expected a JSON object, got {describe_value(value)}")
    return Fields(value, path=f.path, pointer=pointer)


def _artifacts(corpus: Fields) -> tuple[Artifact, ...]:
    seen_ids: set[str] = set()
    seen_paths: set[str] = set()
    out: list[Artifact] = []
    for index, raw in enumerate(_arr(corpus, "artifacts")):
        f = _item(corpus, "artifacts", index, raw)
        f.only(_ARTIFACT)
        f.require(_ARTIFACT)
        artifact_id = _id(f, "artifact_id")
        if artifact_id in seen_ids:
            f.fail("artifact_id", "an artifact id not registered before", artifact_id)
        path = f.req_string("path", nonblank=False)
        problem = path_problem(path)
        if problem is not None:
            f.fail("path", "a portable corpus-relative path", path,
                   got_text=f"{describe_value(path)} ({problem})")
        if path in seen_paths:
            f.fail("path", "a path not registered before", path)
        kind = f.req_enum("kind", KINDS)
        classification = f.req_enum("classification", CLASSIFICATIONS)
        digest = f.matching("blake3", HEX64, HEX_TEXT)
        assert digest is not None
        seen_ids.add(artifact_id)
        seen_paths.add(path)
        out.append(Artifact(artifact_id, path, kind, classification, digest))
    return tuple(out)


def _strings(f: Fields, name: str, *, unique: bool = True) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    assert f.pointer is not None
    for index, value in enumerate(_arr(f, name)):
        where = pointer_join(f.pointer, name, index)
        if not isinstance(value, str) or not value.strip():
            raise PointerError(f.path, where,
                               f"expected a non-blank string, got {describe_value(value)}")
        if unique and value in seen:
            raise PointerError(f.path, where,
                               f"expected each value once, got {describe_value(value)} again")
        seen.add(value)
        out.append((index, value))
    return out


def _tasks(top: Fields, by_id: dict[str, Artifact]) -> tuple[Task, ...]:
    out: list[Task] = []
    seen: set[str] = set()
    for index, raw in enumerate(_arr(top, "tasks")):
        f = _item(top, "tasks", index, raw)
        f.only((*_TASK, "expect_abstention", "evidence_markers"))
        f.require(_TASK)
        task_id = _id(f, "task_id")
        if task_id in seen:
            f.fail("task_id", "a task id not used before", task_id)
        seen.add(task_id)
        query = f.req_string("query")
        allowed = _strings(f, "allowed_classifications")
        if not allowed:
            f.fail("allowed_classifications", "at least one classification", [])
        for i, value in allowed:
            if value not in CLASSIFICATIONS:
                raise PointerError(
                    f.path, pointer_join(f.pointer or "", "allowed_classifications", i),
                    f"expected one of {', '.join(CLASSIFICATIONS)}, got {describe_value(value)}")
        allowed_set = {v for _, v in allowed}
        denied = _registered(f, "denied_artifacts", by_id)
        denied_set = {v for _, v in denied}
        required = _registered(f, "required_artifacts", by_id)
        for i, artifact_id in required:
            where = pointer_join(f.pointer or "", "required_artifacts", i)
            if artifact_id in denied_set:
                raise PointerError(f.path, where, f"expected a required artifact the task may "
                                   f"read, got {artifact_id!r}, which the task denies")
            cls = by_id[artifact_id].classification
            if cls not in allowed_set:
                raise PointerError(f.path, where, f"expected a required artifact the task may "
                                   f"read, got {artifact_id!r}, classified {cls}, which "
                                   f"allowed_classifications does not list")
        ladder = _ladder(f)
        minimum = f.req_int("minimum_quality_milli", minimum=0, maximum=1000)
        regression = f.req_int("maximum_quality_regression_milli", minimum=0, maximum=1000)
        terms = _strings(f, "answer_terms")
        repetitions = f.req_int("required_repetitions", minimum=1, maximum=MAX_REPETITIONS)
        abstain = f.boolean("expect_abstention", optional=True) or False
        if abstain and not terms:
            f.fail("answer_terms", "at least one term that expresses the abstention", [])
        # ctxbench extension: optional exact evidence strings (docs/compiler.md).
        markers = _strings(f, "evidence_markers") if "evidence_markers" in f.value else []
        out.append(Task(
            task_id, query, tuple(v for _, v in required), tuple(v for _, v in allowed),
            tuple(v for _, v in denied), ladder, minimum, regression,
            tuple(v for _, v in terms), repetitions, abstain, tuple(v for _, v in markers),
        ))
    return tuple(out)


def _registered(f: Fields, name: str, by_id: dict[str, Artifact]) -> list[tuple[int, str]]:
    values = _strings(f, name)
    for i, artifact_id in values:
        if artifact_id not in by_id:
            raise PointerError(
                f.path, pointer_join(f.pointer or "", name, i),
                f"expected the id of a registered artifact, got {describe_value(artifact_id)}")
    return values


def _ladder(f: Fields) -> tuple[int, ...]:
    values = _arr(f, "budget_ladder")
    if not values:
        f.fail("budget_ladder", "at least one token budget", values)
    out: list[int] = []
    for i, value in enumerate(values):
        where = pointer_join(f.pointer or "", "budget_ladder", i)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
            raise PointerError(f.path, where, f"expected an integer in [1, {MAX_COUNT}], "
                               f"got {describe_value(value)}")
        if out and value <= out[-1]:
            raise PointerError(f.path, where, f"expected a budget greater than {out[-1]} "
                               f"(the ladder ascends strictly), got {describe_value(value)}")
        out.append(value)
    return tuple(out)

