"""Context commits: a publishable, content-addressed record of exactly what a packet held.

The commit id is ``ctx_`` + the first 32 hex digits of BLAKE3 over the RFC 8785 JSON of

    {schema, query_blake3, budget, tokenizer, policy_blake3,
     excerpts: [{artifact_id, source_blake3, ranges}], rendered_blake3}

The compiler's version is stored beside the id (``compiler``), not inside it, so identical
context has an identical id across releases. A commit holds ids, digests and byte ranges,
never source text (a template-v5 excerpt also records the ``label`` its header names it
by). :func:`verify_commit` re-reads the corpus, re-renders the packet and checks every
digest, each label (a whole-component suffix of its path, unique among the corpus
directory's files), the policy and the budget; an external system's context is checked
byte for byte to be made of its selected ranges plus framing
(:func:`external_context_problem`); anything it cannot check is a failure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxbench import __version__
from ctxbench.compiler.labels import Labeler, corpus_names, label_problem
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import (
    GAP_MARKER,
    RENDER_TEMPLATE,
    RENDER_TEMPLATES,
    Excerpt,
    excerpt_header,
    merge_ranges,
    packet_blake3,
    render_excerpt,
)
from ctxbench.compiler.tokenizers import Tokenizer, reference_tokenizer
from ctxbench.core import CtxbenchError, IntegrityError, blake3_hex, blake3_json
from ctxbench.protocols.eceb.files import read_regular_file
from ctxbench.protocols.eceb.paths import resolve_in_corpus

__all__ = [
    "COMMIT_SCHEMA",
    "EXTERNAL_TEMPLATE",
    "build_commit",
    "commit_id",
    "external_context_problem",
    "verify_commit",
]

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


_FRAMING_SPACE = frozenset(" \t\r\n")


def _range_lines(data: bytes, a: int, b: int) -> list[str]:
    """The lines of ``data[a:b]`` (each with its newline; the file's last may lack one)."""
    lines = data[a:b].split(b"\n")
    out = [line.decode("utf-8", "replace") + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1].decode("utf-8", "replace"))
    return out


def external_context_problem(
    context: str, excerpts: Sequence[tuple[Excerpt, bytes]]
) -> str | None:
    """Why an external system's ``context`` is not made of its selected bytes, or None.

    Rule ``ctxbench.external-framing.v1``:

    - every selected byte range is line-aligned: it starts at the start of the file or
      after a newline, and ends after a newline or at the end of the file (the
      candidates ctxbench offers always are);
    - the context is a sequence of whole lines of the selected ranges (any order, any
      line any number of times; a line's text is its bytes decoded as UTF-8, invalid
      sequences as U+FFFD, as the candidates were offered; the context's last line may
      drop its newline) and framing: ASCII whitespace, the gap marker line ``[...]`` and
      the ctxbench excerpt header line of a selected excerpt;
    - every line of every selected range appears in it (the selection is what was sent).

    So restricted text under a permitted selection, a paraphrase or a fragment of a line
    is refused: whole lines cannot be cut up and re-joined into text no permitted line
    holds. The message names offsets only, never the offending text.
    """
    whole: set[str] = set()
    tails: set[str] = set()  # a file's last line without a newline
    for excerpt, data in excerpts:
        for a, b in excerpt.ranges:
            if (a and data[a - 1] != 0x0A) or (b < len(data) and data[b - 1] != 0x0A):
                return (f"excerpt {excerpt.artifact_id}: byte range {a}-{b} does not start "
                        f"and end at line boundaries")
            for line in _range_lines(data, a, b):
                (whole if line.endswith("\n") else tails).add(line)
    headers = tuple(excerpt_header(excerpt, template) for excerpt, _ in excerpts
                    for template in RENDER_TEMPLATES)
    tails_longest = sorted(tails, key=len, reverse=True)
    seen: set[str] = set()
    i, size = 0, len(context)
    while i < size:
        newline = context.find("\n", i)
        line = context[i:] if newline < 0 else context[i:newline + 1]
        if line in whole:
            seen.add(line)
            i += len(line)
            continue
        if newline < 0 and line + "\n" in whole:  # the last line, its newline dropped
            seen.add(line + "\n")
            break
        tail = next((t for t in tails_longest if context.startswith(t, i)), None)
        if tail is not None:
            seen.add(tail)
            i += len(tail)
        elif context[i] in _FRAMING_SPACE:
            i += 1
        elif context.startswith(GAP_MARKER, i):
            i += len(GAP_MARKER)
        else:
            header = next((h for h in headers if context.startswith(h, i)), None)
            if header is None:
                return (f"character {i} of the context starts text that is neither a whole "
                        f"line of a selected range nor framing")
            i += len(header)
    missing = len((whole | tails) - seen)
    if missing:
        return f"{missing} distinct line(s) of the selected ranges do not appear in the context"
    return None


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


