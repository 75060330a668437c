"""One field table, TRIAL_FIELDS, is what the writer writes, the reader reads, the
validator checks and the schema lists."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from ctxbench.core import TokenUsage
from ctxbench.core.errors import FieldError
from ctxbench.protocols.cef.records import Expected, SelectedArtifact, Trial, parse_trial
from ctxbench.protocols.cef.rules import CTXBENCH_SCHEMA, FIELD_RULES
from ctxbench.protocols.cef.trial_format import (
    OPTIONAL_FIELDS,
    RECORD_MEMBERS,
    REQUIRED_FIELDS,
    TRIAL_FIELDS,
)
from ctxbench.runner.record import CostSource, ProviderAttempt, TrialIdentity, build_trial
from ctxbench.schemas import load_schema

IDENT = TrialIdentity("run-1", "w", "v1", "fixture", "m", "answer_terms",
                      "deterministic_fixture")


def _line() -> dict[str, object]:
    attempt = ProviderAttempt(1, "success", None, 200, TokenUsage(uncached_input=50,
                              output=3), 0, 0, 2.5, None, None)
    record = build_trial(
        ident=IDENT, task_id="t1", condition="compiled@200", strategy="compiled",
        budget=200, replicate=0, condition_order=1, context_sha256="a" * 64,
        context_commit_id="ctx_" + "b" * 32, compile_ms=1.0, attempts=[attempt],
        answer="Alice", task_score=1.0, evidence_recall=0.5, unsupported_claim_rate=0.0,
        cost=CostSource("zero_cost_fixture", "fixture"),
        selected_artifacts=(("policy/keys.md", "c" * 64), ("runbook.md", "d" * 64)),
        rendered_blake3="e" * 64,
        scorer_details={"method": "answer_terms", "matched": ["alice"],
                        "evidence_required": ["policy/keys.md", "hr.md"],
                        "evidence_found": ["policy/keys.md"]},
        query="Who holds the staging keys?",
        expected=Expected(("Alice",), ("alice",), False))
    line: dict[str, object] = json.loads(json.dumps(record.to_json()))
    return line


def test_writer_reader_validator_and_schema_follow_the_one_table() -> None:
    line = _line()
    assert tuple(line) == TRIAL_FIELDS
    assert [f.name for f in fields(Trial)] == [*TRIAL_FIELDS, "path", "line"]
    rules = [r.name for r in FIELD_RULES[CTXBENCH_SCHEMA]]
    assert len(rules) == len(set(rules)) == len(TRIAL_FIELDS) - 1
    assert {r.name for r in FIELD_RULES[CTXBENCH_SCHEMA]} | {"schema_version"} == set(
        TRIAL_FIELDS)
    schema = load_schema(CTXBENCH_SCHEMA)
    assert list(schema["properties"]) == list(TRIAL_FIELDS)
    assert tuple(schema["required"]) == REQUIRED_FIELDS
    assert set(RECORD_MEMBERS) <= set(OPTIONAL_FIELDS)


def test_the_reader_gives_the_packet_and_scorer_details_back() -> None:
    trial = parse_trial(_line(), path="trials.jsonl", line=3)
    assert trial.selected_artifacts == (SelectedArtifact("policy/keys.md", "c" * 64),
                                        SelectedArtifact("runbook.md", "d" * 64))
    assert trial.packet("the ECEB run file") == (trial.selected_artifacts, "e" * 64)
    assert trial.scorer_details == {"method": "answer_terms", "matched": ["alice"],
                                    "evidence_required": ["policy/keys.md", "hr.md"],
                                    "evidence_found": ["policy/keys.md"]}


def test_the_query_and_the_expected_answer_are_written_and_read_back() -> None:
    line = _line()
    assert line["query"] == "Who holds the staging keys?"
    assert line["expected"] == {"answers": ["Alice"], "answer_terms": ["alice"],
                                "abstention": False}
    trial = parse_trial(line, path="trials.jsonl", line=3)
    assert trial.query == "Who holds the staging keys?"
    assert trial.expected == Expected(("Alice",), ("alice",), False)
    old = parse_trial({k: v for k, v in line.items() if k not in ("query", "expected")},
                      path="trials.jsonl", line=4)
    assert old.query is None and old.expected is None


def test_a_line_that_predates_the_members_reads_but_cannot_give_its_packet() -> None:
    line = {k: v for k, v in _line().items() if k not in RECORD_MEMBERS}
    trial = parse_trial(line, path="trials.jsonl", line=7)
    assert trial.selected_artifacts is None and trial.scorer_details is None
    with pytest.raises(FieldError, match=(
            r"^trials\.jsonl:7: selected_artifacts: expected the selected_artifacts member, "
            r"which the ECEB run file is written from, got nothing: this trial log predates "
            r"the member \(written by an older ctxbench\); run the experiment again into a "
            r"new output directory to record it$")):
        trial.packet("the ECEB run file")


@pytest.mark.parametrize(("member", "value", "expected"), [
    ("selected_artifacts", [{"artifact_id": "a", "blake3": "x"}],
     "an array of {artifact_id, blake3} objects"),
    ("selected_artifacts", [{"artifact_id": " ", "blake3": "c" * 64}],
     "an array of {artifact_id, blake3} objects"),
    ("rendered_blake3", "E" * 64, "64 lowercase hex digits"),
    ("scorer_details", {"matched": [1]}, "a JSON object whose values are strings or arrays"),
    ("query", ["Who?"], "a string"),
    ("expected", {"answers": [], "answer_terms": []}, "an object {answers: array of strings"),
    ("expected", {"answers": "Alice", "answer_terms": [], "abstention": False},
     "an object {answers: array of strings"),
    ("expected", {"answers": [], "answer_terms": [], "abstention": "false"},
     "an object {answers: array of strings"),
])
def test_a_bad_record_member_is_a_located_error(member: str, value: object,
                                                expected: str) -> None:
    line = {**_line(), member: value}
    with pytest.raises(FieldError, match=rf"^trials\.jsonl:2: {member}: expected "
                       + expected.replace("{", r"\{").replace("}", r"\}")):
        parse_trial(line, path="trials.jsonl", line=2)
