"""The packet store: the exact context text each trial sent, kept beside the trial log.

``RUN_DIR/packets/<context_sha256>.txt`` holds the UTF-8 bytes of one packet as the
provider received it (the compiler's or strategy's output after the policy filter, so
permitted text only), named by the trial's own ``context_sha256``. A file is written once,
atomically, and only when absent: the same context shared by replicates and conditions is
stored once. It is written by the process that writes the trial line (the driver, on
every backend), before that line, so every recorded trial's packet is in the store.
A trial whose strategy gave no packet sent nothing, and stores nothing.
"""

from __future__ import annotations

from pathlib import Path

from ctxbench.core import atomic_write_bytes
from ctxbench.runner.contexts import BuiltContext

__all__ = ["PACKETS_DIR", "PacketStore", "packet_path"]

PACKETS_DIR = "packets"


def packet_path(run_dir: Path, context_sha256: str) -> Path:
    """Where the packet of ``context_sha256`` lives in ``run_dir``."""
    return run_dir / PACKETS_DIR / f"{context_sha256}.txt"


class PacketStore:
    """One per run: :meth:`keep` writes a trial's packet unless the store holds it."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._kept: set[str] = set()

    def keep(self, context: BuiltContext) -> None:
        if context.failure is not None or context.sha256 in self._kept:
            return
        path = packet_path(self.run_dir, context.sha256)
        if not path.exists():
            atomic_write_bytes(path, context.text.encode("utf-8"))
        self._kept.add(context.sha256)
