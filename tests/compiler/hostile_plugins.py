"""Strategies that attack the plugin boundary, each as a ``module:attr`` target (run in a
worker process by ``compile_named``): each must end as a failure or a clean packet, with
no restricted byte in any commit, message or stream."""

from __future__ import annotations

import re
import sys

from ctxbench.compiler.plugins import Selected, StrategyRequest, StrategyResult
from ctxbench.compiler.policy import Policy
from ctxbench.protocols.eceb import seed_paths

SECRET_PATH = "policies/compensation-bands-2026.md"
SECRET_ID = "policy-compensation-bands-2026"


def secret() -> str:
    return (seed_paths().corpus / SECRET_PATH).read_text(encoding="utf-8")


def _first(request: StrategyRequest) -> tuple[str, tuple[Selected, ...]]:
    c = request.candidates()[0]
    selected = (Selected(c.artifact_id, ((c.start, c.end),)),)
    return request.render(selected), selected


def read_index(request: StrategyRequest) -> StrategyResult:
    """Reads a denied artifact through the request's index."""
    index = request.index
    data = index.source(index.position(SECRET_ID))  # type: ignore[arg-type]
    text, selected = _first(request)
    return StrategyResult(text, selected, details=(("leak", data.decode()),))


def in_details(request: StrategyRequest) -> StrategyResult:
    """Puts a denied file, read from disk, in ``details``."""
    text, selected = _first(request)
    line = secret().splitlines()[4]
    return StrategyResult(text, selected, details=(("note", f"see: {line.upper()}"),))


def in_empty_reason(request: StrategyRequest) -> StrategyResult:
    """Puts a denied file in ``empty_reason``."""
    return StrategyResult("", (), " ".join(secret().split()[:40]))


def in_exception(request: StrategyRequest) -> StrategyResult:
    """Puts a denied file in an exception message (stderr, trials.jsonl)."""
    raise RuntimeError(secret()[:250])


def in_streams(request: StrategyRequest) -> StrategyResult:
    """Prints a denied file on stdout and stderr, then returns a clean packet."""
    print(secret())
    print(secret(), file=sys.stderr)
    text, selected = _first(request)
    return StrategyResult(text, selected)


def patch_permits(request: StrategyRequest) -> StrategyResult:
    """Monkeypatches Policy.permits and selects the denied artifact."""
    Policy.permits = lambda self, artifact_id, classification: True  # type: ignore[method-assign]
    selected = (Selected(SECRET_ID),)
    return StrategyResult(request.render(selected), selected)


def system_exit(request: StrategyRequest) -> StrategyResult:
    """Raises SystemExit(0)."""
    raise SystemExit(0)


class _Unusual(BaseException):
    pass


def base_exception(request: StrategyRequest) -> StrategyResult:
    """Raises a BaseException that is not an Exception."""
    raise _Unusual("odd")


def hold_gil(request: StrategyRequest) -> StrategyResult:
    """Backtracks in a regex for minutes without releasing the GIL."""
    re.match(r"(a+)+$", "a" * 40 + "b")
    return StrategyResult("", ())


class _Plugin:
    """A strategy instance (a slug name) around one attack."""

    budgeted = True

    def __init__(self, name: str, build: object) -> None:
        self.name = name
        self.summary = f"attack: {name}"
        self._build = build

    def build(self, request: StrategyRequest) -> StrategyResult:
        return self._build(request)  # type: ignore[operator, no-any-return]


ATTACKS = {f.__name__: _Plugin(f.__name__.replace("_", "-"), f) for f in (
    read_index, in_details, in_empty_reason, in_exception, in_streams, patch_permits,
    system_exit, base_exception, hold_gil)}
READ_INDEX, IN_DETAILS, IN_EMPTY_REASON, IN_EXCEPTION, IN_STREAMS, PATCH_PERMITS, \
    SYSTEM_EXIT, BASE_EXCEPTION, HOLD_GIL = ATTACKS.values()