def _labels(commit: dict[str, Any], corpus: Path) -> Labeler | None:
    """The names a v5 label must be unique among (every file under the corpus directory,
    listed only when an excerpt has a label), or None for the templates without labels
    (v1-v4; an external system's context may use the v5 header of its excerpts)."""
    if commit["template"] not in (RENDER_TEMPLATE, EXTERNAL_TEMPLATE):
        return None
    if not any("label" in item for item in commit["excerpts"]):
        return Labeler(())
    return Labeler(corpus_names(corpus))


def _identity(corpus: Path, rel: str) -> tuple[int, int] | None:
    try:
        info = os.lstat(resolve_in_corpus(corpus, rel))
    except (OSError, CtxbenchError):
        return None
    return (info.st_dev, info.st_ino)


def _denied_files(policy: Policy, corpus: Path
                  ) -> tuple[set[tuple[int, int] | None], set[str], list[bytes]]:
    """File identities, BLAKE3 digests and bytes of the denied entries that are corpus
    paths (plain-directory commits): a second name of a denied file is denied too."""
    identities: set[tuple[int, int] | None] = set()
    digests: set[str] = set()
    contents: list[bytes] = []
    for rel in policy.denied_artifacts:
        identity = _identity(corpus, rel)
        if identity is None:
            continue
        try:
            data = read_regular_file(resolve_in_corpus(corpus, rel), rel)
        except CtxbenchError:
            continue  # a denied directory, or a file that is not readable: nothing to bind
        identities.add(identity)
        digests.add(blake3_hex(data))
        contents.append(data)
    return identities, digests, contents


def _check_free_text(commit: dict[str, Any], denied: list[bytes], read: list[bytes]) -> None:
    """A commit's free text (``empty_reason``, ``strategy_source``) must not hold text of a
    denied corpus path (``strategy_source`` is outside the commit id)."""
    from ctxbench.compiler.restricted import shares_restricted_run

    if not denied:
        return
    source = commit.get("strategy_source")
    for where, value in (("empty_reason", commit.get("empty_reason")),
                         ("strategy_source", source)):
        if value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        _check(not shares_restricted_run((text,), denied, read),
               f"{where} holds text of a file the commit's policy denies")


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
    read: list[tuple[Excerpt, bytes]] = []
    labeler = _labels(commit, corpus)
    denied_files = _denied_files(policy, corpus)
    for n, item in enumerate(commit["excerpts"]):
        where = f"excerpt {n} ({item['artifact_id']})"
        label = item.get("label")
        if label is not None:
            _check(labeler is not None, f"/excerpts/{n}/label: expected no label (template "
                                        f"{commit['template']} names the path), got one")
            assert labeler is not None
            problem = label_problem(label, item["path"], labeler)
            _check(problem is None, f"/excerpts/{n}/label: {problem}")
        _check(policy.permits(item["artifact_id"], item["classification"]),
               f"{where}: not permitted by the commit's policy")
        ranges = tuple((int(a), int(b)) for a, b in item["ranges"])
        _check(all(a < b for a, b in ranges) and merge_ranges(ranges) == ranges,
               f"{where}: byte ranges must be sorted, non-empty and non-overlapping")
        data = read_regular_file(resolve_in_corpus(corpus, item["path"]), item["path"])
        _check(blake3_hex(data) == item["source_blake3"],
               f"{where}: {item['path']} does not match source_blake3 (the source changed)")
        _check(_identity(corpus, item["path"]) not in denied_files[0]
               and item["source_blake3"] not in denied_files[1],
               f"{where}: {item['path']} is the same file as, or holds the same bytes as, an "
               f"artifact the commit's policy denies")
        _check(ranges[-1][1] <= len(data), f"{where}: byte range beyond the end of the file")
        excerpt = Excerpt(item["artifact_id"], item["path"], item["classification"],
                          item["source_blake3"], ranges, label)
        if commit["template"] in RENDER_TEMPLATES:
            parts.append(render_excerpt(excerpt, data, commit["template"]))
        read.append((excerpt, data))
    if commit["template"] in RENDER_TEMPLATES:
        text = "".join(parts)
    else:
        _check(context is not None,
               "an external system's packet cannot be re-rendered; supply its context text")
        assert context is not None
        text = context
        problem = external_context_problem(text, read)
        _check(problem is None, f"the context is not composed of the selected bytes: {problem}")
    _check(packet_blake3(text) == commit["rendered_blake3"],
           "the re-rendered packet does not match rendered_blake3")
    _check_free_text(commit, denied_files[2], [data for _, data in read])
    counter = tokenizer or reference_tokenizer(commit["tokenizer"])
    _check(counter.id == commit["tokenizer"],
           f"tokenizer {counter.id} is not the commit's tokenizer {commit['tokenizer']}")
    count = counter.count(text)
    _check(count == commit["token_count"],
           f"token_count {commit['token_count']} does not match the recount ({count})")
    budget = commit["budget"]
    _check(budget is None or count <= budget, f"{count} tokens exceed the budget {budget}")
