"""Read a run's trial log and packet store for the drill-down: trials, pairs, packets.

Every value shown is a member of a trial line as written (``ctxbench.trial.v1`` or
Entroly's format, validated by the CEF reader) or a packet file's text; nothing is
computed. A pair is the baseline trial and a candidate trial of the same task-replicate
unit in the same stratum (the CEF pairing key); its outcome only says which of the two
task scores is higher. The task's query, the expected answer, the scorer's details and
the selected artifacts are the trial's own members; members a line holds beyond the
format's (whatever a newer runner records) are kept as written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.jsonl import TornLineError, iter_jsonl
from ctxbench.core.textfile import read_utf8
from ctxbench.protocols.cef.records import Trial, parse_trial
from ctxbench.protocols.cef.trial_format import TRIAL_FIELDS
from ctxbench.render.order import by_condition

__all__ = ["Pair", "RunTrials", "TrialView", "packet_file", "read_packet", "read_run_trials"]

TRIALS_FILE = "trials.jsonl"
PACKETS_DIR = "packets"
# The members of the trial format, each shown in its own field; any other member of a
# line (one a newer runner records) is shown beside them as written.
_KNOWN = frozenset(TRIAL_FIELDS)


@dataclass(frozen=True, slots=True)
class TrialView:
    """One trial as the drill-down shows it; ``line`` (in trials.jsonl) is its id."""

    trial: Trial
    stratum: int  # index into RunTrials.strata
    extras: tuple[tuple[str, str], ...]  # members beyond the reader's, as compact JSON

    @property
    def line(self) -> int:
        return self.trial.line


@dataclass(frozen=True, slots=True)
class Pair:
    """Baseline and candidate trial (indexes into RunTrials.trials) of one unit."""

    condition: str
    baseline: int
    candidate: int
    outcome: str  # "lost" (baseline higher), "gained" (candidate higher), "same"


@dataclass(frozen=True, slots=True)
class RunTrials:
    """A run's trials in log order, its strata labels, pairs and the packets found."""

    path: Path
    baseline: str | None
    conditions: tuple[str, ...]
    strata: tuple[str, ...]
    trials: tuple[TrialView, ...]
    pairs: tuple[Pair, ...]
    packets: dict[str, int | None]  # context_sha256 -> bytes in the store (None: absent)
    binary: bool  # every task score is 0 or 1 (then "higher" reads "right" / "wrong")
    torn: bool  # the log ends in a line being written (a run going on)


def packet_file(run_dir: Path, sha: str) -> Path:
    """The packet store's file of ``sha`` in ``run_dir``."""
    return run_dir / PACKETS_DIR / f"{sha}.txt"


def read_packet(run_dir: Path, sha: str) -> str:
    """The text of a packet the store holds (a located error if it is not UTF-8)."""
    return read_utf8(packet_file(run_dir, sha), display=f"{PACKETS_DIR}/{sha}.txt")


def _extras(value: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((k, json.dumps(v, ensure_ascii=False, separators=(",", ":")))
                 for k, v in value.items() if k not in _KNOWN)


def _outcome(base: float, cand: float) -> str:
    return "lost" if cand < base else "gained" if cand > base else "same"


def read_run_trials(run_dir: Path, *, baseline: str | None,
                    strata_labels: Sequence[tuple[tuple[str, ...], str]] = ()) -> RunTrials:
    """The trials of ``run_dir/trials.jsonl`` with their packets from ``run_dir/packets``.

    ``baseline`` is the CEF baseline condition (pairs are formed against it; None gives
    no pairs); ``strata_labels`` maps a stratum key (provider, model, workload,
    workload_version, scorer) to the report's label for it.
    """
    path = run_dir / TRIALS_FILE
    labels = dict(strata_labels)
    strata: dict[tuple[str, ...], int] = {}
    views: list[TrialView] = []
    torn = False
    lines = iter_jsonl(path)
    while True:
        try:
            item = next(lines)
        except StopIteration:
            break
        except TornLineError:
            torn = True  # the runner is writing this line now; it is shown once written
            break
        trial = parse_trial(item.value, path=item.path, line=item.line,
                            baseline=baseline or "raw")
        index = strata.setdefault(trial.stratum, len(strata))
        views.append(TrialView(trial, index, _extras(item.value)))
    names = [labels.get(key, " / ".join((key[0], key[1], f"{key[2]}@{key[3]}", key[4])))
             for key in strata]
    conditions = tuple(by_condition(list(dict.fromkeys(v.trial.condition for v in views)),
                                    lambda c: c, baseline or ""))
    units: dict[tuple[int, str, int], dict[str, int]] = {}
    for k, view in enumerate(views):
        t = view.trial
        units.setdefault((view.stratum, t.task_id, t.replicate), {})[t.condition] = k
    pairs: list[Pair] = []
    if baseline is not None:
        for condition in conditions:
            if condition == baseline:
                continue
            for cells in units.values():
                if baseline in cells and condition in cells:
                    b, c = cells[baseline], cells[condition]
                    pairs.append(Pair(condition, b, c, _outcome(
                        views[b].trial.task_score, views[c].trial.task_score)))
    packets: dict[str, int | None] = {}
    for view in views:
        sha = view.trial.context_sha256
        if sha not in packets:
            file = packet_file(run_dir, sha)
            packets[sha] = file.stat().st_size if file.is_file() else None
    binary = all(v.trial.task_score in (0.0, 1.0) for v in views)
    return RunTrials(path, baseline, conditions, tuple(names), tuple(views), tuple(pairs),
                     packets, binary, torn)
