"""The tokens of an Inspect sample that are the tested model's context, read by version.

**Roles.** ``EvalSample.model_usage`` is keyed by model name only, so when a scorer calls
the model under test -- ``model_graded_qa()`` with no grader role bound grades with the
evaluated model itself -- the grader's tokens are summed into the tested model's entry,
and ``role_usage`` stays empty (Inspect fills it only for calls made through a bound
role). The sample's model events say which call was which: each ``ModelEvent`` names its
``model`` and ``role`` and sits in a span, and a scorer's calls sit inside the
``scorers`` span. So the tested model's context is the usage of its model events with no
role outside the scorers span; every other call (a grader, a bound role, another model)
is reported beside it, never as context. The events must account for
``model_usage[eval.model]`` exactly (cache hits, ``cache: "read"``, are not billed and
not in it), except for what the model's native compaction (a ``compaction`` event with
no role, whose usage Inspect records without a model event) can explain; otherwise the
sample is refused with a located error rather than counted with a grader's tokens in it.
A log scored afterwards by ``inspect score`` holds the grader's events but not its usage
in ``model_usage``; the events outside scoring then account for it.

**Versions.** Inspect 0.3.184 (commit bf26615, "Normalize handling of cached tokens in
ModelUsage") made ``input_tokens`` exclude cache reads for every provider. Before it,
the OpenAI-style adapters (chat completions, responses, o1, Grok) wrote the provider's
prompt count, cache reads included, while Anthropic's and others' already excluded them.
``total_tokens`` is the provider's own total in both cases. So, with ``read`` =
``input_tokens_cache_read`` and ``write`` = ``input_tokens_cache_write``:

* written by 0.3.184 or later: uncached input = ``input_tokens``, and ``total_tokens``
  must equal ``input_tokens + read + write + output_tokens``;
* written before 0.3.184 (or by a 0.3.184 pre-release): ``total_tokens`` says which rule
  the provider's adapter followed -- ``input_tokens + read + write + output_tokens``
  (reads excluded) or ``input_tokens + write + output_tokens`` (reads included: uncached
  input = ``input_tokens - read``); a total that fits neither is an error, and so is a
  log that records no total while it reports cache reads (the rules cannot be told
  apart).

Reasoning: ``output_tokens`` includes ``reasoning_tokens`` (OpenAI, Anthropic), except
that before 0.3.245 (commit 659d27c, "Google: Include thinking tokens in reported
``output_tokens``") Google's adapter wrote the candidates alone, with the thinking tokens
beside them. For a log before 0.3.245 a total of ``... + output_tokens +
reasoning_tokens`` therefore means output excludes reasoning. A total that fits more than
one reading is refused as well.

A ``total_tokens`` of 0 with other counts above 0 means the provider reported no total
(Inspect's default); the sum is then not checked, unless the version leaves two readings
open (cache reads, or reasoning, before the releases above), which is an error. The
version is ``eval.packages["inspect_ai"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ctxbench.core import InputError, TokenUsage

__all__ = ["NORMALIZED_IN", "REASONING_IN_OUTPUT_IN", "UsageRule", "UsageSplit", "split_usage",
           "to_breakdown", "usage_rule"]

NORMALIZED_IN = (0, 3, 184)
"""The first Inspect release whose ``input_tokens`` excludes cache reads for all providers."""
REASONING_IN_OUTPUT_IN = (0, 3, 245)
"""The first Inspect release whose Google adapter counts thinking inside ``output_tokens``."""
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(.*)")
_PRE = re.compile(r"[.\-+]?(dev|a|b|rc)\d*")
_SCORING = ("scorers", "scorer")


@dataclass(frozen=True, slots=True)
class UsageRule:
    """How a log's ``ModelUsage`` counts cache reads and reasoning, by its Inspect version."""

    version: str
    reads_maybe_in_input: bool
    reasoning_maybe_outside_output: bool


@dataclass(frozen=True, slots=True)
class UsageSplit:
    """One sample's usage: the tested model's own calls, and every other call by label."""

    tested: Any | None
    """The summed ``ModelUsage`` of the tested calls (None: the sample recorded none)."""
    others: tuple[tuple[str, int], ...]
    """``(label, tokens)`` of calls that are not the tested context, e.g. a grader's."""
    tested_cost: float | None
    """The tested calls' ``total_cost`` (None when any of them has none)."""
    request_id: str | None = None
    """The response ``id`` of the last tested call whose API call the log recorded."""


