"""A tiny Inspect AI task with two context conditions, run offline on ``mockllm/model``.

``full`` puts every fact in the system prompt; ``trimmed`` drops the filler and the last
fact. :func:`answering_model` is the mock model's output function: it answers from the
facts in its input and reports usage the way a caching provider does (the system prompt
is written to the cache the first time and read from it after), counted with ctxbench's
offline cl100k tokenizer. Inspect's own mock would count with o200k_base, which it
downloads, so the test supplies the usage instead.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage
from inspect_ai.scorer import Score, Target, accuracy, match, scorer
from inspect_ai.solver import TaskState, generate, system_message

from ctxbench.compiler.tokenizers import get_tokenizer

ITEMS = 6
REASONING = 4
FACT = re.compile(r"item (\d+) has code (K\d+)")


def code(i: int) -> str:
    return f"K{100 + 7 * i}"


def context(condition: str) -> str:
    kept = ITEMS if condition == "full" else ITEMS - 1
    facts = [f"item {i} has code {code(i)}." for i in range(kept)]
    filler = ["Background: the catalogue lists parts by item number."] * (
        30 if condition == "full" else 3)
    return "\n".join([*filler, *facts])


@scorer(metrics=[accuracy()])
def evidence_recall() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        system = state.messages[0].text
        return Score(value=1.0 if target.text in system else 0.0)
    return score


@scorer(metrics=[accuracy()])
def unsupported_claims() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        facts = {c for _, c in FACT.findall(state.messages[0].text)}
        return Score(value=0.0 if answer in facts or answer == "unknown" else 1.0)
    return score


@task
def catalogue(condition: str = "full") -> Task:
    return Task(
        dataset=[Sample(id=f"q{i}", input=f"What is the code of item {i}?", target=code(i))
                 for i in range(ITEMS)],
        solver=[system_message(context(condition)), generate()],
        scorer=[match(), evidence_recall(), unsupported_claims()],
    )


def answering_model() -> Any:
    counter = get_tokenizer("cl100k_base")
    cached: set[str] = set()

    def output(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        system = messages[0].text
        question = messages[-1].text
        wanted = re.search(r"item (\d+)", question)
        facts = dict(FACT.findall(system))
        answer = facts.get(wanted.group(1), "unknown") if wanted else "unknown"
        prompt = sum(counter.count(m.text) for m in messages)
        prefix = counter.count(system)
        read = prefix if system in cached else 0
        write = 0 if system in cached else prefix
        cached.add(system)
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        out.usage = ModelUsage(
            input_tokens=prompt - read - write, input_tokens_cache_read=read,
            input_tokens_cache_write=write, reasoning_tokens=REASONING,
            output_tokens=counter.count(answer) + REASONING,
            total_tokens=prompt + counter.count(answer) + REASONING)
        return out

    return output
