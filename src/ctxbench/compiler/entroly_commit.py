"""Verify Entroly's context commits (``entroly.context-commit.v1``) exactly as Entroly hashes them.

Entroly does not use RFC 8785. Every digest in its commits is SHA-256 over Python's
``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`` encoded as
UTF-8 (Entroly's ``context_receipts/models.py``: ``stable_json``/``stable_hash``):

* ``commit_id`` = ``"ctx_"`` + first 24 hex of that hash over the commit without
  ``commit_id`` (``context_commit.py``: ``create_context_commit``);
* ``receipt.reproducibility_hash`` = the hash of the receipt without ``receipt_id`` and
  ``reproducibility_hash``; ``receipt.receipt_id`` = ``"cr_"`` + its first 12 hex;
* ``selected_context_digest`` = the hash of ``[{chunk_id, fingerprint, source_path, text}]``
  over the selected chunks, in order;
* ``recovery_bundle_digest`` = the hash of the recovery bundle;
* a chunk fingerprint / ``content_sha`` is ``"sha256:"`` + SHA-256 of the text with CRLF and
  CR folded to LF; ``fragment_sha256`` is ``"sha256:"`` + SHA-256 of the exact UTF-8 bytes.

:func:`verify_entroly_commit` runs every check Entroly's own ``verify_context_commit`` runs,
plus the exact-byte digest of each selected chunk, and fails closed: a field of the wrong
type is a failure, not a default. Given a corpus directory it also checks each source
file's bytes and each selected chunk's byte range against the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import IntegrityError, describe_value
from ctxbench.protocols.eceb.paths import resolve_in_corpus

__all__ = ["ENTROLY_COMMIT_SCHEMA", "EntrolyCommitCheck", "entroly_hash", "verify_entroly_commit"]

ENTROLY_COMMIT_SCHEMA = "entroly.context-commit.v1"


def entroly_hash(value: Any) -> str:
    """SHA-256 hex over Entroly's JSON serialization of ``value`` (not RFC 8785)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalized_fingerprint(text: str) -> str:
    folded = text.replace("\r\n", "\n").replace("\r", "\n")
    return "sha256:" + hashlib.sha256(folded.encode("utf-8")).hexdigest()


def _byte_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class EntrolyCommitCheck:
    """What a verified Entroly commit holds: id, engine and chunk counts."""

    commit_id: str
    engine: str
    selected_chunks: int
    omitted_chunks: int
    sources_checked: int


class _Failures:
    def __init__(self) -> None:
        self.items: list[str] = []

    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            # Ids come from the file: bound each message so one line stays readable.
            self.items.append(message if len(message) <= 200 else message[:197] + "...")
        return ok


def _obj(value: Any, where: str, fails: _Failures) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    fails.check(False, f"{where}: expected an object, got {describe_value(value)}")
    return {}


def _items(value: Any, where: str, fails: _Failures) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        fails.check(False, f"{where}: expected an array of objects, got {describe_value(value)}")
        return []
    return value


def _text(item: Mapping[str, Any], key: str, where: str, fails: _Failures) -> str:
    value = item.get(key)
    if isinstance(value, str):
        return value
    fails.check(False, f"{where}/{key}: expected a string, got {describe_value(value)}")
    return ""


def verify_entroly_commit(
    commit: Any, corpus_dir: str | os.PathLike[str] | None = None
) -> EntrolyCommitCheck:
    """Check every digest of an Entroly commit; IntegrityError naming each failed check."""
    fails = _Failures()
    doc = _obj(commit, "/", fails)
    fails.check(doc.get("schema_version") == ENTROLY_COMMIT_SCHEMA,
                f"/schema_version: expected {ENTROLY_COMMIT_SCHEMA}, got "
                f"{describe_value(doc.get('schema_version'))}")
    commit_id = _text(doc, "commit_id", "", fails)
    expected_id = "ctx_" + entroly_hash({k: v for k, v in doc.items() if k != "commit_id"})[:24]
    fails.check(commit_id == expected_id,
                f"/commit_id: {commit_id!r} does not match its content ({expected_id})")
    receipt = _obj(doc.get("receipt"), "/receipt", fails)
    receipt_hash = entroly_hash({k: v for k, v in receipt.items()
                                 if k not in ("receipt_id", "reproducibility_hash")})
    fails.check(receipt.get("reproducibility_hash") == receipt_hash,
                f"/receipt/reproducibility_hash: does not match the receipt ({receipt_hash})")
    fails.check(receipt.get("receipt_id") == "cr_" + receipt_hash[:12],
                f"/receipt/receipt_id: does not match the receipt (cr_{receipt_hash[:12]})")
    selected = _items(receipt.get("selected_context"), "/receipt/selected_context", fails)
    omitted = _items(receipt.get("omitted_context"), "/receipt/omitted_context", fails)
    digest_input = [
        {key: _text(item, key, f"/receipt/selected_context/{n}", fails)
         for key in ("chunk_id", "fingerprint", "source_path", "text")}
        for n, item in enumerate(selected)
    ]
    fails.check(doc.get("selected_context_digest") == entroly_hash(digest_input),
                "/selected_context_digest: does not match the selected context")
    bundle = _obj(doc.get("recovery_bundle"), "/recovery_bundle", fails)
    fails.check(doc.get("recovery_bundle_digest") == entroly_hash(bundle),
                "/recovery_bundle_digest: does not match the recovery bundle")
    chunks = _obj(bundle.get("chunks"), "/recovery_bundle/chunks", fails)
    for chunk_id, entry in chunks.items():
        where = f"/recovery_bundle/chunks/{chunk_id!r}"
        entry_obj = _obj(entry, where, fails)
        text = _text(entry_obj, "text", where, fails)
        fails.check(_normalized_fingerprint(text) == entry_obj.get("content_sha"),
                    f"{where}/content_sha: does not match the chunk text")
    _check_selected(selected, chunks, fails)
    _check_omitted(omitted, chunks, fails)
    parent = doc.get("parent_commit_id")
    fails.check(parent is None or (isinstance(parent, str) and parent.startswith("ctx_")),
                f"/parent_commit_id: expected null or a ctx_ id, got {describe_value(parent)}")
    engine = _obj(doc.get("engine"), "/engine", fails)
    implementation = _text(engine, "implementation", "/engine", fails)
    sources = 0
    if corpus_dir is not None and not fails.items:
        sources = _check_corpus(receipt, selected, Path(corpus_dir), fails)
    if fails.items:
        shown = "; ".join(fails.items[:3])
        more = f" (and {len(fails.items) - 3} more)" if len(fails.items) > 3 else ""
        raise IntegrityError(f"entroly context commit: {shown}{more}")
    return EntrolyCommitCheck(commit_id, implementation, len(selected), len(omitted), sources)


