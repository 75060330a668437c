"""The Context Efficiency Frontier (CEF) protocol: trial records, preregistration, analysis.

    from ctxbench.protocols.cef import analyze_files
    report = analyze_files(["trials.jsonl"], prereg_path="prereg.toml")   # a CefReport
    report.aggregate, report.to_json()
    CefReport.from_json(Node("report.json", "", document))                 # read one back
    plan_study(StudyDesign("binary", margin=0.05, difference=0.0, discordance=0.2))

Names are imported from their modules on first use, so reading and rendering a report
(:mod:`ctxbench.protocols.cef.model`) does not import the analysis and numpy.
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.protocols.cef.analysis import analyze
    from ctxbench.protocols.cef.api import (
        analyze_files,
        load_settings,
        read_table,
        write_report,
    )
    from ctxbench.protocols.cef.model import REPORT_SCHEMA, CefReport
    from ctxbench.protocols.cef.planning import StudyDesign, StudyPlan, plan_study
    from ctxbench.protocols.cef.prereg import (
        Preregistration,
        default_preregistration,
        load_preregistration,
    )
    from ctxbench.protocols.cef.records import Trial, read_trials, validate_trials

__all__ = [
    "REPORT_SCHEMA",
    "CefReport",
    "Preregistration",
    "StudyDesign",
    "StudyPlan",
    "Trial",
    "analyze",
    "analyze_files",
    "default_preregistration",
    "load_preregistration",
    "load_settings",
    "plan_study",
    "read_table",
    "read_trials",
    "validate_trials",
    "write_report",
]

_WHERE = {
    "REPORT_SCHEMA": "model",
    "CefReport": "model",
    "Preregistration": "prereg",
    "StudyDesign": "planning",
    "StudyPlan": "planning",
    "Trial": "records",
    "analyze": "analysis",
    "analyze_files": "api",
    "default_preregistration": "prereg",
    "load_preregistration": "prereg",
    "load_settings": "api",
    "plan_study": "planning",
    "read_table": "api",
    "read_trials": "records",
    "validate_trials": "records",
    "write_report": "api",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
