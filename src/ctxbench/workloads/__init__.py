"""ctxbench.workloads: task sources and their scorers (BFCL, LongBench-format QA).

Each workload yields tasks, their permitted context (documents, messages or tool
schemas) and a deterministic scorer; see :mod:`ctxbench.workloads.base`. This layer
never calls a model and never writes trial logs. The enterprise seed is loaded by
``ctxbench.runner.workload`` from the ECEB benchmark it ships as.
"""

from ctxbench.workloads.base import PERMITTED_KINDS, ToolTask, WorkloadSource
from ctxbench.workloads.bfcl import (
    BFCL_CATEGORIES,
    BfclWorkload,
    ground_truth_call,
    load_bfcl,
    score_tool_answer,
)
from ctxbench.workloads.bfcl_checker import CheckResult, check_calls, check_relevance
from ctxbench.workloads.calls import (
    CallParseError,
    ToolCall,
    calls_from_native,
    parse_calls,
    render_calls,
)
from ctxbench.workloads.longbench import (
    DATASET_METRICS,
    LongBenchTask,
    LongBenchWorkload,
    load_longbench,
    score_longbench,
)
from ctxbench.workloads.tools import (
    TOOL_STRATEGIES,
    TokenCounter,
    ToolSchema,
    ToolSelection,
    ToolSelector,
    json_schema_parameters,
    select_tools,
)

__all__ = [
    "BFCL_CATEGORIES",
    "DATASET_METRICS",
    "PERMITTED_KINDS",
    "TOOL_STRATEGIES",
    "BfclWorkload",
    "CallParseError",
    "CheckResult",
    "LongBenchTask",
    "LongBenchWorkload",
    "TokenCounter",
    "ToolCall",
    "ToolSchema",
    "ToolSelection",
    "ToolSelector",
    "ToolTask",
    "WorkloadSource",
    "calls_from_native",
    "check_calls",
    "check_relevance",
    "ground_truth_call",
    "json_schema_parameters",
    "load_bfcl",
    "load_longbench",
    "parse_calls",
    "render_calls",
    "score_longbench",
    "score_tool_answer",
    "select_tools",
]
