"""One call per importer: read both arms, pair them, write trial and/or row files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from ctxbench.core import InputError
from ctxbench.importers.common import (
    ArmInfo,
    ImportSummary,
    Sample,
    TrialSettings,
    not_context,
    pair_samples,
    public_eval_row,
    trial_record,
    write_jsonl,
)
from ctxbench.importers.inspect_logs import read_inspect_log
from ctxbench.importers.lm_eval import read_lm_eval_arm, task_name
from ctxbench.importers.swebench import read_swebench_arm

__all__ = ["import_inspect", "import_lm_eval", "import_swebench"]

Path_ = str | os.PathLike[str]


def _outputs(trials: Path_ | None, rows: tuple[Path_, Path_] | None) -> None:
    if trials is None and rows is None:
        raise InputError("import: expected --trials FILE and/or --rows BASELINE TREATMENT, "
                         "got neither")


def _write(pairs: list[tuple[Sample, Sample]], *, trials: Path_ | None,
           rows: tuple[Path_, Path_] | None, arms: tuple[ArmInfo, ArmInfo] | None,
           settings: TrialSettings) -> ImportSummary:
    written: list[tuple[str, int]] = []
    if trials is not None:
        assert arms is not None
        records: list[dict[str, object]] = []
        for base, treat in pairs:
            for sample, arm, condition in ((base, arms[0], settings.baseline),
                                           (treat, arms[1], settings.treatment)):
                records.append(trial_record(sample, arm, condition, settings, path=str(trials),
                                            line=len(records) + 1))
        write_jsonl(trials, records)
        written.append((str(trials), len(records)))
    if rows is not None:
        for side, path in enumerate(rows):
            lines = [public_eval_row(pair[side], path=str(path), line=n + 1)
                     for n, pair in enumerate(pairs)]
            write_jsonl(path, lines)
            written.append((str(path), len(lines)))
    return ImportSummary(len(pairs), tuple(written))


def _same_run(base: ArmInfo, treat: ArmInfo) -> None:
    for name in ("workload", "model", "scorer"):
        want, got = getattr(base, name), getattr(treat, name)
        if want != got:
            raise InputError(f"{treat.source}: {name}: expected the baseline's {want!r} "
                             f"({base.source}), got {got!r}")


def import_inspect(baseline: Path_, treatment: Path_, *, trials: Path_ | None = None,
                   rows: tuple[Path_, Path_] | None = None, scorer: str | None = None,
                   evidence_scorer: str | None = None, grounding_scorer: str | None = None,
                   settings: TrialSettings | None = None) -> ImportSummary:
    """Two Inspect AI logs (baseline, treatment) -> CEF trials and/or public-eval rows."""
    _outputs(trials, rows)
    settings = settings or TrialSettings()
    base = read_inspect_log(baseline, scorer=scorer, evidence_scorer=evidence_scorer,
                            grounding_scorer=grounding_scorer)
    treat = read_inspect_log(treatment, scorer=scorer or base.info.scorer,
                             evidence_scorer=evidence_scorer, grounding_scorer=grounding_scorer)
    _same_run(base.info, treat.info)
    pairs = pair_samples(base.samples, treat.samples, baseline_source=str(baseline),
                         treatment_source=str(treatment))
    summary = _write(pairs, trials=trials, rows=rows, arms=(base.info, treat.info),
                     settings=settings)
    return replace(summary, not_context=not_context(pairs, (str(baseline), str(treatment))))


def import_swebench(reports: tuple[Path_, Path_], usage: tuple[Path_, Path_], *,
                    rows: tuple[Path_, Path_]) -> ImportSummary:
    """Two SWE-bench run reports with their usage files -> public-eval rows."""
    base = read_swebench_arm(reports[0], usage[0])
    treat = read_swebench_arm(reports[1], usage[1])
    pairs = pair_samples(base, treat, baseline_source=str(reports[0]),
                         treatment_source=str(reports[1]))
    return _write(pairs, trials=None, rows=rows, arms=None, settings=TrialSettings())


def import_lm_eval(samples: tuple[Path_, Path_], usage: tuple[Path_, Path_], *, metric: str,
                   trials: Path_ | None = None, rows: tuple[Path_, Path_] | None = None,
                   filter_name: str | None = None, model: str | None = None,
                   evidence_metric: str | None = None, grounding_metric: str | None = None,
                   settings: TrialSettings | None = None) -> ImportSummary:
    """Two lm-eval samples files with their usage files -> public-eval rows / CEF trials.

    CEF trials also need ``model`` (``provider/model``: lm-eval's samples do not name it),
    ``evidence_metric`` and ``grounding_metric``.
    """
    _outputs(trials, rows)
    settings = settings or TrialSettings()
    tasks = [task_name(path) for path in samples]
    if tasks[0] != tasks[1]:
        raise InputError(f"{samples[1]}: task: expected the baseline's {tasks[0]!r}, got "
                         f"{tasks[1]!r}")
    arms = [read_lm_eval_arm(s, u, metric=metric, filter_name=filter_name,
                             evidence_metric=evidence_metric, grounding_metric=grounding_metric)
            for s, u in zip(samples, usage, strict=True)]
    pairs = pair_samples(arms[0], arms[1], baseline_source=str(samples[0]),
                         treatment_source=str(samples[1]))
    infos = None
    if trials is not None:
        if model is None or "/" not in model:
            raise InputError("import lm-eval: --trials needs --model PROVIDER/MODEL (lm-eval "
                             "samples do not name the model)")
        infos = _lm_eval_infos(samples, tasks[0], model, metric)
    return _write(pairs, trials=trials, rows=rows, arms=infos, settings=settings)


def _lm_eval_infos(samples: Sequence[Path_], task: str, model: str, metric: str
                   ) -> tuple[ArmInfo, ArmInfo]:
    provider = model.split("/", 1)[0]
    base, treat = (ArmInfo(source=str(path), workload=task, workload_version="lm-eval",
                           provider=provider, model=model, scorer=metric,
                           usage_source="provider_log") for path in samples)
    return base, treat
