"""Find the reports behind each path given to ``ctxbench report``: a report file or a run.

A report file is recognised by its schema name. A run directory is one that holds a
``manifest.json`` or any of the report files a run writes; its page also shows the
manifest and links every file in it (rendered ``.html`` pages aside).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import InputError, PointerError, describe_value, load_json_document
from ctxbench.core.node import Node

__all__ = ["KINDS", "REPORT_FILES", "Source", "load_source"]

KINDS = {"cef": "CEF report", "public_eval": "public-eval report", "eceb": "ECEB report"}
REPORT_FILES = ("cef-report.json", "public-eval-report.json", "eceb-report.json")


@dataclass(frozen=True, slots=True)
class Source:
    """One input: its reports (kind, document), and for a run its manifest and files."""

    path: Path
    reports: tuple[tuple[str, Node], ...]
    manifest: Node | None
    files: tuple[tuple[str, int], ...]
    is_run: bool


def _kind(doc: Node) -> str:
    if not isinstance(doc.value, dict):
        raise doc.fail("a JSON object (a ctxbench report)")
    version = doc.value.get("schema_version", doc.value.get("schema"))
    if isinstance(version, str):
        if version.startswith("ctxbench.cef-report."):
            return "cef"
        if version.startswith("ctxbench.public-eval-report."):
            return "public_eval"
        if version.startswith("symgliph.eceb/report-"):
            return "eceb"
    raise PointerError(doc.path, "/schema_version",
                       "expected a CEF, public-eval or ECEB report, got "
                       + describe_value(version))


def _report(path: Path) -> tuple[str, Node]:
    doc = Node(str(path), "", load_json_document(path))
    return _kind(doc), doc


def load_source(path: Path) -> Source:
    """Read one path: a report JSON file, or a run directory with its reports."""
    if path.is_file():
        return Source(path, (_report(path),), None, (), False)
    if not path.is_dir():
        raise InputError(f"{path}: no such report file or run directory")
    found = [path / name for name in REPORT_FILES if (path / name).is_file()]
    manifest_path = path / "manifest.json"
    if not found and not manifest_path.is_file():
        raise InputError(f"{path}: a run directory needs manifest.json or one of "
                         + ", ".join(REPORT_FILES))
    manifest = (Node(str(manifest_path), "", load_json_document(manifest_path))
                if manifest_path.is_file() else None)
    files = tuple(sorted((entry.name, entry.stat().st_size) for entry in os.scandir(path)
                         if entry.is_file() and not entry.name.endswith(".html")))
    return Source(path, tuple(_report(p) for p in found), manifest, files, True)
