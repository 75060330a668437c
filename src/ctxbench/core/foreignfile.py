"""Bounded checks of a file that a foreign library (Inspect AI) will read after us.

ctxbench cannot bound what another library's reader does with a file, so the file is
checked first, within the documented bounds of :mod:`ctxbench.core.limits`: a regular
file (a named pipe, socket or device is refused before it is opened: opening a pipe
blocks until a writer appears), at most ``MAX_DOCUMENT_BYTES`` on disk, JSON nested at
most ``MAX_DEPTH`` deep, and for a zip archive at most ``MAX_ARCHIVE_MEMBERS`` members
(counted from the archive's end record, before its directory is read), each inflating
to at most ``MAX_ARCHIVE_MEMBER_BYTES`` and all together to at most
``MAX_ARCHIVE_BYTES``, decompressed in chunks and stopped at the limit (a member's
declared size is not trusted).
"""

from __future__ import annotations

import os
import re
import zipfile
from typing import Any

from ctxbench.core.errors import InputError
from ctxbench.core.limits import (
    MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_MEMBER_BYTES,
    MAX_ARCHIVE_MEMBERS,
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
)
from ctxbench.core.textfile import check_readable, open_error, read_utf8

__all__ = ["check_json_file", "check_zip_file", "json_depth"]

_CHUNK = 1 << 20
# A JSON string (its escapes included): brackets inside one do not nest. The loop is
# unrolled (runs of plain characters, then one escape), about 4x faster than an
# alternation per character.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


# What zipfile raises for an archive it cannot read: a damaged or truncated one
# (BadZipFile, EOFError, ValueError), a ZIP64 one it may not open (LargeZipFile), and
# RuntimeError for a member it will not decompress: an encrypted one ("password required")
# and, through RuntimeError's subclass for unimplemented features, one in a compression
# method it lacks (e.g. method 99, AES).
_UNREADABLE_ZIP: tuple[type[Exception], ...] = (
    zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, EOFError, ValueError)

def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``data`` (0 for a
    scalar); for text that is not JSON, a number the foreign reader will refuse anyway."""
    import numpy as np

    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _check_depth(data: bytes, shown: str) -> None:
    depth = json_depth(data)
    if depth > MAX_DEPTH:
        raise InputError(f"{shown}: expected JSON nested at most {MAX_DEPTH} deep, got "
                         f"{depth} levels")


def check_json_file(path: str | os.PathLike[str], shown: str) -> None:
    """Refuse a JSON file that is not regular, too large, not UTF-8 or nested too deep."""
    text = read_utf8(path, display=shown, limit=MAX_DOCUMENT_BYTES)
    _check_depth(text.encode("utf-8"), shown)


def _member_count(path: str | os.PathLike[str], shown: str) -> int:
    """The member count the archive's end record declares (zip64 included)."""
    end_record: Any = getattr(zipfile, "_EndRecData")  # noqa: B009 - private, stable since 2.x
    try:
        with open(path, "rb") as handle:
            found = end_record(handle)
    except OSError as exc:
        raise open_error(exc, shown) from None
    if not found:
        raise InputError(f"{shown}: expected a zip archive, got a file with no zip end record")
    return int(found[4])  # _ECD_ENTRIES_TOTAL


def check_zip_file(path: str | os.PathLike[str], shown: str, *,
                   json_suffix: str = ".json") -> None:
    """Refuse an archive beyond the bounds above; members named ``*.json`` are also
    checked for their nesting depth."""
    size = check_readable(path, shown)
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(f"{shown}: expected a file of at most {MAX_DOCUMENT_BYTES} bytes, "
                         f"got {size} bytes")
    count = _member_count(path, shown)
    if count > MAX_ARCHIVE_MEMBERS:
        raise InputError(f"{shown}: expected a zip archive of at most {MAX_ARCHIVE_MEMBERS} "
                         f"members, got {count}")
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ARCHIVE_MEMBERS:
                raise InputError(f"{shown}: expected a zip archive of at most "
                                 f"{MAX_ARCHIVE_MEMBERS} members, got {len(infos)}")
            for info in infos:
                where = f"{shown}: {info.filename[:200]}"
                parts: list[bytes] = []
                read = 0
                with archive.open(info) as member:
                    while chunk := member.read(_CHUNK):
                        read += len(chunk)
                        total += len(chunk)
                        if read > MAX_ARCHIVE_MEMBER_BYTES:
                            raise InputError(f"{where}: expected a member of at most "
                                             f"{MAX_ARCHIVE_MEMBER_BYTES} bytes decompressed, "
                                             f"got more")
                        if total > MAX_ARCHIVE_BYTES:
                            raise InputError(f"{shown}: expected at most {MAX_ARCHIVE_BYTES} "
                                             f"bytes decompressed in all, got more")
                        if info.filename.endswith(json_suffix):
                            parts.append(chunk)
                if parts:
                    _check_depth(b"".join(parts), where)
    except _UNREADABLE_ZIP as exc:
        raise InputError(f"{shown}: expected a zip archive, got one that cannot be read "
                         f"({type(exc).__name__}: {str(exc)[:120]})") from None
    except OSError as exc:
        raise open_error(exc, shown) from None
