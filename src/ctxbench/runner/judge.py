"""An optional model judge with a frozen rubric: it sees the question, the reference and
the answer — never the condition name, the budget or the context.

The rubric text is fixed before the run; its BLAKE3 is recorded (manifest, scorer name,
ECEB judge identity). The judge replies with an integer 0-10; the score is that / 10. A
reply without such an integer, or a judge request that fails, scores 0.0 (the failure
score) and is counted in ``failures``; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxbench.core import blake3_hex
from ctxbench.runner.providers.base import Message, Provider, ProviderRequest, RequestFailed

__all__ = ["DEFAULT_RUBRIC", "Judge", "parse_grade"]

DEFAULT_RUBRIC = (
    "You grade one answer to one question. You are given the question, the reference "
    "(the correct answer or the facts a correct answer must state) and the answer. Judge "
    "only whether the answer is correct and complete with respect to the reference; "
    "ignore style and length. An answer that declines to answer is correct only when the "
    "reference says the question cannot be answered. Reply with a single integer from 0 "
    "(wrong) to 10 (fully correct) and nothing else."
)
_GRADE = re.compile(r"\b(10|[0-9])\b")


def parse_grade(reply: str) -> float | None:
    """The first integer 0-10 in the reply, as a score in [0, 1]; None when there is none."""
    match = _GRADE.search(reply)
    return int(match.group(1)) / 10 if match else None


@dataclass(slots=True)
class Judge:
    """A provider plus a frozen rubric; ``name`` goes into every trial's ``scorer``."""

    provider: Provider
    rubric: str = DEFAULT_RUBRIC
    max_output_tokens: int = 8
    failures: int = field(default=0)

    @property
    def rubric_blake3(self) -> str:
        return blake3_hex(self.rubric.encode("utf-8"))

    @property
    def name(self) -> str:
        return f"judge:{self.provider.name}/{self.provider.model}:{self.rubric_blake3[:12]}"

    def request(self, question: str, reference: Sequence[str], answer: str) -> ProviderRequest:
        """The judge's request: rubric, question, reference, answer — nothing else."""
        listed = "\n".join(f"- {r}" for r in reference) or "- (the question cannot be "\
            "answered from the available information)"
        return ProviderRequest(
            messages=(Message("system", self.rubric),
                      Message("user", f"Question: {question}\n\nReference:\n{listed}\n\n"
                                      f"Answer:\n{answer}\n\nGrade (0-10):")),
            max_output_tokens=self.max_output_tokens, temperature=0.0)

    async def score(self, question: str, reference: Sequence[str], answer: str) -> float:
        try:
            response = await self.provider.complete(self.request(question, reference, answer))
        except RequestFailed:
            self.failures += 1
            return 0.0
        grade = parse_grade(response.text)
        if grade is None:
            self.failures += 1
            return 0.0
        return grade
