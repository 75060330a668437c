"""The run's reports ask the registry objects what a workload format or a provider is;
they name none (a third party's format or fixture provider is reported the same way)."""

from __future__ import annotations

import ast
from pathlib import Path

from ctxbench.runner import reports
from ctxbench.runner.workload import BFCL
from ctxbench.runner.workload_formats import eceb_registry


def test_reports_compare_no_workload_format_or_provider_name() -> None:
    tree = ast.parse(Path(reports.__file__).read_text(encoding="utf-8"))
    named = [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
             if isinstance(node, ast.Compare)
             and any(isinstance(side, ast.Attribute) and side.attr in ("format", "provider")
                     for side in (node.left, *node.comparators))]
    assert named == []


def test_a_format_offers_its_eceb_registry_on_its_registry_object() -> None:
    assert eceb_registry("bfcl") is BFCL.eceb_registry is not None
    assert eceb_registry("qa") is None and eceb_registry("eceb") is None
