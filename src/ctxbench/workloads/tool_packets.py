"""Document strategies (``compiled``, ``entroly``, the truncation baselines) over tool schemas.

A task's schemas become a small corpus laid out as the BFCL registry lays them out
(:mod:`ctxbench.workloads.bfcl_registry`: one ``public`` ``api_spec`` artifact per schema,
its bytes the schema's canonical JSON), and the named strategy builds its packet from it
through the compiler, exactly as it does for documents. A schema is then sent when the
packet holds its whole text: a tool call needs the whole schema, so a schema the packet
cut (a truncation baseline ending inside it, an excerpt of a long schema) is not sent.
The schemas go in the packet's order; their tokens are recounted and must fit the budget
(the packet's headers only ever add tokens, so a packet within budget gives schemas
within budget; anything else is the strategy's ``over_budget`` failure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxbench.core import blake3_hex
from ctxbench.workloads.base import ToolTask
from ctxbench.workloads.bfcl_registry import REGISTRY_KIND, schema_artifact_id, schema_path
from ctxbench.workloads.tools import ToolSchema, ToolSelection

__all__ = ["SchemaCorpus"]


class SchemaCorpus:
    """One task's schemas as a compiler corpus, written under ``folder``, indexed once."""

    def __init__(self, task: ToolTask, folder: Path, tokenizer: Any) -> None:
        from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact

        self.task = task
        self.tokenizer = tokenizer
        artifacts = []
        self._schemas: dict[str, tuple[ToolSchema, int]] = {}
        for schema in task.schemas:
            artifact_id = schema_artifact_id(task, schema.name)
            path = schema_path(task, schema.name)
            data = schema.text.encode("utf-8")
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            artifacts.append(CorpusArtifact(artifact_id, path, REGISTRY_KIND, "public",
                                            blake3_hex(data)))
            self._schemas[artifact_id] = (schema, len(data))
        corpus = Corpus(folder, tuple(artifacts), f"bfcl:{task.task_id}")
        self.index = ContextIndex.build(corpus, tokenizer)

    def select(self, strategy: str, budget: int | None) -> ToolSelection:
        """The schemas ``strategy``'s packet holds whole, under ``budget`` tokens."""
        from ctxbench.compiler import Policy, compile_context
        from ctxbench.compiler.plugins import StrategyFailure
        from ctxbench.compiler.render import merge_ranges

        packet = compile_context(self.index, query=self.task.query, budget=budget,
                                 policy=Policy(("public",), ()), strategy=strategy)
        chosen: list[ToolSchema] = []
        for excerpt in packet.selected:
            schema, size = self._schemas[excerpt.artifact_id]
            if merge_ranges(excerpt.ranges) == ((0, size),) and schema not in chosen:
                chosen.append(schema)
        tokens = sum(self.tokenizer.count(s.text) for s in chosen)
        if budget is not None and tokens > budget:
            raise StrategyFailure(strategy, "over_budget",
                                  f"{tokens} schema tokens exceed the budget of {budget}")
        return ToolSelection(tuple(chosen), tokens)
