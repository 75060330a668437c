"""Experiment specs: one TOML file, validated with located errors.

    name = "support-qa"          # run name (a slug)
    seed = 7
    replicates = 3
    output = "runs/support-qa"   # relative to this file
    pricing = "self_hosted"      # or a pricing snapshot JSON path

    [workload]
    source = "builtin:enterprise-seed"   # or an ECEB benchmark.json, or a QA .jsonl
    [model]
    provider = "openai"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"       # the NAME of the variable, never the key
    [[conditions]]
    strategy = "full_permitted_context"
    [[conditions]]
    strategy = "compiled"
    budgets = "ladder"

Errors render as ``exp.toml: [model].temperature: expected a number, got the string "low"``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.core import FieldError, InputError, blake3_file
from ctxbench.core.entrypoints import own_entries
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.runner.execution import ExecutionSpec, parse_execution
from ctxbench.runner.providers.registry import provider_factory, provider_names
from ctxbench.runner.scorers import SCORERS
from ctxbench.runner.tomlfields import TomlFields
from ctxbench.runner.workload_formats import (
    WORKLOAD_GROUP,
    SourceRefused,
    workload_format,
    workload_format_names,
)

__all__ = ["BFCL_PREFIX", "BOUNDS", "STRATEGIES", "TOOL_STRATEGIES",
           "ConditionSpec", "ExperimentSpec", "JudgeSpec", "Limits", "ModelSpec",
           "TomlFields", "WorkloadSpec", "load_spec", "parse_model", "parse_spec"]

STRATEGIES = ("full_permitted_context", "naive_top_k", "compiled", "external")
BUILTIN_SEED = "builtin:enterprise-seed"
BFCL_PREFIX = "bfcl:"
# Strategies that select among tool schemas (ctxbench.workloads.tools).
TOOL_STRATEGIES = ("full_permitted_context", "naive_top_k")
_SLUG = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,47}")
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

# Upper bounds of every count in a spec (docs/runner.md lists them). Each is far above
# any real experiment and low enough that the run's memory and arithmetic stay bounded.
BOUNDS: dict[str, int] = {
    "replicates": 1000,
    "conditions": 64,
    "budgets": 64,             # budgets per condition
    "budget": 10_000_000,      # tokens
    "max_output_tokens": 1_000_000,
    "stop": 16,                # stop sequences
    "n_ctx": 10_000_000,
    "n_threads": 256,
    "prompt_cache_mb": 262_144,
    "limit": 10_000_000,       # workload tasks
    "concurrency": 1024,
    "requests_per_minute": 1_000_000_000,
    "tokens_per_minute": 1_000_000_000,
    "timeout_s": 3600,
    "retries": 20,
    "backoff_s": 600,
    "max_retry_wait_s": 3600,
}


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    source: str
    format: str  # a workload format (ctxbench.runner.workload_formats): eceb, qa, bfcl, ...
    corpus: Path | None
    tokenizer: str | None
    limit: int | None
    offset: int = 0  # BFCL: skip the category's first N tasks (a slice disjoint from them)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    model: str
    temperature: float
    max_output_tokens: int
    stop: tuple[str, ...]
    base_url: str | None
    api_key_env: str | None
    model_path: str | None
    n_ctx: int
    n_threads: int | None
    rope_freq_scale: float | None = None
    prompt_cache_mb: int = 0
    api: str | None = None  # one of the provider's ``apis``; None: its default


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """An optional model judge: its own model, and the rubric file (None = built-in)."""

    model: ModelSpec
    rubric: Path | None


@dataclass(frozen=True, slots=True)
class ConditionSpec:
    """One strategy; ``budgets`` empty for unbudgeted, None-free; ``ladder`` = task ladders."""

    name: str
    strategy: str
    budgets: tuple[int, ...]
    ladder: bool
    command: str | None
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Limits:
    """Execution limits; ``timeout_s`` is each attempt's wall-clock deadline."""

    concurrency: int
    requests_per_minute: int
    tokens_per_minute: int
    timeout_s: float
    retries: int
    backoff_s: float
    max_retry_wait_s: float = 60.0


@dataclass(frozen=True, slots=True)
class ExperimentSpec:
    """A validated experiment; ``digest`` is the BLAKE3 of the TOML file's bytes."""

    name: str
    seed: int
    replicates: int
    output: Path
    workload: WorkloadSpec
    model: ModelSpec
    conditions: tuple[ConditionSpec, ...]
    pricing: str  # "self_hosted" or a snapshot path
    task_scorer: str
    judge: JudgeSpec | None
    preregistration: Path | None
    limits: Limits
    path: Path
    digest: str
    document: dict[str, Any]
    execution: ExecutionSpec = field(default_factory=ExecutionSpec)


