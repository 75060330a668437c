"""BFCL's multi-turn checking semantics, on BFCL's own API classes run in-process.

The tools of a multi-turn task are instances of the executable API classes shipped in the
``bfcl-eval`` wheel (``bfcl_eval/eval_checker/multi_turn_eval/func_source_code``), each
loaded with the task's ``initial_config`` as BFCL loads it (``_load_scenario`` on a deep
copy, ``long_context`` for the long-context category). :class:`ApiEnvironment` runs calls
on them; :func:`check_trajectory` judges a whole trajectory as BFCL's
``multi_turn_checker`` (``eval_checker/multi_turn_eval/multi_turn_checker.py`` and
``_evaluate_single_multi_turn_entry`` in ``eval_checker/eval_runner.py``, bfcl-eval
2026.3.23) does:

- a trajectory has one entry per turn (else ``multi_turn:force_terminated``), each a list
  of steps, each step the calls of one model response; steps without calls are dropped;
- per turn, the model's calls run on the model's instances and the ground truth's on a
  second set, both kept across turns; a turn whose ground truth is empty is not checked
  (the model was expected to fail to act there); otherwise the turn fails when the model
  made no call (``multi_turn:empty_turn_model_response``), when any public attribute of
  any instance differs from the ground truth's (``multi_turn:instance_state_mismatch``:
  state-based), or when a result of the turn's ground-truth calls is missing from all the
  model's results so far, compared as a multiset in any order
  (``multi_turn:execution_response_mismatch``: response-based);
- a result is the method's return value as text: a string as it is, a dict as JSON
  (``str`` when not serializable), anything else by ``str``; an exception is
  ``Error during execution: <message>``; the names BFCL refuses (``kill``, ``exit``, ...)
  give ``Error during execution: Function call NAME is not allowed.``.

Departures. Where BFCL runs a model's text as Python (``eval``): a call's arguments must
be literals (:func:`parse_api_call`), and a name that is no method of the task's classes
gives ``Error during execution: name 'NAME' is not defined`` (BFCL would run a builtin of
that name). Every shipped ground-truth call is a bare name with literal arguments. Where a
model's arguments would hold the run for hours or leak into the process: an ``exponent``
or ``precision`` argument beyond :data:`MAX_MAGNITUDE` in size gives ``Error during
execution: ...`` without running (MathAPI's ``power`` computes ``base ** exponent``
exactly; ``logarithm`` and ``square_root`` compute to ``precision`` digits; the shipped
ground truths stay below 4,000), and MathAPI's settings of the process-wide ``decimal``
context and ``mpmath.mp.dps`` are undone after each call (each of its methods sets them
before it computes, so no result changes).
"""

from __future__ import annotations

import ast
import copy
import decimal
import importlib
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxbench.core import InputError
from ctxbench.workloads.calls import ToolCall

__all__ = ["API_CLASSES", "MAX_MAGNITUDE", "REFUSED_NAMES", "ApiCall", "ApiEnvironment",
           "MultiTurnCheck", "check_trajectory", "parse_api_call"]

_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
API_CLASSES: dict[str, str] = {
    "GorillaFileSystem": f"{_PREFIX}.gorilla_file_system",
    "MathAPI": f"{_PREFIX}.math_api",
    "MessageAPI": f"{_PREFIX}.message_api",
    "TwitterAPI": f"{_PREFIX}.posting_api",
    "TicketAPI": f"{_PREFIX}.ticket_api",
    "TradingBot": f"{_PREFIX}.trading_bot",
    "TravelAPI": f"{_PREFIX}.travel_booking",
    "VehicleControlAPI": f"{_PREFIX}.vehicle_control",
}
"""The multi-turn categories' API classes and their modules (BFCL's
``CLASS_FILE_PATH_MAPPING``, less the web-search and memory classes of other categories)."""
_STATELESS = frozenset({"MathAPI"})
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen",
                           "run"})
MAX_MAGNITUDE = 10_000
"""The largest ``exponent`` or ``precision`` argument a call may pass (see the module doc)."""
_BOUNDED = ("exponent", "precision")
_INSTALL = "pip install --no-deps bfcl-eval && pip install mpmath==1.3.0"


@dataclass(frozen=True, slots=True)
class ApiCall:
    """One call of a multi-turn tool: positional and keyword arguments (literal values)."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_tool_call(cls, call: ToolCall) -> ApiCall:
        """A native or decoded tool call (keyword arguments only)."""
        return cls(call.name, (), dict(call.arguments))

    def render(self) -> str:
        """The call as BFCL writes it, ``cd(folder='document')``."""
        parts = [repr(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


def parse_api_call(text: str) -> ApiCall:
    """A call written as BFCL writes its ground truth; InputError when it is anything but
    a bare name applied to literal arguments. Nothing is evaluated."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise InputError(f"expected a call such as f(a=1), got {text[:80]!r}: {exc.msg}"
                         ) from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise InputError(f"expected a call of a bare name, got {text[:80]!r}")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("a ** expansion")
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
    except ValueError as exc:
        raise InputError(f"expected literal arguments, got {text[:80]!r}: {exc}") from None
    return ApiCall(node.func.id, args, kwargs)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(API_CLASSES[name])
    except ImportError as exc:
        raise InputError(f"BFCL's multi-turn API class {name} needs bfcl-eval and its "
                         f"mpmath ({exc}); install them with: {_INSTALL}") from None