def usage_rule(log: Any, path: str) -> UsageRule:
    """The rule for the log's Inspect version (``eval.packages.inspect_ai``)."""
    packages = getattr(log.eval, "packages", None) or {}
    version = packages.get("inspect_ai")
    match = _VERSION.match(version) if isinstance(version, str) else None
    if match is None:
        raise InputError(f"{path}: eval.packages.inspect_ai: expected the version of Inspect "
                         f"that wrote the log, got {version!r}")
    release = tuple(int(part) for part in match.groups()[:3])
    pre = _PRE.match(match.group(4)) is not None

    def before(first: tuple[int, int, int]) -> bool:
        return release < first or (release == first and pre)

    return UsageRule(str(version), before(NORMALIZED_IN), before(REASONING_IN_OUTPUT_IN))


def to_breakdown(usage: Any, rule: UsageRule, where: str, field: str) -> TokenUsage:
    """ctxbench's disjoint breakdown of one ``ModelUsage``, checked against its total."""
    read = usage.input_tokens_cache_read or 0
    write = usage.input_tokens_cache_write or 0
    reasoning = usage.reasoning_tokens or 0
    given, output, total = usage.input_tokens, usage.output_tokens, usage.total_tokens
    # (uncached input, the input's share of the total); (output without reasoning, share)
    inputs = [(given, given + read + write)]
    if rule.reads_maybe_in_input and 0 < read <= given:
        inputs.append((given - read, given + write))
    outputs = [(output - reasoning, output)] if output >= reasoning else []
    if rule.reasoning_maybe_outside_output and reasoning > 0:
        outputs.append((output, output + reasoning))
    if not outputs:
        raise InputError(f"{where}: {field}.output_tokens: expected at least reasoning_tokens "
                         f"({reasoning}), got {output}")
    if total == 0 and given + read + write + output > 0:  # the provider reported no total
        if len(inputs) > 1:
            raise InputError(f"{where}: {field}.total_tokens: expected the provider's total "
                             f"(a log of Inspect {rule.version}, before "
                             f"{_dotted(NORMALIZED_IN)}, may count cache reads in "
                             "input_tokens and only the total tells), got 0")
        if len(outputs) > 1:
            raise InputError(f"{where}: {field}.total_tokens: expected the provider's total "
                             f"(a log of Inspect {rule.version}, before "
                             f"{_dotted(REASONING_IN_OUTPUT_IN)}, may count reasoning "
                             "outside output_tokens and only the total tells), got 0")
        fits = [(inputs[0][0], outputs[0][0])]
    else:
        fits = sorted({(u, o) for u, i in inputs for o, n in outputs if i + n == total})
    if len(fits) != 1:
        rules = (f"input_tokens + input_tokens_cache_read + input_tokens_cache_write + "
                 f"output_tokens = {given + read + write + output}")
        if len(inputs) > 1:
            rules += (f", or {given + write + output} with the cache reads inside "
                      "input_tokens as Inspect before 0.3.184 wrote them for OpenAI-style "
                      "providers")
        if len(outputs) > 1:
            rules += (f", or {given + read + write + output + reasoning} with "
                      "reasoning_tokens outside output_tokens as Inspect before 0.3.245 "
                      "wrote them for Google")
        found = f"{total}, which fits more than one" if fits else str(total)
        raise InputError(f"{where}: {field}.total_tokens: expected {rules} (Inspect "
                         f"{rule.version}), got {found}")
    uncached, plain = fits[0]
    return TokenUsage(uncached, read, write, plain, reasoning)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _scorer_names(events: list[Any]) -> dict[str, str]:
    """Span id -> the name of the scorer whose span holds it (only spans in scoring)."""
    spans = {e.id: e for e in events if getattr(e, "event", None) == "span_begin"}
    inside: dict[str, str] = {}
    for span_id in spans:
        current: str | None = span_id
        seen: set[str] = set()
        while current is not None and current in spans and current not in seen:
            seen.add(current)
            kind = spans[current].type
            if kind in _SCORING:
                inside[span_id] = str(spans[current].name) if kind == "scorer" else kind
                break
            current = spans[current].parent_id
    return inside


