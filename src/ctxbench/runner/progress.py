"""The run's progress bar (rich, on stderr): done/total, ETA, tokens, cost, errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from ctxbench.runner.scheduler import Progress as RunProgress

__all__ = ["progress_display"]


@contextlib.contextmanager
def progress_display(*, enabled: bool) -> Iterator[Callable[[RunProgress], None]]:
    """Yield the callback the scheduler calls after each trial (a no-op when disabled)."""
    if not enabled:
        yield lambda _progress: None
        return
    bar = Progress(
        TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("ETA"),
        TimeRemainingColumn(), TextColumn("{task.fields[tokens]} tokens"),
        TextColumn("${task.fields[cost]}"), TextColumn("{task.fields[errors]} errors"),
        console=Console(stderr=True), transient=False)
    task_id = None

    def update(progress: RunProgress) -> None:
        nonlocal task_id
        if task_id is None:
            task_id = bar.add_task("run", total=progress.total, tokens=0, cost="0.0000",
                                   errors=0)
        bar.update(task_id, completed=progress.done, tokens=f"{progress.tokens:,}",
                   cost=f"{progress.cost_usd:.4f}", errors=progress.errors)

    with bar:
        yield update
