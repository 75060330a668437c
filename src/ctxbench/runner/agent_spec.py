"""Experiment specs of agent runs: ``[workload] format`` an agent workload (``agent``, or
one a package registers: :mod:`ctxbench.runner.agent_workloads`), ``bfcl_multi_turn`` or
``agent_traces``, conditions naming context managers (docs/runner.md, docs/agents.md).

    name = "agent-managers"
    seed = 0
    replicates = 1
    output = "runs/agent"
    pricing = "self_hosted"          # or a pricing snapshot; none for the fixture

    [workload]
    format = "bfcl_multi_turn"       # or "agent" / "agent_traces"
    source = "multi_turn_base"       # a category; builtin:agent-tasks or a task file;
    limit = 10                       # trace files (with trace_format = hermes / openclaw)

    [model]
    provider = "openai-compatible"
    model = "qwen2.5-7b-instruct"

    [agent]                          # optional
    max_turns = 6

    [[conditions]]                   # the first is the baseline
    name = "full"
    manager = "full_history"

    [[conditions]]
    name = "elided"
    manager = "elide_tool_outputs"   # installed, module:attr or external:COMMAND
    budget = 4000
    params = { head_lines = 3 }      # the manager's declared parameters

Every error is located: ``exp.toml:14: [conditions][1].manager: expected ..., got ...``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import FieldError, InputError, blake3_file
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.runner.agent_workloads import agent_workload_names, is_agent_workload
from ctxbench.runner.providers.registry import provider_factory
from ctxbench.runner.spec import BOUNDS, ModelSpec, parse_model
from ctxbench.runner.tomlfields import TomlFields
from ctxbench.workloads.agent_tasks import BUILTIN_SOURCE

__all__ = ["BFCL_CATEGORIES", "BUILTIN_AGENT_TASKS", "SESSION_FORMATS", "TRACE_FORMATS",
           "AgentConditionSpec", "AgentSpec", "agent_format_of", "agent_formats",
           "load_agent_spec", "parse_agent_spec"]

#: The agent formats that are not task workloads: BFCL's multi-turn sessions and recorded
#: traces (each with its own experiment); the task workloads are registry entries.
SESSION_FORMATS = ("bfcl_multi_turn", "agent_traces")
BUILTIN_AGENT_TASKS = BUILTIN_SOURCE
TRACE_FORMATS = ("hermes", "openclaw")
#: The multi-turn categories a spec may name, short names included.
BFCL_CATEGORIES = {"multi_turn_base": "multi_turn_base",
                   "multi_turn_long_context": "multi_turn_long_context",
                   "long_context": "multi_turn_long_context",
                   "multi_turn_miss_func": "multi_turn_miss_func",
                   "miss_func": "multi_turn_miss_func",
                   "multi_turn_miss_param": "multi_turn_miss_param",
                   "miss_param": "multi_turn_miss_param"}
_SLUG = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,47}")
_AGENT_KEYS = {"agent": ("max_turns", "max_context_tokens", "max_output_tokens"),
               "bfcl_multi_turn": ("max_steps", "max_output_tokens"),
               "agent_traces": ("max_output_tokens",)}


@dataclass(frozen=True, slots=True)
class AgentConditionSpec:
    """``params``: what the manager receives (the spec's, then the declared defaults)."""

    name: str
    manager: str
    budget: int | None
    native_context: bool
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """A validated agent-run spec; ``sources`` are the agent workload's source as written
    (its loader resolves it against the spec's folder), resolved trace files, or the
    category (bfcl_multi_turn)."""

    name: str
    seed: int
    replicates: int
    output: Path
    format: str
    sources: tuple[str, ...]
    trace_format: str | None
    limit: int | None
    offset: int
    tokenizer: str | None
    model: ModelSpec
    pricing: str  # a snapshot path, "self_hosted" or "zero_cost_fixture"
    conditions: tuple[AgentConditionSpec, ...]
    agent: dict[str, int]
    timeout_s: float
    path: Path
    digest: str


def agent_formats() -> list[str]:
    """Every agent format: the agent workloads (registered), then :data:`SESSION_FORMATS`."""
    return [*agent_workload_names(), *SESSION_FORMATS]


def agent_format_of(document: dict[str, Any]) -> str | None:
    """The agent format a decoded spec names in ``[workload] format``, None for any other."""
    workload = document.get("workload")
    fmt = workload.get("format") if isinstance(workload, dict) else None
    if not isinstance(fmt, str):
        return None
    return fmt if fmt in SESSION_FORMATS or is_agent_workload(fmt) else None


def _keys(fmt: str) -> tuple[str, ...]:
    return _AGENT_KEYS.get(fmt, _AGENT_KEYS["agent"])


def _resolve(base: Path, value: str) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def _sources(t: TomlFields, fmt: str, base: Path) -> tuple[tuple[str, ...], str | None]:
    raw = t.value.get("source")
    if fmt == "bfcl_multi_turn":
        category = t.req_enum("source", list(BFCL_CATEGORIES))
        return (BFCL_CATEGORIES[category],), None
    if fmt not in SESSION_FORMATS:  # an agent workload: its loader reads the source
        return (t.req_string("source"),), None
    trace_format = t.req_enum("trace_format", TRACE_FORMATS)
    files = [raw] if isinstance(raw, str) else raw
    if not isinstance(files, list) or not files or len(files) > BOUNDS["limit"] or \
            not all(isinstance(f, str) and f for f in files):
        t.fail("source", "a trace file path or a non-empty array of them", raw)
    resolved = tuple(_resolve(base, f) for f in files)
    for f in resolved:
        if not Path(f).is_file():
            t.fail("source", "trace files that exist", got_text=repr(f))
    return resolved, trace_format


def _condition(t: TomlFields) -> AgentConditionSpec:
    from ctxbench.compiler.context_managers.discovery import (
        get_context_manager,
        installed_context_managers,
    )
    from ctxbench.compiler.context_managers.params import (
        ParamError,
        declared_params,
        resolve_params,
    )

    t.only({"name", "manager", "budget", "native_context", "params"})
    manager_name = t.req_string("manager")
    installed = [n for n, (target, _, _) in installed_context_managers().items() if target]
    if ":" not in manager_name and manager_name not in installed:
        t.fail("manager", f"an installed context manager ({', '.join(installed)}; see "
               "ctxbench context-managers), module:attr or external:COMMAND", manager_name)
    try:
        manager = get_context_manager(manager_name)
    except InputError as exc:
        t.fail("manager", f"a context manager that loads ({str(exc)[:200]})", manager_name)
    budget = t.integer("budget", minimum=1, maximum=BOUNDS["budget"], optional=True)
    if budget is not None and not manager.budgeted:
        t.fail("budget", f"no budget (the context manager {manager_name} takes none)", budget)
    given = t.value.get("params", {})
    if not isinstance(given, dict):
        t.fail("params", "a table of the manager's parameters ({ name = value })", given)
    try:
        params = resolve_params(declared_params(manager), given)
    except ParamError as exc:
        t.fail("params" if exc.name is None else f"params.{exc.name}", exc.expected,
               exc.got)
    except ValueError as exc:  # the manager's own declaration is malformed
        t.fail("manager", f"a context manager that declares its params ({exc})",
               manager_name)
    name = t.matching("name", _SLUG, "a lowercase slug like full or elided", optional=True)
    return AgentConditionSpec(name=name or manager.name, manager=manager_name, budget=budget,
                              native_context=bool(t.boolean("native_context", optional=True)),
                              params=params)


def parse_agent_spec(document: dict[str, Any], *, path: Path, display: str | None = None,
                     digest: str = "") -> AgentSpec:
    """Validate a decoded agent-run spec; relative paths resolve against ``path``'s folder."""
    shown = display if display is not None else str(path)
    base = path.parent
    top = TomlFields(document, path=shown, table="")
    top.only({"name", "description", "seed", "replicates", "output", "pricing", "workload",
              "model", "agent", "conditions", "limits"})
    top.string("description", optional=True, nonblank=False)
    name = top.matching("name", _SLUG, "a lowercase slug like agent-managers")
    assert name is not None
    model_table = top.table_of("model")
    assert model_table is not None
    model = parse_model(model_table)
    w = top.table_of("workload")
    assert w is not None
    fmt = w.req_enum("format", agent_formats())
    # An agent run's output limit is per turn ([agent]); it sends no stop sequences.
    for key in ("max_output_tokens", "stop"):
        if key in model_table.value:
            model_table.fail(key, f"no {key} (an agent run sets max_output_tokens in "
                             "[agent] and sends no stop sequences)", model_table.value[key])
    if fmt != "agent_traces" and model.temperature != 0.0:
        model_table.fail("temperature", f"0 (a {fmt} run samples at temperature 0)",
                         model.temperature)
    w.only({"format", "source", "limit", "offset", "tokenizer"}
           | ({"trace_format"} if fmt == "agent_traces" else set()))
    sources, trace_format = _sources(w, fmt, base)
    raw = top.value.get("conditions")
    if not isinstance(raw, list) or not 2 <= len(raw) <= BOUNDS["conditions"]:
        top.fail("conditions", f"an array of 2 to {BOUNDS['conditions']} tables "
                 "([[conditions]]; the first is the baseline)", raw)
    assert isinstance(raw, list)
    conditions: list[AgentConditionSpec] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise FieldError(shown, None, f"[conditions][{index}]", "a table", item)
        cond = _condition(TomlFields(item, path=shown, table=f"conditions][{index}"))
        if any(c.name == cond.name for c in conditions):
            raise FieldError(shown, None, f"[conditions][{index}].name",
                             "a name used by no other condition", cond.name)
        if cond.native_context and fmt in SESSION_FORMATS:
            raise FieldError(shown, None, f"[conditions][{index}].native_context",
                             f"false (a {fmt} run does not turn on the provider's context "
                             "management)", True)
        conditions.append(cond)
    agent = top.table_of("agent", optional=True)
    limits: dict[str, int] = {}
    if agent is not None:
        agent.only(set(_keys(fmt)))
        for key in _keys(fmt):
            value = agent.integer(key, minimum=1, maximum=BOUNDS["budget"], optional=True)
            if value is not None:
                limits[key] = value
    timeout_s = 60.0
    table = top.table_of("limits", optional=True)
    if table is not None:
        table.only({"timeout_s"})
        timeout_s = table.number("timeout_s", minimum=0.001, maximum=BOUNDS["timeout_s"],
                                 optional=True) or 60.0
    pricing = top.string("pricing", optional=True)
    if pricing is None:
        if not provider_factory(model.provider).fixture:
            top.fail("pricing", 'a pricing snapshot path or "self_hosted"')
        pricing = "zero_cost_fixture"
    elif pricing != "self_hosted":
        pricing = _resolve(base, pricing)
    return AgentSpec(
        name=name, seed=top.req_int("seed", minimum=0, maximum=2**53 - 1),
        replicates=top.req_int("replicates", minimum=1, maximum=BOUNDS["replicates"]),
        output=Path(_resolve(base, top.req_string("output"))), format=fmt, sources=sources,
        trace_format=trace_format,
        limit=w.integer("limit", minimum=1, maximum=BOUNDS["limit"], optional=True),
        offset=w.integer("offset", minimum=0, maximum=BOUNDS["limit"], optional=True) or 0,
        tokenizer=w.string("tokenizer", optional=True), model=model, pricing=pricing,
        conditions=tuple(conditions), agent=limits, timeout_s=timeout_s, path=path,
        digest=digest)


def load_agent_spec(path: str | os.PathLike[str]) -> AgentSpec:
    """Load and validate an agent-run spec file; every error names its line."""
    target = Path(path)
    document, lines = load_toml_lines(target, display=str(path))
    with lines.locating(str(path)):
        return parse_agent_spec(document, path=target.resolve(), display=str(path),
                                digest=blake3_file(target))
