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
"""

from __future__ import annotations

import importlib
import os
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

__all__ = ["REPORT_MODELS", "AnyReport", "read_report", "read_report_document",
           "report_model"]

AnyReport: TypeAlias = ("CefReport | PublicEvalReport | EcebReport | EvaluationReport"
                        " | StudyPlan")

REPORT_MODELS: dict[str, tuple[str, str]] = {
    "ctxbench.cef-report.v1": ("ctxbench.protocols.cef.model", "CefReport"),
    "ctxbench.public-eval-report.v1": ("ctxbench.protocols.public_eval.model",
                                       "PublicEvalReport"),
    "symgliph.eceb/report-v0.1": ("ctxbench.protocols.eceb.model", "Report"),
    "ctxbench.compile-evaluation.v1": ("ctxbench.protocols.compile_evaluation.model",
                                       "EvaluationReport"),
    "ctxbench.plan.v1": ("ctxbench.protocols.cef.planning", "StudyPlan"),
}
"""Each report schema ctxbench writes -> (module, class) of its typed model."""

_VERSION_KEYS = ("schema_version", "schema")


def report_model(version: str) -> type[Any]:
    """The model class of the report schema ``version`` (a key of ``REPORT_MODELS``)."""
    module, name = REPORT_MODELS[version]
    model: type[Any] = getattr(importlib.import_module(module), name)
    return model


def read_report_document(document: Any, where: str) -> AnyReport:
    """The typed model of a decoded report; ``where`` names it in errors."""
    node = Node(where, "", document)
    if not isinstance(document, dict):
        raise node.fail("a JSON object (a report ctxbench writes)")
    key = next((k for k in _VERSION_KEYS if k in document), "schema_version")
    if key not in document:
        raise PointerError(where, "/schema_version", "required field is missing (the "
                           "schema version names the report's kind)")
    version = document[key]
    if not isinstance(version, str) or version not in REPORT_MODELS:
        known = ", ".join(f'"{v}"' for v in REPORT_MODELS)
        raise PointerError(where, f"/{key}", f"expected one of {known} (a report ctxbench "
                           f"writes), got {describe_value(version)}")
    report: AnyReport = report_model(version).from_json(node)
    return report


def read_report(path: str | os.PathLike[str]) -> AnyReport:
    """Read the report file at ``path`` as the typed model its schema version names.

    Raises :class:`~ctxbench.core.errors.InputError` (a located one-line message) for a
    file that cannot be read, is not strict JSON, or is not a valid report of a version
    this ctxbench reads.
    """
    where = os.fspath(path)
    return read_report_document(load_json_document(path, display=where), where)
