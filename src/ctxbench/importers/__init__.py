"""ctxbench.importers: foreign logs -> protocol records (CEF trials, public-eval rows).

Inspect AI eval logs, SWE-bench harness reports and lm-evaluation-harness sample files,
each paired baseline/treatment by (sample id, run). Importers read and convert; they run
no model and compute no statistic.
"""

from ctxbench.importers.api import import_inspect, import_lm_eval, import_swebench
from ctxbench.importers.common import ImportSummary, Sample, TrialSettings
from ctxbench.importers.usage import UsageRecord, read_usage

__all__ = [
    "ImportSummary",
    "Sample",
    "TrialSettings",
    "UsageRecord",
    "import_inspect",
    "import_lm_eval",
    "import_swebench",
    "read_usage",
]
