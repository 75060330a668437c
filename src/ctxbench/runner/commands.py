"""The ``ctxbench cef analyze`` command line a report records so a reader can type it again.

The protocols take the command as data (``analyze_files(..., command=argv)``) and never
spell a flag; the command line (``ctxbench cef analyze``) and a run's reports (a run
records how to re-analyze its trial log) both build it here, so each flag is spelled once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxbench.protocols.cef.prereg import Preregistration

__all__ = ["CEF_SETTING_FLAGS", "cef_analyze_command"]

# A preregistration setting -> the ``ctxbench cef analyze`` option that sets it.
CEF_SETTING_FLAGS = {"bootstrap_samples": "--bootstrap-samples", "seed": "--seed",
                     "quality_tolerance": "--quality-tolerance",
                     "confidence_level": "--confidence-level", "resampling_unit": "--unit"}


def cef_analyze_command(trial_paths: Sequence[str | os.PathLike[str]],
                        prereg_path: str | os.PathLike[str] | None, prereg: Preregistration,
                        *, output: str | os.PathLike[str] | None = None,
                        check: bool = False) -> list[str]:
    """The argv that reproduces a CEF report, every setting explicit.

    With a preregistration the file pins every setting (flags may not override it);
    without one, the seed, sample count, tolerance, level and unit actually used are
    written out so the command does not depend on defaults.
    """
    argv = ["ctxbench", "cef", "analyze", *(str(p) for p in trial_paths)]
    if prereg_path is not None:
        argv += ["--prereg", str(prereg_path)]
    else:
        used = {"bootstrap_samples": str(prereg.bootstrap_samples), "seed": str(prereg.seed),
                "quality_tolerance": repr(prereg.quality_tolerance),
                "confidence_level": repr(prereg.confidence_level),
                "resampling_unit": prereg.resampling_unit}
        for name, flag in CEF_SETTING_FLAGS.items():
            argv += [flag, used[name]]
    if output is not None:
        argv += ["--output", str(output)]
    if check:
        argv.append("--check")
    return argv