def _check_selected(selected: list[dict[str, Any]], chunks: dict[str, Any],
                    fails: _Failures) -> None:
    for n, item in enumerate(selected):
        where = f"/receipt/selected_context/{n}"
        entry = chunks.get(item.get("chunk_id"))  # type: ignore[arg-type]
        if not fails.check(isinstance(entry, dict),
                           f"{where}: chunk {item.get('chunk_id')!r} is not in the bundle"):
            continue
        assert isinstance(entry, dict)
        fails.check(entry.get("text") == item.get("text")
                    and entry.get("fingerprint") == item.get("fingerprint"),
                    f"{where}: text or fingerprint differs from the recovery bundle")
        text = item.get("text")
        recorded = item.get("fragment_sha256")
        if isinstance(text, str) and recorded:
            fails.check(_byte_digest(text.encode("utf-8")) == recorded,
                        f"{where}/fragment_sha256: does not match the chunk's bytes")


def _check_omitted(omitted: list[dict[str, Any]], chunks: dict[str, Any],
                   fails: _Failures) -> None:
    for n, item in enumerate(omitted):
        where = f"/receipt/omitted_context/{n}"
        entry = chunks.get(item.get("chunk_id"))  # type: ignore[arg-type]
        if not fails.check(isinstance(entry, dict),
                           f"{where}: chunk {item.get('chunk_id')!r} cannot be recovered"):
            continue
        assert isinstance(entry, dict)
        text = entry.get("text")
        if not fails.check(isinstance(text, str), f"{where}: recovery text is not a string"):
            continue
        assert isinstance(text, str)
        recorded = item.get("fragment_sha256")
        if recorded:
            actual = _byte_digest(text.encode("utf-8"))
            fails.check(actual == recorded, f"{where}: recovered bytes fail fragment_sha256")
            fails.check(not entry.get("fragment_sha256") or entry["fragment_sha256"] == actual,
                        f"{where}: recovered bytes fail the bundle's fragment_sha256")
            fails.check(item.get("byte_start", 0) == entry.get("byte_start", 0)
                        and item.get("byte_end", 0) == entry.get("byte_end", 0),
                        f"{where}: bundle byte range differs from the receipt")
            fails.check(not item.get("source_sha256") or not entry.get("source_sha256")
                        or item["source_sha256"] == entry["source_sha256"],
                        f"{where}: bundle source digest differs from the receipt")
        else:
            # Receipts before exact-byte digests: the normalized fingerprint is the proof.
            fails.check(not item.get("fingerprint")
                        or entry.get("fingerprint") == item.get("fingerprint"),
                        f"{where}: chunk fingerprint differs from the receipt")
            fails.check(_normalized_fingerprint(text) == entry.get("content_sha"),
                        f"{where}: recovered text fails its normalized fingerprint")


def _check_corpus(receipt: dict[str, Any], selected: list[dict[str, Any]], corpus: Path,
                  fails: _Failures) -> int:
    fingerprints = receipt.get("source_fingerprints")
    source_bytes = fingerprints.get("source_bytes") if isinstance(fingerprints, dict) else None
    if not fails.check(isinstance(source_bytes, dict) and bool(source_bytes),
                       "/receipt/source_fingerprints/source_bytes: the commit records no source "
                       "digests to check the corpus against"):
        return 0
    assert isinstance(source_bytes, dict)
    data: dict[str, bytes] = {}
    for path, digest in source_bytes.items():
        try:
            data[path] = resolve_in_corpus(corpus, path).read_bytes()
        except (OSError, ValueError) as exc:
            fails.check(False, f"source {path}: cannot be read from the corpus ({exc})")
            continue
        fails.check(_byte_digest(data[path]) == digest,
                    f"source {path}: does not match source_bytes (the source changed)")
    for n, item in enumerate(selected):
        raw = data.get(item.get("source_path"))  # type: ignore[arg-type]
        start, end = item.get("byte_start"), item.get("byte_end")
        if raw is None or type(start) is not int or type(end) is not int:
            fails.check(False, f"/receipt/selected_context/{n}: no source bytes to check")
            continue
        fails.check(_byte_digest(raw[start:end]) == item.get("fragment_sha256"),
                    f"/receipt/selected_context/{n}: corpus bytes {start}..{end} do not "
                    "match fragment_sha256")
    return len(data)
