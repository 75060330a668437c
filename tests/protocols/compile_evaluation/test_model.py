"""The typed ``ctxbench.compile-evaluation.v1`` report: round trip, schema agreement,
located read errors, and the table rendered from the model alone."""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import replace
from typing import Any

import pytest

from ctxbench.compiler.evaluation import evaluate, render_evaluation
from ctxbench.core import PointerError
from ctxbench.core.node import Node
from ctxbench.protocols.compile_evaluation.model import (
    EVALUATION_SCHEMA,
    EvaluationReport,
    SummaryRow,
)
from ctxbench.protocols.eceb import load_benchmark, seed_paths
from ctxbench.schemas import load_schema, validator
from model_schema import agree_object

SCHEMA = load_schema(EVALUATION_SCHEMA)


@functools.cache
def _report() -> EvaluationReport:
    paths = seed_paths()
    return evaluate(paths.benchmark, paths.corpus,
                    strategies=("compiled", "naive_top_k", "full_permitted_context",
                                "langchain-bm25"))


def _read(doc: Any) -> EvaluationReport:
    return EvaluationReport.from_json(Node("eval.json", "", doc))


def test_round_trip_and_schema_validation() -> None:
    report = _report()
    doc = report.to_json()
    assert list(doc) == ["schema_version", "benchmark_id", "tokenizer", "strategies",
                         "budgets", "summary", "rows"]
    assert not list(validator(EVALUATION_SCHEMA).iter_errors(doc))
    again = _read(json.loads(json.dumps(doc)))
    assert again.to_json() == doc
    assert _read(again.to_json()) == again
    ladders = sum(len(t.budget_ladder) for t in load_benchmark(seed_paths().benchmark).tasks)
    assert len(report.rows) == ladders * 4  # every task, ladder rung and strategy
    # floats are rounded when written, never in the model
    assert all(isinstance(r["latency_ms"], float) and r["latency_ms"] == round(r["latency_ms"], 3)
               for r in doc["rows"])


def test_model_and_schema_describe_the_same_members() -> None:
    agree_object(EvaluationReport, SCHEMA, SCHEMA, "")
    assert SCHEMA["properties"]["schema_version"]["const"] == EvaluationReport.VERSION
    drifted = copy.deepcopy(SCHEMA)
    drifted["properties"]["summary"]["items"]["required"].remove("latency_ms_p99")
    with pytest.raises(AssertionError):
        agree_object(EvaluationReport, drifted, drifted, "")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["rows"][5].pop("tokens"), "eval.json: /rows/5/tokens: required field is missing"),
    (lambda d: d["summary"][0].__setitem__("mean_tokens", "12"),
     'eval.json: /summary/0/mean_tokens: expected a number, got the string "12"'),
    (lambda d: d["rows"][0].__setitem__("answer_present", 1),
     "eval.json: /rows/0/answer_present: expected a boolean, got the integer 1"),
    (lambda d: d.__setitem__("schema_version", "ctxbench.compile-evaluation.v2"),
     'eval.json: /schema_version: expected "ctxbench.compile-evaluation.v1", '
     'got the string "ctxbench.compile-evaluation.v2"'),
    (lambda d: d["summary"][1].__setitem__("latency_ms_p90", 1.5),
     "eval.json: /summary/1/latency_ms_p90: expected no such member"),
])
def test_a_bad_member_is_named_by_its_pointer(edit: Any, message: str) -> None:
    doc = json.loads(json.dumps(_report().to_json()))
    edit(doc)
    with pytest.raises(PointerError) as caught:
        _read(doc)
    assert str(caught.value).startswith(message)


def test_the_table_is_read_from_the_summary() -> None:
    report = _report()
    first = report.summary[0]
    assert isinstance(first, SummaryRow) and first.strategy == "compiled"
    shown = replace(report, summary=(replace(first, answer_present=7, tasks=9,
                                             answer_present_rate=0.25),))
    table = render_evaluation(shown)
    assert table.count("\n| ") == 2  # the header and the one summary row
    assert f"| compiled | {first.budget} | 7/9 (25%) |" in table
