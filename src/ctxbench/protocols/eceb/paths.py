"""Portable corpus-relative paths, and resolving them without escaping the corpus.

A registered path uses forward slashes, is relative, and has no empty, ``.`` or ``..``
segment and no backslash, so it names the same file on every platform. Resolution
refuses every symbolic link below the corpus directory (inside or outside it), so a
path names exactly one file and a file has exactly one path.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ctxbench.core.errors import InputError, IntegrityError, describe_value
from ctxbench.protocols.eceb.files import os_error

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


def resolve_in_corpus(corpus_dir: str | os.PathLike[str], rel: str) -> Path:
    """The location of portable path ``rel`` under ``corpus_dir``, with no link on the way.

    Fail-closed link rule: every component below the corpus directory is ``lstat``-ed,
    and a symbolic link is refused wherever it points. A link leaving the corpus is an
    IntegrityError ("expected a path inside the corpus"); a link inside it is one too,
    because a link gives one file's bytes a second path, and the path decides an
    artifact's classification. A missing component is not an error here (the corpus
    check reports the file as missing); other OS errors are one located InputError.
    """
    validate_portable_path(rel)
    try:
        base = Path(os.path.realpath(corpus_dir))
    except OSError as exc:
        raise os_error(exc, str(corpus_dir)) from exc
    current = base
    parts = rel.split("/")
    for n, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return base / rel
        except OSError as exc:
            raise os_error(exc, rel) from exc
        prefix = "/".join(parts[: n + 1])
        if stat.S_ISLNK(info.st_mode):
            _refuse_link(base, current, prefix, rel)
        if n + 1 < len(parts) and not stat.S_ISDIR(info.st_mode):
            raise InputError(f"{rel}: cannot be read: {prefix} is not a directory (ENOTDIR)")
    return current


def _refuse_link(base: Path, link: Path, prefix: str, rel: str) -> None:
    target = Path(os.path.realpath(link))
    if target != base and not target.is_relative_to(base):
        raise IntegrityError(
            f"{rel}: expected a path inside the corpus {base}, got one that resolves to "
            f"{target}")
    try:
        os.stat(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IntegrityError(f"{rel}: {prefix} is a symbolic link loop (ELOOP)") from exc
    raise IntegrityError(
        f"{rel}: expected a regular file reached without symbolic links, got a link at "
        f"{prefix} (a link would give one file's bytes a second path, and so possibly "
        f"another classification)")
