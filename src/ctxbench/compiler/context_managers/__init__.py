"""Agent context managers: what an agent sends the model before each turn.

See :mod:`.interface` for the interface and its checks, :mod:`.params` for the
parameters a manager declares, :mod:`.builtins` for the managers ctxbench ships and
:mod:`.discovery` for how third-party managers are found.
"""

from ctxbench.compiler.context_managers.discovery import (
    BUILTIN,
    get_context_manager,
    manager_source,
)
from ctxbench.compiler.context_managers.interface import (
    AgentMessage,
    CheckedDecision,
    ContextDecision,
    ContextManager,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    ToolCallRef,
    check_decision,
    decide,
    decision_commit,
    message_tokens,
)
from ctxbench.compiler.context_managers.params import ManagerParam, param, resolve_params

__all__ = [
    "BUILTIN",
    "AgentMessage",
    "CheckedDecision",
    "ContextDecision",
    "ContextManager",
    "ContextManagerFailure",
    "ContextRequest",
    "ManagerParam",
    "SummaryCall",
    "ToolCallRef",
    "check_decision",
    "decide",
    "decision_commit",
    "get_context_manager",
    "manager_source",
    "message_tokens",
    "param",
    "resolve_params",
]
