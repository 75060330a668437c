"""Context commits: a publishable, content-addressed record of exactly what a packet held.

The commit id is ``ctx_`` + the first 32 hex digits of BLAKE3 over the RFC 8785 JSON of

    {schema, query_blake3, budget, tokenizer, policy_blake3,
     excerpts: [{artifact_id, source_blake3, ranges}], rendered_blake3}

The compiler's version is stored beside the id (``compiler``), not inside it, so identical
context has an identical id across releases. A commit holds ids, digests and byte ranges,
never source text. :func:`verify_commit` re-reads the corpus, re-renders the packet and
checks every digest, the policy and the budget; anything it cannot check is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxbench import __version__
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import (
    RENDER_TEMPLATES,
    Excerpt,
    merge_ranges,
    packet_blake3,
    render_excerpt,
)
from ctxbench.compiler.tokenizers import Tokenizer, get_tokenizer
from ctxbench.core import CtxbenchError, IntegrityError, blake3_hex, blake3_json
from ctxbench.protocols.eceb.paths import resolve_in_corpus

__all__ = ["COMMIT_SCHEMA", "EXTERNAL_TEMPLATE", "build_commit", "commit_id", "verify_commit"]

COMMIT_SCHEMA = "ctxbench.context-commit.v1"
EXTERNAL_TEMPLATE = "external"


def commit_id(commit: dict[str, Any]) -> str:
    """The id a commit document's identity fields hash to."""
    identity = {
        "schema": COMMIT_SCHEMA,
        "query_blake3": commit["query_blake3"],
        "budget": commit["budget"],
        "tokenizer": commit["tokenizer"],
        "policy_blake3": commit["policy_blake3"],
        "excerpts": [
            {"artifact_id": e["artifact_id"], "source_blake3": e["source_blake3"],
             "ranges": e["ranges"]}
            for e in commit["excerpts"]
        ],
        "rendered_blake3": commit["rendered_blake3"],
    }
    return "ctx_" + blake3_json(identity)[:32]


def build_commit(
    *,
    query: str,
    budget: int | None,
    tokenizer_id: str,
    token_count: int,
    policy: Policy,
    strategy: str,
    template: str,
    excerpts: Sequence[Excerpt],
    rendered_blake3: str,
    empty_reason: str | None,
) -> dict[str, Any]:
    """The ``ctxbench.context-commit.v1`` document, with its ``commit_id`` filled in."""
    commit: dict[str, Any] = {
        "schema_version": COMMIT_SCHEMA,
        "commit_id": "",
        "query": query,
        "query_blake3": blake3_hex(query.encode("utf-8")),
        "budget": budget,
        "tokenizer": tokenizer_id,
        "token_count": token_count,
        "token_count_source": "local",
        "policy": policy.to_json(),
        "policy_blake3": policy.digest(),
        "strategy": strategy,
        "template": template,
        "excerpts": [e.to_json() for e in excerpts],
        "rendered_blake3": rendered_blake3,
        "empty_reason": empty_reason,
        "compiler": {"name": "ctxbench", "version": __version__},
    }
    commit["commit_id"] = commit_id(commit)
    return commit


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise IntegrityError(f"context commit: {message}")


def _structure(commit: Any) -> None:
    from ctxbench.schemas import validator

    errors = sorted(validator(COMMIT_SCHEMA).iter_errors(commit), key=lambda e: list(e.path))
    if errors:
        where = "/" + "/".join(str(p) for p in errors[0].path)
        raise IntegrityError(f"context commit: {where}: {errors[0].message}")


def verify_commit(
    commit: dict[str, Any],
    corpus_dir: str | os.PathLike[str],
    *,
    tokenizer: Tokenizer | None = None,
    context_text: str | None = None,
) -> None:
    """Re-render the packet from ``corpus_dir`` and check every digest; IntegrityError if not.

    ``tokenizer`` overrides the lookup of the commit's tokenizer id (it must have the same
    id); ``context_text`` is required for commits of external systems, whose packet text
    ctxbench did not render.
    """
    try:
        _verify(commit, Path(corpus_dir), tokenizer, context_text)
    except IntegrityError:
        raise
    except (CtxbenchError, OSError, ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(f"context commit: cannot be verified: {exc}") from exc


def _verify(
    commit: dict[str, Any], corpus: Path, tokenizer: Tokenizer | None, context: str | None
) -> None:
    _structure(commit)
    _check(blake3_hex(commit["query"].encode("utf-8")) == commit["query_blake3"],
           "query_blake3 does not match the query")
    policy = Policy.from_json(commit["policy"], where="context commit: policy")
    _check(policy.digest() == commit["policy_blake3"], "policy_blake3 does not match the policy")
    expected = commit_id(commit)
    _check(expected == commit["commit_id"],
           f"commit_id {commit['commit_id']} does not match its content ({expected})")
    parts: list[str] = []
    for n, item in enumerate(commit["excerpts"]):
        where = f"excerpt {n} ({item['artifact_id']})"
        _check(policy.permits(item["artifact_id"], item["classification"]),
               f"{where}: not permitted by the commit's policy")
        ranges = tuple((int(a), int(b)) for a, b in item["ranges"])
        _check(all(a < b for a, b in ranges) and merge_ranges(ranges) == ranges,
               f"{where}: byte ranges must be sorted, non-empty and non-overlapping")
        data = resolve_in_corpus(corpus, item["path"]).read_bytes()
        _check(blake3_hex(data) == item["source_blake3"],
               f"{where}: {item['path']} does not match source_blake3 (the source changed)")
        _check(ranges[-1][1] <= len(data), f"{where}: byte range beyond the end of the file")
        excerpt = Excerpt(item["artifact_id"], item["path"], item["classification"],
                          item["source_blake3"], ranges)
        if commit["template"] in RENDER_TEMPLATES:
            parts.append(render_excerpt(excerpt, data, commit["template"]))
    if commit["template"] in RENDER_TEMPLATES:
        text = "".join(parts)
    else:
        _check(context is not None,
               "an external system's packet cannot be re-rendered; supply its context text")
        assert context is not None
        text = context
    _check(packet_blake3(text) == commit["rendered_blake3"],
           "the re-rendered packet does not match rendered_blake3")
    counter = tokenizer or get_tokenizer(commit["tokenizer"])
    _check(counter.id == commit["tokenizer"],
           f"tokenizer {counter.id} is not the commit's tokenizer {commit['tokenizer']}")
    count = counter.count(text)
    _check(count == commit["token_count"],
           f"token_count {commit['token_count']} does not match the recount ({count})")
    budget = commit["budget"]
    _check(budget is None or count <= budget, f"{count} tokens exceed the budget {budget}")