def _result_text(value: Any) -> str:
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class ApiEnvironment:
    """The task's API instances, loaded with its initial configuration; calls run on them
    in order and change their state, as BFCL's do."""

    def __init__(self, classes: Sequence[str], initial_config: Mapping[str, Any], *,
                 long_context: bool) -> None:
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] = {}
        for name in classes:
            if name not in API_CLASSES:
                raise InputError(f"involved_classes: expected one of "
                                 f"{', '.join(API_CLASSES)}, got {name!r}")
            instance = getattr(_module(name), name)()
            if name not in _STATELESS:
                instance._load_scenario(copy.deepcopy(dict(initial_config).get(name, {})),
                                        long_context=long_context)
            self.instances[name] = instance
            for method_name, method in inspect.getmembers(instance, inspect.ismethod):
                if not method_name.startswith("_"):
                    self._methods[method_name] = method

    def execute(self, call: ApiCall) -> str:
        """The call's result text (an error text when it fails)."""
        if call.name in REFUSED_NAMES:
            return f"Error during execution: Function call {call.name} is not allowed."
        method = self._methods.get(call.name)
        if method is None:
            return f"Error during execution: name {call.name!r} is not defined"
        for key in _BOUNDED:
            value = call.kwargs.get(key)
            if isinstance(value, int | float) and not abs(value) <= MAX_MAGNITUDE:
                return (f"Error during execution: {key} must be at most {MAX_MAGNITUDE} in "
                        f"size, got {value!r}")
        mpmath = sys.modules.get("mpmath")
        dps = mpmath.mp.dps if mpmath is not None else None
        try:
            with decimal.localcontext():
                value = method(*copy.deepcopy(call.args), **copy.deepcopy(dict(call.kwargs)))
        except Exception as exc:  # a tool's failure is its result text, as in BFCL
            return f"Error during execution: {exc}"
        finally:
            if mpmath is not None:
                mpmath.mp.dps = dps
        return _result_text(value)

    def state(self) -> dict[str, dict[str, Any]]:
        """Each instance's public attributes (what the state check compares)."""
        return {name: {k: v for k, v in vars(instance).items() if not k.startswith("_")}
                for name, instance in self.instances.items()}


@dataclass(frozen=True, slots=True)
class MultiTurnCheck:
    """A trajectory's verdict; ``turn`` is where it failed (None when valid or when the
    number of turns is wrong)."""

    valid: bool
    error_type: str | None = None
    turn: int | None = None
    message: str = ""


def _differences(model: Any, truth: Any) -> list[str]:
    return [attr for attr in vars(truth) if not attr.startswith("_")
            and getattr(model, attr) != getattr(truth, attr)]


def _missing(truth: Sequence[str], model: Sequence[str]) -> list[str]:
    pool = list(model)
    missing = []
    for item in truth:
        try:
            pool.remove(item)
        except ValueError:
            missing.append(item)
    return missing


def check_trajectory(trajectory: Sequence[Sequence[Sequence[ApiCall]]],
                     ground_truth: Sequence[Sequence[ApiCall]],
                     environment: Callable[[], ApiEnvironment]) -> MultiTurnCheck:
    """BFCL's multi-turn verdict (see the module doc); ``environment`` makes a fresh set of
    the task's instances (called twice: the model's and the ground truth's)."""
    if len(trajectory) != len(ground_truth):
        return MultiTurnCheck(False, "multi_turn:force_terminated", None,
                              f"{len(trajectory)} turns, the ground truth has "
                              f"{len(ground_truth)}")
    model_env, truth_env = environment(), environment()
    so_far: list[str] = []
    for turn, (steps, truth_calls) in enumerate(zip(trajectory, ground_truth, strict=True)):
        made = [step for step in steps if step]
        for step in made:
            so_far.extend(model_env.execute(call) for call in step)
        truth_results = [truth_env.execute(call) for call in truth_calls]
        if not truth_calls:
            continue
        if not made:
            return MultiTurnCheck(False, "multi_turn:empty_turn_model_response", turn,
                                  f"no call in turn {turn}")
        for name, truth in truth_env.instances.items():
            differ = _differences(model_env.instances[name], truth)
            if differ:
                return MultiTurnCheck(False, "multi_turn:instance_state_mismatch", turn,
                                      f"{name}: {', '.join(differ)} differ")
        missing = _missing(truth_results, so_far)
        if missing:
            return MultiTurnCheck(False, "multi_turn:execution_response_mismatch", turn,
                                  f"{len(missing)} ground-truth result(s) missing: "
                                  f"{missing[0][:120]!r}")
    return MultiTurnCheck(True)
