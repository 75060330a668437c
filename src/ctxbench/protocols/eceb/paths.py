"""Portable corpus-relative paths, and resolving them without escaping the corpus.

A registered path uses forward slashes, is relative, and has no empty, ``.`` or ``..``
segment and no backslash, so it names the same file on every platform. Resolution
follows symlinks and rejects any path whose real location lies outside the corpus.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxbench.core.errors import InputError, IntegrityError, describe_value

__all__ = ["path_problem", "resolve_in_corpus", "validate_portable_path"]

_DRIVE = re.compile(r"[A-Za-z]:")


def path_problem(text: object) -> str | None:
    """Why ``text`` is not a portable corpus-relative path, or None when it is one."""
    if not isinstance(text, str):
        return "it is not a string"
    if not text:
        return "it is empty"
    if "\\" in text:
        return "it contains a backslash"
    if "\x00" in text or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return "it contains a control character"
    if text.startswith("/") or _DRIVE.match(text):
        return "it is absolute"
    for segment in text.split("/"):
        if segment == "":
            return "it has an empty segment"
        if segment == ".":
            return "it has a '.' segment"
        if segment == "..":
            return "it has a '..' segment"
    return None


def validate_portable_path(text: str) -> str:
    """Return ``text`` when it is a portable corpus-relative path; raise InputError if not."""
    problem = path_problem(text)
    if problem is not None:
        raise InputError(
            f"expected a portable corpus-relative path, got {describe_value(text)}: {problem}"
        )
    return text


def resolve_in_corpus(corpus_dir: Path, rel: str) -> Path:
    """The real location of ``rel`` under ``corpus_dir``; reject one that escapes it.

    Symlinks are followed, so a link pointing outside the corpus is an IntegrityError.
    The file need not exist: a missing file is reported by the corpus check instead.
    """
    validate_portable_path(rel)
    base = Path(corpus_dir).resolve()
    target = (base / rel).resolve(strict=False)
    if target != base and not target.is_relative_to(base):
        raise IntegrityError(
            f"{rel}: expected a path inside the corpus {base}, got one that resolves to {target}"
        )
    return target
