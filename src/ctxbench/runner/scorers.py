"""Deterministic scorers: answer terms, exact match, token F1, evidence recall,
unsupported-claim rate and abstention detection. Scores are in [0, 1]; ECEB wants
thousandths (:func:`to_milli`).

Limits of the unsupported-claim rate (read before citing it): it is lexical. A sentence
counts as unsupported when fewer than half of its content words (lower-cased words of 3+
characters that are not stop words) occur in the context the model received. It cannot
see paraphrase, negation flips or wrong numbers built from context words, so it
under-counts fabrications phrased in the context's vocabulary and over-counts correct
answers phrased in other words. It is a consistent, blind measurement across conditions,
not a judgment of truth.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

from ctxbench.runner.prompt import ABSTAIN_TEXT

__all__ = [
    "SCORERS",
    "answer_terms_score",
    "evidence_recall",
    "exact_match",
    "is_abstention",
    "normalize_answer",
    "to_milli",
    "token_f1",
    "unsupported_claim_rate",
]

SCORERS = ("answer_terms", "exact_match", "token_f1")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*")
_STOP_WORDS = (
    "about above after again against all also and any are because been before being below "
    "between both but can cannot could did does doing down during each few for from further "
    "had has have having her here hers him his how into its itself just more most not now "
    "off once only other our ours out over own same she should some such than that the their "
    "theirs them then there these they this those through too under until very was were what "
    "when where which while who whom why will with would you your yours")
_STOP = frozenset(_STOP_WORDS.split())
_ABSTAIN = re.compile(
    r"(cannot|can't|can not|unable to) (answer|determine|find|tell)|"
    r"(not|no) (enough )?(information|mentioned|provided|stated|specified) |"
    r"does not (contain|say|mention|specify)|i don'?t know|insufficient (information|context)",
)


@functools.lru_cache(maxsize=256)
def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation and articles, squeeze spaces."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer."""
    norm = normalize_answer(prediction)
    return 1.0 if any(norm == normalize_answer(a) for a in answers) else 0.0


def _f1(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD token F1 against the best-matching gold answer (0.0 without gold answers)."""
    return max((_f1(prediction, a) for a in answers), default=0.0)


def answer_terms_score(answer: str, terms: Sequence[str]) -> float:
    """Share of required terms found case-insensitively in the answer (1.0 with none)."""
    if not terms:
        return 1.0
    lowered = answer.lower()
    return sum(1 for t in terms if t.lower() in lowered) / len(terms)


def is_abstention(answer: str) -> bool:
    """True when the answer declines to answer (the prompt's phrase or a common variant)."""
    lowered = " ".join(answer.lower().split())
    return ABSTAIN_TEXT.lower() in lowered or _ABSTAIN.search(lowered + " ") is not None


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP)


# Replicates share one context text; its word set is computed once, not once per trial.
_context_words = functools.lru_cache(maxsize=64)(_content_words)


def unsupported_claim_rate(answer: str, context: str) -> float:
    """Share of answer sentences whose content words are mostly absent from the context.

    Sentences without content words (and abstentions) make no claim; an answer with no
    claims scores 0.0. See the module docstring for what this cannot detect.
    """
    if is_abstention(answer):
        return 0.0
    available = _context_words(context)
    claims = 0
    unsupported = 0
    for sentence in _SENTENCE.split(answer):
        words = _content_words(sentence)
        if not words:
            continue
        claims += 1
        if len(words & available) * 2 < len(words):
            unsupported += 1
    return unsupported / claims if claims else 0.0


def evidence_recall(required: Iterable[str], present: Iterable[str]) -> float:
    """Share of required evidence items present (1.0 when nothing is required)."""
    needed = set(required)
    if not needed:
        return 1.0
    return len(needed & set(present)) / len(needed)


def to_milli(score: float) -> int:
    """A [0, 1] score in thousandths, rounded half up (ECEB's ``quality_milli``)."""
    return min(1000, max(0, int(score * 1000 + 0.5)))
