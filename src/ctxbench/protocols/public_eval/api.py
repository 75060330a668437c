"""Compare two public-eval row files in one call (what the CLI and library users call)."""

from __future__ import annotations

import os
from pathlib import Path

from ctxbench.core.digests import blake3_file
from ctxbench.protocols.public_eval.analysis import analyze
from ctxbench.protocols.public_eval.model import Inputs, PublicEvalReport
from ctxbench.protocols.public_eval.model_parts import InputFile
from ctxbench.protocols.public_eval.pairing import pair_rows
from ctxbench.protocols.public_eval.rows import read_rows
from ctxbench.protocols.public_eval.settings import Settings

__all__ = ["compare_files"]


def compare_files(baseline: str | os.PathLike[str], treatment: str | os.PathLike[str],
                  settings: Settings | None = None) -> PublicEvalReport:
    """Read, validate and pair both files, then return the public-eval report model.

    The report names each input by its file name (not its directory) and BLAKE3, so the
    same files give the same bytes wherever they are, and lists the fields it read but
    does not use (``read_and_ignored``, e.g. MARGINAL's ``applied_denies``).
    """
    chosen = settings if settings is not None else Settings()
    tables = [read_rows(path) for path in (baseline, treatment)]
    base, treat = (InputFile(file=Path(path).name, blake3=blake3_file(path), rows=table.rows,
                             read_and_ignored=tuple(table.ignored_fields))
                   for path, table in zip((baseline, treatment), tables, strict=True))
    inputs = Inputs(baseline=base, treatment=treat)
    return analyze(pair_rows(tables[0], tables[1]), chosen, inputs=inputs)
