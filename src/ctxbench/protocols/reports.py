"""Read any report ctxbench writes back as its typed model, chosen by its schema version.

    from ctxbench.protocols.reports import read_report

    report = read_report("run/cef-report.json")      # a CefReport
    report = read_report("public-eval-report.json")  # a PublicEvalReport
    report = read_report("eceb-report.json")         # an ECEB Report
    report = read_report("evaluation.json")          # a compile EvaluationReport
    report = read_report("plan.json")                # a StudyPlan (ctxbench plan --json)

The document names its schema in ``schema_version`` (ECEB reports: ``schema``); that name
picks the model, and the model reads the rest strictly. A file that is not JSON, holds no
known version, or holds a report of another version stops with one located line, e.g.
``x.json: /schema_version: expected one of "ctxbench.cef-report.v1", ... (a report
ctxbench writes), got the string "ctxbench.cef-report.v9"``. Models are imported when a
report of their kind is read, so reading a CEF report does not import the others (or
numpy; a study plan's model does, beside the planner).

:data:`REPORT_KINDS` is the one table of report kinds; :mod:`ctxbench.report_reader` (the
library's ``ctxbench.read_report``, which also reads bytes and decoded documents) reads
through it. ``read_report_node_of(kind, node)`` reads one kind only: a report of another
kind is refused at its schema name, saying what it is.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ctxbench.core.errors import PointerError, describe_value
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.node import Node

if TYPE_CHECKING:
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.protocols.cef.planning import StudyPlan
    from ctxbench.protocols.compile_evaluation.model import EvaluationReport
    from ctxbench.protocols.eceb.model import Report as EcebReport
    from ctxbench.protocols.public_eval.model import PublicEvalReport

__all__ = ["REPORT_KINDS", "REPORT_MODELS", "AnyReport", "ReportKind", "read_report",
           "read_report_node", "read_report_node_of", "report_model"]

AnyReport: TypeAlias = ("CefReport | PublicEvalReport | EcebReport | EvaluationReport"
                        " | StudyPlan")


@dataclass(frozen=True, slots=True)
class ReportKind:
    """One kind of report ctxbench writes: its schema version and typed model."""

    version: str
    module: str
    model: str
    called: str
    """What the kind is called in a message ("a CEF report")."""
    member: str = "schema_version"
    """The member naming the schema (ECEB's reports: ``schema``)."""

    @property
    def family(self) -> str:
        """The version's name without its number: any version of this kind starts so."""
        return re.sub(r"v[0-9.]+$", "", self.version)


REPORT_KINDS: dict[str, ReportKind] = {
    "cef": ReportKind("ctxbench.cef-report.v1", "ctxbench.protocols.cef.model", "CefReport",
                      "a CEF report"),
    "public_eval": ReportKind("ctxbench.public-eval-report.v1",
                              "ctxbench.protocols.public_eval.model", "PublicEvalReport",
                              "a public-eval report"),
    "eceb": ReportKind("symgliph.eceb/report-v0.1", "ctxbench.protocols.eceb.model",
                       "Report", "an ECEB report", member="schema"),
    "compile_evaluation": ReportKind("ctxbench.compile-evaluation.v1",
                                     "ctxbench.protocols.compile_evaluation.model",
                                     "EvaluationReport", "a compile evaluation report"),
    "plan": ReportKind("ctxbench.plan.v1", "ctxbench.protocols.cef.planning", "StudyPlan",
                       "a study plan"),
}
"""Each kind of report ctxbench writes, by the name the library's faces use for it."""

REPORT_MODELS: dict[str, tuple[str, str]] = {
    k.version: (k.module, k.model) for k in REPORT_KINDS.values()}
"""Each report schema ctxbench writes -> (module, class) of its typed model."""

_BY_VERSION = {k.version: k for k in REPORT_KINDS.values()}
_VERSION_KEYS = ("schema_version", "schema")


def report_model(version: str) -> type[Any]:
    """The model class of the report schema ``version`` (a key of ``REPORT_MODELS``)."""
    kind = _BY_VERSION[version]
    model: type[Any] = getattr(importlib.import_module(kind.module), kind.model)
    return model


def _object(node: Node) -> dict[str, Any]:
    if not isinstance(node.value, dict):
        raise node.fail("a JSON object (a report ctxbench writes)")
    return node.value


def read_report_node(node: Node) -> AnyReport:
    """The typed model of a decoded report, by its exact schema version."""
    document = _object(node)
    key = next((k for k in _VERSION_KEYS if k in document), "schema_version")
    if key not in document:
        raise PointerError(node.path, "/schema_version", "required field is missing (the "
                           "schema version names the report's kind)")
    version = document[key]
    if not isinstance(version, str) or version not in _BY_VERSION:
        known = ", ".join(f'"{v}"' for v in _BY_VERSION)
        raise PointerError(node.path, f"/{key}", f"expected one of {known} (a report "
                           f"ctxbench writes), got {describe_value(version)}")
    report: AnyReport = report_model(version).from_json(node)
    return report


def read_report_node_of(name: str, node: Node) -> Any:
    """The report of kind ``name`` (a key of ``REPORT_KINDS``) in ``node``; a report of
    another kind is refused at its schema name, saying what it is, and any other document
    as the kind's model refuses it (naming the version it reads)."""
    want = REPORT_KINDS[name]
    document = _object(node)
    for other in REPORT_KINDS.values():
        found = document.get(other.member)
        if (other is not want and isinstance(found, str)
                and found.startswith(other.family)):
            raise PointerError(node.path, f"/{other.member}", f"expected {want.called}, "
                               f"got {other.called} ({describe_value(found)})")
    return report_model(want.version).from_json(node)


def read_report(path: str | os.PathLike[str]) -> AnyReport:
    """Read the report file at ``path`` as the typed model its schema version names.

    Raises :class:`~ctxbench.core.errors.InputError` (a located one-line message) for a
    file that cannot be read, is not strict JSON, or is not a valid report of a version
    this ctxbench reads.
    """
    where = os.fspath(path)
    return read_report_node(Node(where, "", load_json_document(path, display=where)))
