"""An ECEB corpus registry for a BFCL slice: every function schema is a public artifact.

BFCL is a public dataset, so each function schema a task offers is registered as one
artifact of kind ``api_spec`` classified ``public``:

- ``artifact_id`` ``bfcl:<task_id>:<function_name>`` (ECEB ids allow no ``/``);
- ``path`` ``bfcl/<category>/<task_id>/<function_name>.json``;
- bytes: the schema's canonical JSON (RFC 8785), exactly the text a strategy sends.

A task's required evidence is the schemas of the functions its ground truth calls (none
for the relevance categories); it may read ``public`` artifacts and is denied nothing
(every other task's schemas are public too; a strategy only ever sees its own task's).
A call is right or wrong, so the quality floor is 1000 milli with no regression allowed:
a budget qualifies only when every repetition's call passes BFCL's checker. The ladder is
the experiment's declared budgets. ECEB's benchmark schema has no provenance field, so the
dataset's provenance (distribution, version, data files and their SHA-256) is written
beside it in ``provenance.json``.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import InputError, atomic_write_bytes, atomic_write_json, sha256_file
from ctxbench.protocols.eceb.records import BENCHMARK_SCHEMA, SPEC_URN
from ctxbench.workloads.base import ToolTask
from ctxbench.workloads.bfcl import BFCL_CATEGORIES, BFCL_DIST, BfclWorkload, bfcl_data_dir

__all__ = ["REGISTRY_KIND", "BfclRegistry", "registry_document", "schema_artifact_id",
           "schema_path", "write_registry"]

REGISTRY_KIND = "api_spec"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_SEGMENT = re.compile(r"[^/\\\x00-\x1f\x7f]+")


def schema_artifact_id(task: ToolTask, name: str) -> str:
    """The ECEB artifact id of function ``name`` offered by ``task``."""
    artifact_id = f"bfcl:{task.task_id}:{name}"
    if not _ID.fullmatch(artifact_id):
        raise InputError(f"bfcl task {task.task_id}: function: expected a name usable in an "
                         f"ECEB artifact id ([A-Za-z0-9._:-], at most 128 characters in all), "
                         f"got {name!r}")
    return artifact_id


def schema_path(task: ToolTask, name: str) -> str:
    """The corpus-relative path of function ``name``'s schema for ``task``."""
    parts = ("bfcl", task.category, task.task_id, f"{name}.json")
    if not all(_SEGMENT.fullmatch(p) and p not in (".", "..") for p in parts):
        raise InputError(f"bfcl task {task.task_id}: function: expected a name usable as a "
                         f"portable path segment, got {name!r}")
    return "/".join(parts)


@dataclass(frozen=True, slots=True)
class BfclRegistry:
    """Where a written registry lives: ``benchmark.json``, ``corpus/``, ``provenance.json``."""

    benchmark: Path
    corpus: Path
    provenance: Path


def _artifacts(tasks: Sequence[ToolTask]) -> list[tuple[dict[str, str], bytes]]:
    from ctxbench.core import blake3_hex

    out = []
    for task in tasks:
        for schema in task.schemas:
            data = schema.text.encode("utf-8")
            out.append(({"artifact_id": schema_artifact_id(task, schema.name),
                         "path": schema_path(task, schema.name), "kind": REGISTRY_KIND,
                         "classification": "public", "blake3": blake3_hex(data)}, data))
    return out


def _required(task: ToolTask) -> list[str]:
    offered = {s.name for s in task.schemas}
    missing = [name for name in task.expected_functions if name not in offered]
    if missing:
        raise InputError(f"bfcl task {task.task_id}: ground_truth: expected functions the "
                         f"task offers, got {', '.join(map(repr, missing))}")
    return [schema_artifact_id(task, name) for name in task.expected_functions]


def registry_document(workload: BfclWorkload, *, budget_ladder: Sequence[int],
                      repetitions: int, claim_class: str = "public_reproduction"
                      ) -> dict[str, Any]:
    """The ``symgliph.eceb/benchmark-v0.1`` document of the slice (see the module doc)."""
    from ctxbench.protocols.eceb.records import Artifact
    from ctxbench.protocols.eceb.root import corpus_root

    ladder = sorted(set(budget_ladder))
    if not ladder or ladder[0] < 1:
        raise InputError("bfcl registry: budget_ladder: expected at least one positive "
                         f"budget, got {list(budget_ladder)}")
    records = [record for record, _ in _artifacts(workload.tasks)]
    root = corpus_root(Artifact(**r) for r in records)
    tasks = [{
        "task_id": task.task_id,
        "query": task.query,
        "required_artifacts": _required(task),
        "allowed_classifications": ["public"],
        "denied_artifacts": [],
        "budget_ladder": ladder,
        "minimum_quality_milli": 1000,
        "maximum_quality_regression_milli": 0,
        "answer_terms": [],
        "required_repetitions": repetitions,
    } for task in workload.tasks]
    return {"schema": BENCHMARK_SCHEMA, "spec": SPEC_URN,
            "benchmark_id": workload.name, "claim_class": claim_class,
            "corpus": {"root": root, "artifacts": records}, "tasks": tasks}


def provenance(workload: BfclWorkload, data_dir: Path | None = None) -> dict[str, Any]:
    """Where the slice comes from: bfcl-eval's name, version, data files and SHA-256."""
    folder = data_dir or bfcl_data_dir()
    name = f"BFCL_v4_{BFCL_CATEGORIES[workload.category]}.json"
    files = [folder / name]
    answers = folder / "possible_answer" / name
    if answers.is_file():
        files.append(answers)
    return {
        "dataset": "Berkeley Function Calling Leaderboard (public)",
        "distribution": BFCL_DIST,
        "version": importlib.metadata.version(BFCL_DIST) if data_dir is None else "local",
        "category": workload.category,
        "data_files": [{"path": str(p.relative_to(folder.parent.parent)),
                        "sha256": sha256_file(p)}
                       for p in files],
        "task_ids": [t.task_id for t in workload.tasks],
        "classification": "public: every schema is published in the dataset",
    }


def write_registry(workload: BfclWorkload, folder: Path, *, budget_ladder: Sequence[int],
                   repetitions: int, claim_class: str = "public_reproduction",
                   data_dir: Path | None = None) -> BfclRegistry:
    """Write the registry (benchmark, corpus files, provenance) under ``folder``."""
    document = registry_document(workload, budget_ladder=budget_ladder,
                                 repetitions=repetitions, claim_class=claim_class)
    corpus = folder / "corpus"
    for record, data in _artifacts(workload.tasks):
        atomic_write_bytes(corpus / record["path"], data)
    atomic_write_json(folder / "benchmark.json", document)
    atomic_write_json(folder / "provenance.json", provenance(workload, data_dir))
    return BfclRegistry(folder / "benchmark.json", corpus, folder / "provenance.json")
