"""Run mutated inputs through the readers and the CLI; count what happened.

Outcomes per run: ``accepted``, ``rejected`` (a ctxbench error), and the failures the
suite forbids: ``traceback`` (any other exception, or a CLI run that printed one),
``hang`` (over the per-input time limit), ``forbidden_accepted`` (a mutation class the
format forbids got through), ``unlocated`` (a rejection whose message names no
``file:line`` and no JSON pointer; for a TOML input, one that names no line) and
``unbounded`` (a message line over the cap).
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from ctxbench.cli.errors import run_guarded
from ctxbench.core.errors import CtxbenchError
from ctxbench.core.limits import MAX_MESSAGE_CHARS

from .kinds import Kind
from .mutate import CLASSES, mutate

__all__ = ["Outcome", "Tally", "fuzz"]

FAILURES = ("traceback", "hang", "forbidden_accepted", "unlocated", "unbounded")


class _Hang(BaseException):
    """Raised by the timer; a BaseException so no ``except Exception`` swallows it."""


@dataclass
class Tally:
    """Counts per outcome, and the first few examples of each failure."""

    counts: Counter[str] = field(default_factory=Counter)
    by_class: Counter[tuple[str, str]] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    inputs: int = 0
    runs: int = 0
    whole_file: int = 0

    def add(self, outcome: str, cls: str, detail: str) -> None:
        self.counts[outcome] += 1
        self.by_class[(cls, outcome)] += 1
        if outcome in FAILURES:
            self.examples.setdefault(outcome, [])
            if len(self.examples[outcome]) < 5:
                self.examples[outcome].append(detail[:600])

    def failures(self) -> int:
        return sum(self.counts[name] for name in FAILURES)


@dataclass(frozen=True)
class Outcome:
    kind: str
    outcome: str
    detail: str


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: FrameType | None) -> None:
        raise _Hang()
    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _located(message: str, shown: str) -> str:
    """``line``/``pointer`` when the first line names one, ``file`` for a whole-file
    error that names the file, ``none`` otherwise."""
    first = message.split("\n", 1)[0]
    if re.search(r":\d+: ", first):
        return "line"
    if first.startswith(shown + ": /") or re.search(r": /\S*: ", first):
        return "pointer"
    if shown in first:
        return "file"
    return "none"


def _judge(message: str, shown: str, cls: str, tally: Tally, context: str,
           *, needs_line: bool = False) -> str:
    lines = message.split("\n")
    if any(len(line) > MAX_MESSAGE_CHARS + 60 for line in lines):
        return "unbounded"
    where = _located(message, shown)
    if where == "none" or (needs_line and where != "line"):
        return "unlocated"
    if where == "file":
        tally.whole_file += 1
        examples = tally.examples.setdefault("whole_file", [])
        if len(examples) < 5:
            examples.append(f"{context}: {lines[0][:300]}")
    return "rejected"


def _run_reader(kind: Kind, path: Path, timeout: float) -> tuple[str, str]:
    try:
        with _deadline(timeout):
            kind.reader(path)
    except _Hang:
        return "hang", f"{kind.name}: reader over {timeout} s"
    except CtxbenchError as exc:
        return "error", str(exc)
    except RecursionError:
        return "traceback", f"{kind.name}: RecursionError\n{traceback.format_exc()[-800:]}"
    except Exception:
        return "traceback", f"{kind.name}:\n{traceback.format_exc()[-1200:]}"
    return "accepted", ""


def _run_cli(args: list[str], timeout: float) -> tuple[str, str]:
    from ctxbench.cli.main import cli

    out, err = io.StringIO(), io.StringIO()
    try:
        with _deadline(timeout), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_guarded(cli, args)
    except _Hang:
        return "hang", f"ctxbench {' '.join(args)}: over {timeout} s"
    except Exception:
        return "traceback", f"ctxbench {' '.join(args)}:\n{traceback.format_exc()[-1200:]}"
    text = err.getvalue()
    if "Traceback (most recent call last)" in text:
        return "traceback", text[-1200:]
    if code in (0, 1):
        return "accepted", ""
    if code == 2:
        return "error", text.removeprefix("ctxbench: error: ").strip()
    return "traceback", f"exit {code}: {text[-600:]}"


def fuzz(kinds: list[Kind], work: Path, *, per_kind: int, seed: int = 0,
         timeout: float = 10.0, cli_every: int = 1) -> Tally:
    """Mutate each kind's seed ``per_kind`` times (cycling through every class)."""
    tally = Tally()
    rng = random.Random(seed)
    classes = sorted(CLASSES)
    for kind in kinds:
        made = 0
        attempt = 0
        while made < per_kind and attempt < per_kind * 4:
            cls = classes[attempt % len(classes)]
            attempt += 1
            mutation = mutate(kind.seed, kind.fmt, cls, rng)
            if mutation is None:
                continue
            made += 1
            tally.inputs += 1
            path = work / f"input-{kind.name}{kind.suffix}"
            path.write_bytes(mutation.data)
            shown = str(path)
            runs = [("reader", None)]
            if kind.cli and made % cli_every == 0:
                runs += [("cli", args) for args in kind.cli]
            for how, args in runs:
                tally.runs += 1
                if how == "reader":
                    status, detail = _run_reader(kind, path, timeout)
                else:
                    assert args is not None
                    argv = [shown if a == "{input}" else a for a in args]
                    status, detail = _run_cli(argv, timeout)
                context = f"{kind.name}/{cls}/{how}"
                if status == "error":
                    outcome = _judge(detail, shown, cls, tally, context,
                                     needs_line=kind.fmt == "toml")
                    detail = f"{context}: {detail}"
                elif status == "accepted" and mutation.forbidden:
                    outcome = "forbidden_accepted"
                    detail = f"{context}: {mutation.data[:300]!r}"
                else:
                    outcome = status
                    detail = f"{context}: {detail}"
                tally.add(outcome, cls, detail)
    return tally


def seed_outcomes(kinds: list[Kind], work: Path, timeout: float = 30.0) -> dict[str, str]:
    """What the reader and every CLI run say about each unmutated seed (all must accept)."""
    out = {}
    for kind in kinds:
        path = work / f"seed-{kind.name}{kind.suffix}"
        path.write_bytes(kind.seed)
        status, detail = _run_reader(kind, path, timeout)
        results = [f"reader {status} {detail}".strip()]
        for args in kind.cli:
            argv = [str(path) if a == "{input}" else a for a in args]
            code, text = _run_cli(argv, timeout)
            results.append(f"cli {code} {text}".strip())
        out[kind.name] = "; ".join(results)
    return out
