"""Read back any report ctxbench writes as its typed model, told apart by its schema name.

    report = read_report("run/cef-report.json")      # CefReport
    report = read_report(document_dict)              # or bytes, str path, os.PathLike

CEF (``ctxbench.cef-report.*``), public-eval (``ctxbench.public-eval-report.*``), ECEB
(``symgliph.eceb/report-*``, named in ``schema``) and the compile evaluation
(``ctxbench.compile-evaluation.*``). Each family is read by its model's own ``from_json``,
which refuses a version it does not read and names the JSON pointer of any missing,
mistyped or unknown member; a document of no family is refused at ``/schema_version``.
Only the model of the family read is imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ctxbench.core.errors import InputError, PointerError, describe_value
from ctxbench.core.jsonl import load_json_document, loads_strict
from ctxbench.core.limits import MAX_DOCUMENT_BYTES
from ctxbench.core.node import Node

if TYPE_CHECKING:
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.protocols.compile_evaluation.model import EvaluationReport
    from ctxbench.protocols.eceb.model import Report as EcebReport
    from ctxbench.protocols.public_eval.model import PublicEvalReport

__all__ = ["KINDS", "AnyReport", "Kind", "ReportSource", "read_document", "read_report",
           "read_report_of", "report_kind"]

Kind: TypeAlias = Literal["cef", "public_eval", "eceb", "compile_evaluation"]
ReportSource: TypeAlias = "str | os.PathLike[str] | bytes | Mapping[str, Any]"
AnyReport: TypeAlias = "CefReport | PublicEvalReport | EcebReport | EvaluationReport"

# kind -> (the member naming the schema, its prefix, what the kind is called in a message)
KINDS: dict[Kind, tuple[str, str, str]] = {
    "cef": ("schema_version", "ctxbench.cef-report.", "a CEF report"),
    "public_eval": ("schema_version", "ctxbench.public-eval-report.", "a public-eval report"),
    "eceb": ("schema", "symgliph.eceb/report-", "an ECEB report"),
    "compile_evaluation": ("schema_version", "ctxbench.compile-evaluation.",
                           "a compile evaluation report"),
}


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


def _key(doc: Node) -> str:
    """The member that names the document's schema (ECEB's is ``schema``)."""
    if not isinstance(doc.value, dict):
        raise doc.fail("a JSON object (a ctxbench report)")
    return ("schema_version" if "schema_version" in doc.value or "schema" not in doc.value
            else "schema")


def _family(doc: Node) -> Kind | None:
    _key(doc)
    for kind, (key, prefix, _) in KINDS.items():
        version = doc.value.get(key)
        if isinstance(version, str) and version.startswith(prefix):
            return kind
    return None


def report_kind(doc: Node) -> Kind:
    """Which family of report ``doc`` is, by its ``schema_version`` (ECEB: ``schema``)."""
    kind = _family(doc)
    if kind is None:
        key = _key(doc)
        raise PointerError(doc.path, f"/{key}", "expected a CEF, public-eval, ECEB or "
                           f"compile evaluation report, got {describe_value(doc.value.get(key))}")
    return kind


def _model(kind: Kind) -> Any:
    """The model class of ``kind``: the one :data:`ctxbench.protocols.reports.REPORT_MODELS`
    registers for the kind's schema name (one table of report models)."""
    from ctxbench.protocols.reports import REPORT_MODELS, report_model

    prefix = KINDS[kind][1]
    return report_model(next(v for v in REPORT_MODELS if v.startswith(prefix)))


def read_report(source: ReportSource, *, display: str | None = None) -> AnyReport:
    """The typed report model of any report ctxbench writes (see the module docstring)."""
    doc = read_document(source, display=display)
    report: AnyReport = _model(report_kind(doc)).from_json(doc)
    return report


def read_report_of(kind: Kind, source: ReportSource, *, display: str | None = None) -> Any:
    """The report of ``kind`` in ``source``; a report of another family is refused at its
    schema name, saying what it is, and any other document as ``kind``'s model refuses it."""
    doc = read_document(source, display=display)
    found = _family(doc)
    if found is not None and found != kind:
        key = KINDS[found][0]
        raise PointerError(doc.path, f"/{key}", f"expected {KINDS[kind][2]}, got "
                           f"{KINDS[found][2]} ({describe_value(doc.value[key])})")
    # A document of no family is the model's to refuse: it names the version it reads.
    return _model(kind).from_json(doc)
