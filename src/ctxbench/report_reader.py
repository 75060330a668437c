"""Read back any report ctxbench writes as its typed model, from a path, bytes or a dict.

    report = read_report("run/cef-report.json")      # CefReport
    report = read_report(document_dict)              # or bytes, str path, os.PathLike

The library's door to :mod:`ctxbench.protocols.reports`: this module turns the source into
a located document, and the protocols' one table of report kinds
(:data:`~ctxbench.protocols.reports.REPORT_KINDS`) picks and reads the model: CEF,
public-eval, ECEB (named in ``schema``), the compile evaluation and the study plan. A
document naming no version ctxbench reads is refused at ``/schema_version`` (``/schema``)
listing those it does; ``read_report_of(kind, ...)`` refuses a report of another kind
saying what it is. Only the model of the kind read is imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from ctxbench.core.errors import InputError, PointerError
from ctxbench.core.jsonl import load_json_document, loads_strict
from ctxbench.core.limits import MAX_DOCUMENT_BYTES
from ctxbench.core.node import Node
from ctxbench.protocols.reports import AnyReport, read_report_node, read_report_node_of

__all__ = ["AnyReport", "Kind", "ReportSource", "read_document", "read_report",
           "read_report_of"]

Kind: TypeAlias = Literal["cef", "public_eval", "eceb", "compile_evaluation", "plan"]
"""A key of :data:`ctxbench.protocols.reports.REPORT_KINDS`."""
ReportSource: TypeAlias = "str | os.PathLike[str] | bytes | Mapping[str, Any]"


def read_document(source: ReportSource, *, display: str | None = None) -> Node:
    """The decoded JSON document of ``source``, named for error messages.

    A ``str`` or path-like is a file to read; ``bytes`` are the document's UTF-8 text;
    a mapping is a document already decoded (``json.load``'s result, ``report.to_json()``).
    """
    if isinstance(source, (str, os.PathLike)):
        shown = display if display is not None else os.fspath(source)
        return Node(shown, "", load_json_document(source, display=shown))
    if isinstance(source, (bytes, bytearray)):
        shown = display if display is not None else "<bytes>"
        if len(source) > MAX_DOCUMENT_BYTES:
            raise InputError(f"{shown}: expected a JSON document of at most "
                             f"{MAX_DOCUMENT_BYTES} bytes, got {len(source)}")
        try:
            text = bytes(source).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{shown}: expected UTF-8 text, got an invalid byte at offset "
                             f"{exc.start}") from None
        if text.startswith("\ufeff"):
            raise PointerError(shown, "/", "expected JSON without a byte-order mark")
        return Node(shown, "", loads_strict(text, path=shown, line=None))
    if isinstance(source, Mapping):
        return Node(display if display is not None else "<document>", "", dict(source))
    raise TypeError(f"source: expected a path, bytes or a decoded JSON object, got "
                    f"{type(source).__name__}")


def read_report(source: ReportSource, *, display: str | None = None) -> AnyReport:
    """The typed report model of any report ctxbench writes (see the module docstring)."""
    return read_report_node(read_document(source, display=display))


def read_report_of(kind: Kind, source: ReportSource, *, display: str | None = None) -> Any:
    """The report of ``kind`` in ``source``; a report of another kind is refused at its
    schema name, saying what it is, and any other document as ``kind``'s model refuses it."""
    return read_report_node_of(kind, read_document(source, display=display))