def _tokens(usage: Any) -> int:
    parts = (usage.input_tokens + (usage.input_tokens_cache_read or 0)
             + (usage.input_tokens_cache_write or 0) + usage.output_tokens)
    return int(usage.total_tokens or parts)


def _counts(usage: Any) -> tuple[int, int, int, int]:
    return (usage.input_tokens, usage.input_tokens_cache_read or 0,
            usage.input_tokens_cache_write or 0, usage.output_tokens)


def split_usage(sample: Any, model: str, where: str) -> UsageSplit:
    """The tested model's usage in ``sample`` apart from graders and other roles."""
    recorded = (sample.model_usage or {}).get(model)
    events = list(sample.events or [])
    calls = [e for e in events if getattr(e, "event", None) == "model"
             and getattr(e, "cache", None) != "read" and e.output is not None
             and e.output.usage is not None]
    scoring = _scorer_names(events)
    tested: list[Any] = []
    others: dict[str, int] = {}
    of_model: list[Any] = []
    unscored: list[Any] = []
    request_id = None
    for call in calls:
        scorer = scoring.get(call.span_id) if call.span_id is not None else None
        if call.model == model:
            of_model.append(call.output.usage)
            if scorer is None:
                unscored.append(call.output.usage)
        if call.model == model and call.role is None and scorer is None:
            tested.append(call.output.usage)
            if call.call is not None:
                request_id = _response_id(call.call)
            continue
        label = call.model + (f" as role {call.role}" if call.role is not None else "") + (
            f" in scorer {scorer}" if scorer is not None else "")
        others[label] = others.get(label, 0) + _tokens(call.output.usage)
    if recorded is None:
        if tested:
            raise InputError(f"{where}: model_usage: expected the token usage of {model}, got "
                             f"none (its model events record {len(tested)} call(s))")
        return UsageSplit(None, tuple(sorted(others.items())), None, request_id)
    summed = _summed(of_model)
    remainder = [r - n for r, n in zip(_counts(recorded), summed, strict=True)]
    if any(remainder) and _summed(unscored) == list(_counts(recorded)):
        # Scored later by `inspect score`: the grader's events were appended to the
        # sample, its usage was not added to model_usage.
        of_model, remainder = unscored, [0, 0, 0, 0]
    compactions = [e for e in events if getattr(e, "event", None) == "compaction"]
    # Native compaction (ModelAPI.compact) records usage with no model event: the rest of
    # model_usage is the tested model's own when only its compaction can explain it.
    explained = not any(remainder) or (
        compactions and min(remainder) >= 0 and all(e.role is None for e in compactions))
    if not explained:
        raise InputError(
            f"{where}: model_usage.{model}: expected its model events to account for it, "
            f"to tell the tested model's calls from a grader's (input, cache reads, cache "
            f"writes, output: {', '.join(map(str, _counts(recorded)))}), got events summing "
            f"to {', '.join(map(str, summed))}")
    labels = tuple(sorted(others.items()))
    if len(of_model) == len(tested):
        return UsageSplit(recorded, labels, recorded.total_cost, request_id)
    parts = list(tested)
    if any(remainder):
        parts.append(type(recorded)(
            input_tokens=remainder[0], input_tokens_cache_read=remainder[1] or None,
            input_tokens_cache_write=remainder[2] or None, output_tokens=remainder[3],
            total_tokens=recorded.total_tokens - sum(u.total_tokens for u in of_model),
            reasoning_tokens=None if recorded.reasoning_tokens is None else
            recorded.reasoning_tokens - sum(u.reasoning_tokens or 0 for u in of_model)))
    if not parts:
        return UsageSplit(None, labels, None, request_id)
    total = parts[0]
    for usage in parts[1:]:
        total = total + usage
    costs = [u.total_cost for u in tested]
    cost = sum(costs) if tested and None not in costs and not any(remainder) else None
    return UsageSplit(total, labels, cost, request_id)


def _summed(usages: list[Any]) -> list[int]:
    return [sum(c) for c in zip(*(_counts(u) for u in usages), strict=True)] or [0] * 4


def _response_id(call: Any) -> str | None:
    response = call.response if isinstance(call.response, dict) else {}
    ident = response.get("id")
    return ident if isinstance(ident, str) and ident.strip() else None
