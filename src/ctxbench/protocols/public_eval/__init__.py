"""The public-eval protocol: paired baseline-vs-treatment comparison of agent runs.

    table = read_rows("baseline.jsonl")            # rows -> columns, located errors
    cells = pair_rows(baseline_table, treatment_table)
    report = analyze(cells, Settings(quality_margin_pp=1.0))   # a PublicEvalReport
    report = compare_files("baseline.jsonl", "treatment.jsonl", Settings())
    report.status, report.savings.tokens, report.to_json()
    PublicEvalReport.from_json(Node("report.json", "", document))   # read one back

Names are imported from their modules on first use, so reading and rendering a report
(:mod:`ctxbench.protocols.public_eval.model`) does not import the analysis and numpy.
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.protocols.public_eval.analysis import analyze
    from ctxbench.protocols.public_eval.api import compare_files
    from ctxbench.protocols.public_eval.model import PublicEvalReport
    from ctxbench.protocols.public_eval.pairing import PairedCells, pair_rows
    from ctxbench.protocols.public_eval.rows import (
        RowTable,
        check_row,
        read_rows,
        rows_from_lines,
    )
    from ctxbench.protocols.public_eval.settings import SCHEMA_VERSION, Settings

__all__ = [
    "SCHEMA_VERSION",
    "PairedCells",
    "PublicEvalReport",
    "RowTable",
    "Settings",
    "analyze",
    "check_row",
    "compare_files",
    "pair_rows",
    "read_rows",
    "rows_from_lines",
]

_WHERE = {
    "SCHEMA_VERSION": "settings",
    "PairedCells": "pairing",
    "PublicEvalReport": "model",
    "RowTable": "rows",
    "Settings": "settings",
    "analyze": "analysis",
    "check_row": "rows",
    "compare_files": "api",
    "pair_rows": "pairing",
    "read_rows": "rows",
    "rows_from_lines": "rows",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
