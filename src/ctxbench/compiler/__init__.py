"""ctxbench.compiler: policy filter -> retrieval -> budgeted selection -> rendering -> commit.

    from ctxbench.compiler import (ContextIndex, Corpus, Policy, compile_context,
                                   get_tokenizer, verify_commit)

    index = ContextIndex.build(Corpus.from_directory("docs/"), get_tokenizer("cl100k_base"))
    packet = compile_context(index, query="how do I rotate the signing key?", budget=800,
                             policy=Policy(("internal",)), strategy="compiled")
    verify_commit(packet.commit, "docs/")

Names are imported from their modules on first use: importing one module of the
package (as ``ctxbench compile`` does) does not import every other.
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.compiler.commit import COMMIT_SCHEMA, build_commit, commit_id, verify_commit
    from ctxbench.compiler.corpus import Corpus, CorpusArtifact
    from ctxbench.compiler.external import (
        ExternalStrategy,
        compile_external,
        load_external_strategy,
    )
    from ctxbench.compiler.index import ContextIndex, IndexStats
    from ctxbench.compiler.policy import Policy
    from ctxbench.compiler.render import RENDER_TEMPLATE, Excerpt
    from ctxbench.compiler.strategies import STRATEGIES, CompiledContext, compile_context
    from ctxbench.compiler.tokenizers import DEFAULT_TOKENIZER, Tokenizer, get_tokenizer

__all__ = [
    "COMMIT_SCHEMA",
    "DEFAULT_TOKENIZER",
    "RENDER_TEMPLATE",
    "STRATEGIES",
    "CompiledContext",
    "ContextIndex",
    "Corpus",
    "CorpusArtifact",
    "Excerpt",
    "ExternalStrategy",
    "IndexStats",
    "Policy",
    "Tokenizer",
    "build_commit",
    "commit_id",
    "compile_context",
    "compile_external",
    "get_tokenizer",
    "load_external_strategy",
    "verify_commit",
]

_WHERE = {
    "COMMIT_SCHEMA": "ctxbench.compiler.commit",
    "DEFAULT_TOKENIZER": "ctxbench.compiler.tokenizers",
    "RENDER_TEMPLATE": "ctxbench.compiler.render",
    "STRATEGIES": "ctxbench.compiler.strategies",
    "CompiledContext": "ctxbench.compiler.strategies",
    "ContextIndex": "ctxbench.compiler.index",
    "Corpus": "ctxbench.compiler.corpus",
    "CorpusArtifact": "ctxbench.compiler.corpus",
    "Excerpt": "ctxbench.compiler.render",
    "ExternalStrategy": "ctxbench.compiler.external",
    "IndexStats": "ctxbench.compiler.index",
    "Policy": "ctxbench.compiler.policy",
    "Tokenizer": "ctxbench.compiler.tokenizers",
    "build_commit": "ctxbench.compiler.commit",
    "commit_id": "ctxbench.compiler.commit",
    "compile_context": "ctxbench.compiler.strategies",
    "compile_external": "ctxbench.compiler.external",
    "get_tokenizer": "ctxbench.compiler.tokenizers",
    "load_external_strategy": "ctxbench.compiler.external",
    "verify_commit": "ctxbench.compiler.commit",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
