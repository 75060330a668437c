"""Document strategies over a task's schemas: only whole schemas are sent, within budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.compiler import get_tokenizer
from ctxbench.workloads import load_bfcl
from ctxbench.workloads.tool_packets import SchemaCorpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> SchemaCorpus:
    # live_multiple_10-4-2 offers five schemas (1,156 SmolLM2 tokens in all).
    task = next(t for t in load_bfcl("live_multiple", offset=10, limit=1).tasks)
    assert task.task_id == "live_multiple_10-4-2" and len(task.schemas) == 5
    return SchemaCorpus(task, Path(tmp_path_factory.mktemp("schemas")),
                        get_tokenizer("cl100k_base"))


@pytest.mark.parametrize("strategy", ["compiled", "naive_top_k", "truncate-tail",
                                      "truncate-head", "middle-out", "chunk-bm25",
                                      "entroly"])
@pytest.mark.parametrize("budget", [150, 400, 900])
def test_whole_schemas_within_budget(corpus: SchemaCorpus, strategy: str,
                                     budget: int) -> None:
    tokenizer = corpus.tokenizer
    selection = corpus.select(strategy, budget)
    offered = list(corpus.task.schemas)
    assert all(s in offered for s in selection.schemas)
    assert len({s.name for s in selection.schemas}) == len(selection.schemas)
    assert selection.token_count == sum(tokenizer.count(s.text) for s in selection.schemas)
    assert selection.token_count <= budget


def test_full_context_sends_every_schema_and_compiled_finds_the_needed_one(
        corpus: SchemaCorpus) -> None:
    full = corpus.select("full_permitted_context", None)
    assert sorted(s.name for s in full.schemas) == sorted(s.name for s in corpus.task.schemas)
    needed = set(corpus.task.expected_functions)
    compiled = corpus.select("compiled", 600)
    assert needed <= {s.name for s in compiled.schemas}
    assert len(compiled.schemas) < len(full.schemas)


def test_a_cut_schema_is_not_sent(corpus: SchemaCorpus) -> None:
    tokenizer = corpus.tokenizer
    ordered = sorted(corpus.task.schemas, key=lambda s: s.name)  # artifact-id order
    first = tokenizer.count(ordered[0].text)
    # truncate-tail keeps the start of the full context: a budget a little under the
    # first schema's own size cuts it, so nothing whole is left to send.
    assert corpus.select("truncate-tail", first - 5).schemas == ()
    kept = corpus.select("truncate-tail", first + tokenizer.count(ordered[1].text) + 60)
    assert [s.name for s in kept.schemas][:1] == [ordered[0].name]
