"""The Context Efficiency Frontier (CEF) protocol: trial records, preregistration, analysis.

    from ctxbench.protocols.cef import analyze_files
    report = analyze_files(["trials.jsonl"], prereg_path="prereg.toml")
"""

from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.api import analyze_files, load_settings, read_table, write_report
from ctxbench.protocols.cef.prereg import (
    Preregistration,
    default_preregistration,
    load_preregistration,
)
from ctxbench.protocols.cef.records import Trial, read_trials, validate_trials
from ctxbench.protocols.cef.report import REPORT_SCHEMA

__all__ = [
    "REPORT_SCHEMA",
    "Preregistration",
    "Trial",
    "analyze",
    "analyze_files",
    "default_preregistration",
    "load_preregistration",
    "load_settings",
    "read_table",
    "read_trials",
    "validate_trials",
    "write_report",
]
