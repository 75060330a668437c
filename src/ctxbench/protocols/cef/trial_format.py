"""The ``ctxbench.trial.v1`` line described once: its members, in the order they are written.

:data:`TRIAL_FIELDS` is the one field table of the format. The runner's writer
(``ctxbench.runner.record.TrialRecord.to_json``) writes exactly these members in this
order, the reader (:class:`ctxbench.protocols.cef.records.Trial`) has exactly these
attributes, the validator (:mod:`ctxbench.protocols.cef.rules`) has one rule per member
and the shipped JSON Schema exactly these properties (tests/protocols/cef/
test_trial_format.py holds all four to the table).

Five members make the trial log the run's whole record, so that no report rebuilds a
context after the trials and a drill-down needs no workload file (:data:`RECORD_MEMBERS`):

* ``selected_artifacts``: the artifacts the packet holds, in packet order, each with the
  BLAKE3 of its source (``[]`` when the strategy gave no packet);
* ``rendered_blake3``: the BLAKE3 of the rendered packet, the digest its context commit
  records;
* ``scorer_details``: what the scorer computed beyond the score (its method, the answer
  terms or gold answers it matched, the evidence required and the evidence found);
* ``query``: the task's question as the model received it (the user's question, never
  corpus text);
* ``expected``: what the scorer held the answer to, ``{answers, answer_terms,
  abstention}`` (the gold answers, the answer terms, whether an abstention is expected).

They are optional when reading, so logs written before them still analyze under CEF; a
report that needs one of them (ECEB's run file) refuses such a log with
:func:`predates_error`, located at the line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ctxbench.core.digests import HEX64
from ctxbench.core.errors import FieldError
from ctxbench.core.ruletable import Rule, constant, pattern_rule, string_rule

__all__ = [
    "OPTIONAL_FIELDS",
    "RECORD_MEMBERS",
    "RECORD_RULES",
    "REQUIRED_FIELDS",
    "TRIAL_FIELDS",
    "Expected",
    "SelectedArtifact",
    "TrialLogPredates",
    "expected_ok",
    "predates_error",
    "scorer_details_ok",
    "selected_artifacts_ok",
]

REQUIRED_FIELDS = (
    "schema_version", "workload", "workload_version", "task_id", "provider", "model",
    "scorer", "provider_request_id", "usage_source", "cost_source", "cost_source_reference",
    "outcome", "error_type", "context_sha256", "response_text", "response_sha256",
    "replicate", "condition", "task_score", "evidence_recall", "unsupported_claim_rate",
    "context_tokens", "reasoning_tokens", "output_tokens", "billed_cost_usd", "latency_ms",
    "context_commit_id",
)
RECORD_MEMBERS = ("selected_artifacts", "rendered_blake3", "scorer_details", "query",
                  "expected")
OPTIONAL_FIELDS = (
    "cached_input_tokens", "cache_write_tokens", "provider_usage", "compile_ms", "strategy",
    "budget", "condition_order", "run_id", "attempts", *RECORD_MEMBERS,
)
#: Every member of a ``ctxbench.trial.v1`` line, in the order the runner writes them.
TRIAL_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS


@dataclass(frozen=True, slots=True)
class SelectedArtifact:
    """One artifact of a packet: its id and the BLAKE3 of its source bytes."""

    artifact_id: str
    blake3: str

    def as_dict(self) -> dict[str, str]:
        return {"artifact_id": self.artifact_id, "blake3": self.blake3}


@dataclass(frozen=True, slots=True)
class Expected:
    """What the scorer holds an answer to: gold answers, answer terms, abstention."""

    answers: tuple[str, ...]
    answer_terms: tuple[str, ...]
    abstention: bool

    def as_dict(self) -> dict[str, list[str] | bool]:
        return {"answers": list(self.answers), "answer_terms": list(self.answer_terms),
                "abstention": self.abstention}


_SELECTED_KEYS = frozenset(("artifact_id", "blake3"))


def selected_artifacts_ok(value: Any) -> bool:
    """True for a list of ``{artifact_id: non-blank string, blake3: 64 hex}`` objects."""
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not dict or item.keys() != _SELECTED_KEYS:
            return False
        name, digest = item["artifact_id"], item["blake3"]
        if type(name) is not str or not name.strip() or type(digest) is not str or \
                HEX64.fullmatch(digest) is None:
            return False
    return True


def scorer_details_ok(value: Any) -> bool:
    """True for an object whose every value is a string or an array of strings."""
    if type(value) is not dict:
        return False
    for item in value.values():
        if type(item) is str:
            continue
        if type(item) is not list or any(type(x) is not str for x in item):
            return False
    return True


_EXPECTED_KEYS = frozenset(("answers", "answer_terms", "abstention"))


def expected_ok(value: Any) -> bool:
    """True for ``{answers: [string], answer_terms: [string], abstention: boolean}``."""
    if type(value) is not dict or value.keys() != _EXPECTED_KEYS:
        return False
    lists = (value["answers"], value["answer_terms"])
    return type(value["abstention"]) is bool and all(
        type(items) is list and all(type(x) is str for x in items) for items in lists)


#: The rules of :data:`RECORD_MEMBERS`, in that order (part of ``ctxbench.trial.v1``).
RECORD_RULES: tuple[Rule, ...] = (
    Rule("selected_artifacts", "array",
         "an array of {artifact_id, blake3} objects (a non-blank id, 64 lowercase hex "
         "digits), in packet order",
         f"{constant(selected_artifacts_ok)}(v)", required=False),
    replace(pattern_rule("rendered_blake3", HEX64, "64 lowercase hex digits"),
            required=False),
    Rule("scorer_details", "object",
         "a JSON object whose values are strings or arrays of strings",
         f"{constant(scorer_details_ok)}(v)", required=False),
    string_rule("query", nonblank=False, required=False),
    Rule("expected", "object",
         "an object {answers: array of strings, answer_terms: array of strings, "
         "abstention: boolean}", f"{constant(expected_ok)}(v)", required=False),
)


class TrialLogPredates(FieldError):
    """A trial line written before a member that a report is written from existed
    (resuming the run cannot add it: the run must be made again)."""


def predates_error(path: str, line: int, member: str, what: str) -> TrialLogPredates:
    """The located error for a trial written before ``member`` existed.

    ``what`` says what needs the member (``the ECEB run file``).
    """
    return TrialLogPredates(
        path, line, member, f"the {member} member, which {what} is written from",
        got_text=("nothing: this trial log predates the member (written by an older "
                  "ctxbench); run the experiment again into a new output directory to "
                  "record it"))