def _resolve(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _workload(t: TomlFields, base: Path) -> WorkloadSpec:
    t.only({"source", "format", "corpus", "tokenizer", "limit", "offset"})
    source = t.req_string("source")
    # A source with a format's prefix (bfcl:) is that format's; any other takes any
    # unprefixed format, by default the first of ctxbench's own that claims it.
    formats = {name: workload_format(name) for name in workload_format_names()}
    prefixed = [n for n, f in formats.items() if f.prefix and source.startswith(f.prefix)]
    allowed = prefixed[:1] or [n for n, f in formats.items() if not f.prefix]
    fmt = t.enum("format", allowed, optional=True) or next(
        (n for n in own_entries(WORKLOAD_GROUP) if n in allowed
         and formats[n].default_for(source)), allowed[0])
    try:
        source = formats[fmt].resolve_source(source, base)
    except SourceRefused as exc:
        t.fail("source", str(exc), source)
    corpus = t.string("corpus", optional=True)
    offset = t.integer("offset", minimum=0, maximum=BOUNDS["limit"], optional=True)
    if offset is not None and not formats[fmt].takes_offset:
        takers = " or ".join(n for n, f in formats.items() if f.takes_offset)
        t.fail("offset", f"no offset (only a {takers} workload takes one)", offset)
    return WorkloadSpec(source=source, format=fmt,
                        corpus=_resolve(base, corpus) if corpus else None,
                        tokenizer=t.string("tokenizer", optional=True),
                        limit=t.integer("limit", minimum=1, maximum=BOUNDS["limit"],
                                        optional=True), offset=offset or 0)


def _model(t: TomlFields) -> ModelSpec:
    t.only({"provider", "model", "temperature", "max_output_tokens", "stop", "base_url",
            "api_key_env", "model_path", "n_ctx", "n_threads", "rope_freq_scale",
            "prompt_cache_mb", "api"})
    provider = t.req_enum("provider", provider_names())
    factory = provider_factory(provider)
    apis: tuple[str, ...] = getattr(factory, "apis", ())
    if not apis and "api" in t.value:
        t.fail("api", f"no api (the provider {provider} speaks one API)", t.value["api"])
    api = t.enum("api", list(apis), optional=True) if apis else None
    if api == "responses" and t.value.get("stop"):  # OpenAI's Responses API has none
        t.fail("stop", 'no stop sequences (api = "responses" takes none)', t.value["stop"])
    key_env = t.matching("api_key_env", _ENV, "an environment variable NAME (not the key)",
                         optional=True)
    temperature = t.number("temperature", minimum=0, maximum=2, optional=True)
    return ModelSpec(
        provider=provider,
        model=t.string("model", optional=True) or factory.default_model
        or t.req_string("model"),
        temperature=0.0 if temperature is None else temperature,
        max_output_tokens=t.integer("max_output_tokens", minimum=1,
                                    maximum=BOUNDS["max_output_tokens"], optional=True) or 256,
        stop=_stops(t),
        base_url=t.string("base_url", optional=True),
        api_key_env=key_env,
        model_path=t.string("model_path", optional=True),
        n_ctx=t.integer("n_ctx", minimum=256, maximum=BOUNDS["n_ctx"], optional=True) or 8192,
        n_threads=t.integer("n_threads", minimum=1, maximum=BOUNDS["n_threads"],
                            optional=True),
        rope_freq_scale=t.number("rope_freq_scale", minimum=0.01, maximum=1, optional=True),
        prompt_cache_mb=t.integer("prompt_cache_mb", minimum=0,
                                  maximum=BOUNDS["prompt_cache_mb"], optional=True) or 0,
        api=api)


def _stops(t: TomlFields) -> tuple[str, ...]:
    stops = t.strings("stop")
    if len(stops) > BOUNDS["stop"] or any(not s or len(s) > 256 for s in stops):
        t.fail("stop", f"at most {BOUNDS['stop']} stop sequences of 1-256 characters",
               list(stops))
    return stops


def _condition(t: TomlFields) -> ConditionSpec:
    t.only({"name", "strategy", "budgets", "command", "params"})
    strategy = t.req_string("strategy")
    budgeted, own_name = _strategy_budgeted(t, strategy)
    name = t.matching("name", _SLUG, "a lowercase slug like compiled or my-packer",
                      optional=True) or own_name
    raw = t.value.get("budgets")
    ladder = raw == "ladder"
    budgets: tuple[int, ...] = ()
    top = BOUNDS["budget"]
    if isinstance(raw, list) and raw and len(raw) <= BOUNDS["budgets"] and all(
            isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= top for b in raw):
        budgets = tuple(raw)
        if list(budgets) != sorted(set(budgets)):
            t.fail("budgets", "strictly ascending budgets", raw)
    elif raw is not None and not ladder:
        t.fail("budgets", f"a non-empty array of at most {BOUNDS['budgets']} integers in "
               f'[1, {top}] or the string "ladder"', raw)
    if strategy == "full_permitted_context" and (budgets or ladder):
        t.fail("budgets", "no budgets (the full permitted context is not budgeted)", raw)
    if budgeted is False and (budgets or ladder):
        t.fail("budgets", f"no budgets (the strategy {strategy} is not budgeted)", raw)
    if (strategy in ("naive_top_k", "compiled") or budgeted) and not (budgets or ladder):
        t.fail("budgets", 'budgets (an array of integers >= 1, or "ladder")',
               got_text="nothing (the field is missing)")
    command = t.string("command", optional=True)
    if strategy == "external" and command is None:
        t.fail("command", "a `module:function` or a command line for the external strategy")
    params = t.value.get("params")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        t.fail("params", "a table of extra provider request parameters", params)
    return ConditionSpec(name=name, strategy=strategy, budgets=budgets, ladder=ladder,
                         command=command, params=dict(params))


def _strategy_budgeted(t: TomlFields, strategy: str) -> tuple[bool | None, str]:
    """Whether an installed strategy or a ``module:attr`` target (docs/strategies.md)
    needs budgets (None for the built-in four, whose rules follow), and the name it goes
    by. An unknown name fails, naming what is installed."""
    if strategy in STRATEGIES:
        return None, strategy
    from ctxbench.compiler.discovery import installed_strategies, is_target, strategy_facts

    known = [i.name for i in installed_strategies() if i.problem is None]
    if strategy not in known and not is_target(strategy):
        t.fail("strategy", f"one of {', '.join(dict.fromkeys([*STRATEGIES, *known]))} "
               "(installed: ctxbench strategies), or module:attr", strategy)
    try:
        found = strategy_facts(strategy)
    except InputError as exc:
        t.fail("strategy", f"a strategy that loads ({str(exc)[:200]})", strategy)
    return bool(found.budgeted), found.name


def _limits(t: TomlFields | None) -> Limits:
    if t is None:
        return Limits(4, 0, 0, 60.0, 3, 1.0, 60.0)
    t.only({"concurrency", "requests_per_minute", "tokens_per_minute", "timeout_s",
            "retries", "backoff_s", "max_retry_wait_s"})
    timeout = t.number("timeout_s", minimum=0.001, maximum=BOUNDS["timeout_s"], optional=True)
    backoff = t.number("backoff_s", minimum=0, maximum=BOUNDS["backoff_s"], optional=True)
    wait = t.number("max_retry_wait_s", minimum=0, maximum=BOUNDS["max_retry_wait_s"],
                    optional=True)
    retries = t.integer("retries", minimum=0, maximum=BOUNDS["retries"], optional=True)
    return Limits(
        concurrency=t.integer("concurrency", minimum=1, maximum=BOUNDS["concurrency"],
                              optional=True) or 4,
        requests_per_minute=t.integer("requests_per_minute", minimum=0,
                                      maximum=BOUNDS["requests_per_minute"],
                                      optional=True) or 0,
        tokens_per_minute=t.integer("tokens_per_minute", minimum=0,
                                    maximum=BOUNDS["tokens_per_minute"], optional=True) or 0,
        timeout_s=60.0 if timeout is None else timeout,
        retries=3 if retries is None else retries,
        backoff_s=1.0 if backoff is None else backoff,
        max_retry_wait_s=60.0 if wait is None else wait)


def _workload_scoring(top: TomlFields, scoring: TomlFields | None, workload: WorkloadSpec,
                      conditions: list[ConditionSpec], judge: JudgeSpec | None) -> None:
    """A workload with its own scorer (BFCL, LongBench) takes no task_score; tool-schema
    tasks take tool strategies."""
    fmt = workload_format(workload.format)
    if scoring is not None and scoring.value.get("task_score") is not None:
        scoring.fail("task_score", f"no task_score (a {workload.format} workload is scored "
                     f"by {fmt.own_scorer})", scoring.value.get("task_score"))
    if judge is not None and fmt.judge_refusal is not None:
        top.fail("scoring", fmt.judge_refusal, got_text="a [scoring.judge] table")
    if fmt.context != "tool_schemas":
        return
    for index, cond in enumerate(conditions):
        # Tool strategies select schemas; any other installed strategy builds its packet
        # from the task's schemas as a corpus (ctxbench.workloads.tool_packets).
        if cond.strategy == "external":
            raise FieldError(top.path, None, f"[conditions][{index}].strategy",
                             "a tool-schema strategy (" + ", ".join(TOOL_STRATEGIES) +
                             ") or an installed document strategy", cond.strategy)
        if cond.ladder:
            raise FieldError(top.path, None, f"[conditions][{index}].budgets",
                             "an array of budgets (BFCL tasks have no budget ladder)",
                             "ladder")


def parse_spec(document: dict[str, Any], *, path: Path, display: str | None = None,
               digest: str = "") -> ExperimentSpec:
    """Validate a decoded TOML document; relative paths resolve against ``path``'s folder."""
    shown = display if display is not None else str(path)
    base = path.parent
    top = TomlFields(document, path=shown, table="")
    top.only({"name", "description", "seed", "replicates", "output", "pricing", "workload",
              "model", "conditions", "scoring", "limits", "cef", "execution"})
    top.string("description", optional=True, nonblank=False)
    name = top.matching("name", _SLUG, "a lowercase slug like support-qa")
    assert name is not None
    model = _model(top.table_of("model"))  # type: ignore[arg-type]
    workload = _workload(top.table_of("workload"), base)  # type: ignore[arg-type]
    raw_conditions = top.value.get("conditions")
    if not isinstance(raw_conditions, list) or not raw_conditions or \
            len(raw_conditions) > BOUNDS["conditions"]:
        top.fail("conditions", f"an array of 1 to {BOUNDS['conditions']} tables "
                 "([[conditions]])", raw_conditions)
    conditions = []
    assert isinstance(raw_conditions, list)
    for index, item in enumerate(raw_conditions):
        label = f"[conditions][{index}]"
        if not isinstance(item, dict):
            raise FieldError(shown, None, label, "a table", item)
        conditions.append(_condition(TomlFields(item, path=shown, table=f"conditions][{index}")))
    names = [c.name for c in conditions]
    for index, cond in enumerate(conditions):
        if names.index(cond.name) != index:
            raise FieldError(shown, None, f"[conditions][{index}].name",
                             "a name used by no other condition", cond.name)
    if not any(c.strategy == "full_permitted_context" for c in conditions):
        top.fail("conditions", "a full_permitted_context condition (the paired baseline)",
                 got_text="none among " + ", ".join(names))
    if len(conditions) < 2:
        top.fail("conditions", "the baseline and at least one other condition (a paired "
                 "experiment)", got_text="only " + names[0])
    pricing = top.string("pricing", optional=True)
    if pricing is None:
        if not provider_factory(model.provider).fixture:
            top.fail("pricing", 'a pricing snapshot path or "self_hosted"')
        pricing = "zero_cost_fixture"
    elif pricing != "self_hosted":
        pricing = str(_resolve(base, pricing))
    scoring = top.table_of("scoring", optional=True)
    fmt = workload_format(workload.format)
    scorer = fmt.default_scorer
    judge: JudgeSpec | None = None
    if scoring is not None:
        scoring.only({"task_score", "judge"})
        scorer = scoring.enum("task_score", SCORERS, optional=True) or scorer
        judge_table = scoring.table_of("judge", optional=True)
        if judge_table is not None:
            rubric = judge_table.string("rubric", optional=True)
            judge_table.value = {k: v for k, v in judge_table.value.items() if k != "rubric"}
            judge = JudgeSpec(model=_model(judge_table),
                              rubric=_resolve(base, rubric) if rubric else None)
    if fmt.own_scorer is not None:
        _workload_scoring(top, scoring, workload, conditions, judge)
        scorer = fmt.own_scorer
    elif (refused := fmt.check_scorer(scorer)) is not None:
        (scoring or top).fail("task_score", refused, scorer)
    cef = top.table_of("cef", optional=True)
    prereg: Path | None = None
    if cef is not None:
        cef.only({"preregistration"})
        prereg_text = cef.string("preregistration", optional=True)
        prereg = _resolve(base, prereg_text) if prereg_text else None
    output = top.req_string("output")
    return ExperimentSpec(
        name=name, seed=top.req_int("seed", minimum=0, maximum=2**53 - 1),
        replicates=top.req_int("replicates", minimum=1, maximum=BOUNDS["replicates"]),
        output=_resolve(base, output), workload=workload, model=model,
        conditions=tuple(conditions), pricing=pricing, task_scorer=scorer, judge=judge,
        preregistration=prereg, limits=_limits(top.table_of("limits", optional=True)),
        path=path, digest=digest, document=document,
        execution=parse_execution(top.table_of("execution", optional=True)))


def load_spec(path: str | os.PathLike[str]) -> ExperimentSpec:
    """Load and validate an experiment spec TOML file; every error names its line."""
    target = Path(path)
    document, lines = load_toml_lines(target, display=str(path))
    with lines.locating(str(path)):
        return parse_spec(document, path=target.resolve(), display=str(path),
                          digest=blake3_file(target))


# The agent runs' spec reader (:mod:`ctxbench.runner.agent_spec`) reads the same [model]
# table.
parse_model = _model
