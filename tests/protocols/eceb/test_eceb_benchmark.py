"""Benchmark loading: every rejection, with its located message."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError, IntegrityError
from ctxbench.protocols.eceb import load_benchmark, parse_benchmark, seed_paths

SEED = json.loads(seed_paths().benchmark.read_text(encoding="utf-8"))


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "benchmark.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _edited(edit: Any) -> dict[str, Any]:
    doc = copy.deepcopy(SEED)
    edit(doc)
    return doc


def test_seed_loads() -> None:
    bench = load_benchmark(seed_paths().benchmark)
    assert bench.benchmark_id == "fernhill-enterprise-seed"
    assert len(bench.artifacts) == 35 and len(bench.tasks) == 13
    assert bench.artifact("infra-main") is not None and bench.artifact("nope") is None
    task = bench.task("senior-engineer-salary-band")
    assert task is not None and task.expect_abstention and task.required_artifacts == ()


def _set(pointer: str, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        *parents, last = pointer.strip("/").split("/")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return edit


CASES = [
    (_set("/schema", "symgliph.eceb/benchmark-v0.2"),
     '/schema: expected "symgliph.eceb/benchmark-v0.1", got the string'),
    (_set("/spec", "urn:symgliph:spec:cef:1"),
     '/spec: expected the specification URN "urn:symgliph:spec:eceb:0.1"'),
    (_set("/claim_class", "gold"), "/claim_class: expected one of conformance_seed"),
    (_set("/extra", 1), "/extra: expected no such field"),
    (_set("/corpus/root", "ab"), "/corpus/root: expected a BLAKE3 digest"),
    (_set("/corpus/artifacts/0/kind", "wiki"), "/corpus/artifacts/0/kind: expected one of code"),
    (_set("/corpus/artifacts/0/classification", "secret"),
     "/corpus/artifacts/0/classification: expected one of public"),
    (_set("/corpus/artifacts/0/path", "api/../x.yaml"),
     "/corpus/artifacts/0/path: expected a portable corpus-relative path"),
    (_set("/corpus/artifacts/0/path", "api\\x.yaml"), "(it contains a backslash)"),
    (_set("/corpus/artifacts/1/artifact_id", "api-shipments-openapi"),
     "/corpus/artifacts/1/artifact_id: expected an artifact id not registered before"),
    (_set("/corpus/artifacts/1/path", "api/shipments-openapi.yaml"),
     "/corpus/artifacts/1/path: expected a path not registered before"),
    (_set("/corpus/artifacts/0/artifact_id", "bad id"),
     "/corpus/artifacts/0/artifact_id: expected an id of 1-128 characters"),
    (_set("/tasks/0/budget_ladder", [512, 256]),
     "/tasks/0/budget_ladder/1: expected a budget greater than 512"),
    (_set("/tasks/0/budget_ladder", []), "/tasks/0/budget_ladder: expected at least one"),
    (_set("/tasks/0/budget_ladder", [256.0]), "/tasks/0/budget_ladder/0: expected an integer"),
    (_set("/tasks/0/required_repetitions", 0),
     "/tasks/0/required_repetitions: expected an integer in [1, 10000], got the integer 0"),
    (_set("/tasks/0/minimum_quality_milli", 1001),
     "/tasks/0/minimum_quality_milli: expected an integer in [0, 1000]"),
    (_set("/tasks/0/required_artifacts", ["nope"]),
     "/tasks/0/required_artifacts/0: expected the id of a registered artifact"),
    (_set("/tasks/0/denied_artifacts", ["runbook-payments-failover"]),
     "/tasks/0/required_artifacts/0: expected a required artifact the task may read, got "
     "'runbook-payments-failover', which the task denies"),
    (_set("/tasks/0/allowed_classifications", ["public"]),
     "classified internal, which allowed_classifications does not list"),
    (_set("/tasks/0/allowed_classifications", ["top-secret"]),
     "/tasks/0/allowed_classifications/0: expected one of public"),
    (_set("/tasks/0/allowed_classifications", []),
     "/tasks/0/allowed_classifications: expected at least one classification"),
    (_set("/tasks/0/answer_terms", ["x", "x"]),
     "/tasks/0/answer_terms/1: expected each value once"),
    (_set("/tasks/1/task_id", "payments-failover-region"),
     "/tasks/1/task_id: expected a task id not used before"),
    (_set("/tasks/5/answer_terms", []),
     "/tasks/5/answer_terms: expected at least one term that expresses the abstention"),
    (_set("/tasks/0/expect_abstention", "yes"), "/tasks/0/expect_abstention: expected a JSON "
     "boolean"),
]


@pytest.mark.parametrize(("edit", "message"), CASES)
def test_rejections(tmp_path: Path, edit: Any, message: str) -> None:
    path = _write(tmp_path, _edited(edit))
    with pytest.raises(InputError, match=re.escape(message)) as info:
        load_benchmark(path)
    assert str(info.value).startswith(f"{path}: /")


def test_declared_root_must_match(tmp_path: Path) -> None:
    doc = _edited(_set("/corpus/root", "0" * 64))
    path = _write(tmp_path, doc)
    with pytest.raises(IntegrityError, match=re.escape(
            f"{path}: /corpus/root: expected the root of the registered artifacts, "
            f"{SEED['corpus']['root']}, got {'0' * 64}")):
        load_benchmark(path)


def test_changed_digest_changes_the_root(tmp_path: Path) -> None:
    doc = _edited(_set("/corpus/artifacts/3/blake3", "0" * 64))
    with pytest.raises(IntegrityError, match="/corpus/root"):
        load_benchmark(_write(tmp_path, doc))


def test_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=re.escape(": /: expected a JSON object, got an array")):
        load_benchmark(_write(tmp_path, []))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_benchmark(tmp_path / "none.json")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10)


@given(st.dictionaries(st.sampled_from(["schema", "spec", "corpus", "tasks", "x"]), _json))
def test_arbitrary_documents_fail_only_with_input_errors(doc: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        parse_benchmark(doc, path="b.json")


@given(st.integers(0, len(SEED["tasks"]) - 1), st.sampled_from(sorted(SEED["tasks"][0])),
       _json)
def test_mutated_task_fields_are_accepted_or_rejected_with_a_pointer(
        index: int, field: str, value: Any) -> None:
    doc = copy.deepcopy(SEED)
    doc["tasks"][index][field] = value
    try:
        benchmark = parse_benchmark(doc, path="b.json")
    except InputError as exc:
        # Every rejection names the task's JSON pointer (or the field under it).
        assert str(exc).startswith(f"b.json: /tasks/{index}"), str(exc)
        assert len(str(exc)) < 2100
    else:
        task = benchmark.tasks[index]
        assert task.task_id == doc["tasks"][index]["task_id"]
        assert getattr(task, field) is not None or field == "denied_artifacts"


def test_required_repetitions_and_budgets_are_bounded() -> None:
    doc = copy.deepcopy(SEED)
    doc["tasks"][0]["required_repetitions"] = 10**12
    with pytest.raises(InputError) as info:
        parse_benchmark(doc, path="b.json")
    assert str(info.value) == ("b.json: /tasks/0/required_repetitions: expected an integer in "
                               "[1, 10000], got the integer 1000000000000")
    doc["tasks"][0]["required_repetitions"] = 3
    doc["tasks"][0]["budget_ladder"] = [256, 2**64]
    with pytest.raises(InputError) as info:
        parse_benchmark(doc, path="b.json")
    assert str(info.value) == ("b.json: /tasks/0/budget_ladder/1: expected an integer in "
                               "[1, 9007199254740991], got the integer 18446744073709551616")
