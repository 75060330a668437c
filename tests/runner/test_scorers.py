"""Scorers: SQuAD normalisation, EM/F1, answer terms, abstention, unsupported claims."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.runner import scorers


def test_squad_normalisation() -> None:
    assert scorers.normalize_answer("The  Cat's, a HAT!") == "cats hat"


def test_exact_match_and_f1() -> None:
    assert scorers.exact_match("the Eiffel Tower.", ["Eiffel Tower"]) == 1.0
    assert scorers.exact_match("Eiffel", ["Eiffel Tower"]) == 0.0
    # pred "eiffel tower paris" vs gold "eiffel tower": P = 2/3, R = 1, F1 = 0.8
    assert scorers.token_f1("Eiffel Tower, Paris", ["Eiffel Tower", "Paris France"]) == \
        pytest.approx(0.8)
    assert scorers.token_f1("nothing", []) == 0.0


def test_answer_terms() -> None:
    assert scorers.answer_terms_score("Fail over to EU-WEST-1 now", ["eu-west-1", "drain"]) == 0.5
    assert scorers.answer_terms_score("anything", []) == 1.0


@pytest.mark.parametrize(("answer", "expected"), [
    ("I cannot answer from the provided context.", True),
    ("The context does not contain that information.", True),
    ("I don't know.", True),
    ("There is not enough information provided to say.", True),
    ("The port is 8443.", False),
])
def test_abstention(answer: str, expected: bool) -> None:
    assert scorers.is_abstention(answer) is expected


def test_unsupported_claim_rate() -> None:
    context = "The gateway listens on port 8443. Metrics are served on port 9100."
    assert scorers.unsupported_claim_rate("The gateway listens on port 8443.", context) == 0.0
    answer = "The gateway listens on port 8443. Kubernetes autoscaling triggers nightly."
    assert scorers.unsupported_claim_rate(answer, context) == 0.5
    assert scorers.unsupported_claim_rate("I cannot answer from the provided context.", "") == 0
    assert scorers.unsupported_claim_rate("", context) == 0.0


def test_evidence_recall_and_milli() -> None:
    assert scorers.evidence_recall(["a", "b"], ["b", "c"]) == 0.5
    assert scorers.evidence_recall([], []) == 1.0
    assert scorers.to_milli(0.6666) == 667 and scorers.to_milli(1.0) == 1000


@given(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=3))
def test_scores_are_bounded(prediction: str, answers: list[str]) -> None:
    for value in (scorers.exact_match(prediction, answers), scorers.token_f1(prediction, answers),
                  scorers.unsupported_claim_rate(prediction, " ".join(answers)),
                  scorers.answer_terms_score(prediction, answers)):
        assert 0.0 <= value <= 1.0
