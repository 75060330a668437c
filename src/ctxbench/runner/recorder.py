"""Record each finished trial: its packet kept, then its line committed, then counted.

The scheduler calls a :class:`TrialRecorder` as each trial finishes; the run reads
``recorded`` when it stops (an interrupted run's summary counts what was made durable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxbench.runner.execute import TrialResult
    from ctxbench.runner.packets import PacketStore
    from ctxbench.runner.trial_log import GroupCommit

__all__ = ["TrialRecorder"]


class TrialRecorder:
    """``await recorder(result)``: the packet, then the fsynced line, then ``on_result``."""

    __slots__ = ("commit", "on_result", "packets", "recorded")

    def __init__(self) -> None:
        self.recorded = 0
        """Trials recorded in this session (durable lines)."""
        self.packets: PacketStore | None = None
        self.commit: GroupCommit | None = None
        self.on_result: Callable[[TrialResult], None] | None = None

    def attach(self, packets: PacketStore, commit: GroupCommit,
               on_result: Callable[[TrialResult], None] | None) -> None:
        """Where the trials go, once the log is open."""
        self.packets, self.commit, self.on_result = packets, commit, on_result

    async def __call__(self, result: TrialResult) -> None:
        assert self.packets is not None and self.commit is not None, "attach() first"
        self.packets.keep(result.context)  # before its line: a recorded trial has its packet
        await self.commit(result.record)
        self.recorded += 1
        if self.on_result is not None:
            self.on_result(result)
