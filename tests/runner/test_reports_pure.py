"""Writing a finished run's reports compiles no context: they are a function of the
trial log, the preregistration and the corpus digests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import iter_jsonl
from ctxbench.protocols.cef.trial_format import RECORD_MEMBERS
from ctxbench.runner import experiment
from ctxbench.runner.contexts import ContextBuilder
from ctxbench.runner.experiment import RunStopped, run_experiment

REPORTS = ("cef-report.json", "cef-report.md", "eceb-run.json", "eceb-report.json",
           "eceb-report.md")


def seed_spec(tmp_path: Path, execution: str = "") -> Path:
    """The enterprise seed's first 2 tasks under the baseline and the compiled ladder."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "exp.toml"
    path.write_text(
        'name = "seed"\nseed = 3\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 2\n'
        '[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n' + execution,
        encoding="utf-8")
    return path


class Compilations:
    """Counts the contexts built in this process, in all and while reports are written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.total = 0
        self.in_reports = 0
        self._writing = False
        build = ContextBuilder._build
        write = experiment.write_reports  # type: ignore[attr-defined]

        def counted_build(builder: ContextBuilder, *args: Any) -> Any:
            self.total += 1
            self.in_reports += self._writing
            return build(builder, *args)

        def counted_write(**kwargs: Any) -> Any:
            self._writing = True
            try:
                return write(**kwargs)
            finally:
                self._writing = False

        monkeypatch.setattr(ContextBuilder, "_build", counted_build)
        monkeypatch.setattr(experiment, "write_reports", counted_write)


def _bytes(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in REPORTS}


def test_a_finished_run_and_its_resume_write_the_reports_without_compiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = Compilations(monkeypatch)
    first = run_experiment(seed_spec(tmp_path))
    out = tmp_path / "out"
    assert first.completed > 0 and "eceb-run.json" in first.reports
    assert count.total > 0  # the trials built their contexts: the counter sees them
    assert count.in_reports == 0
    written = _bytes(out)
    # Each observation's selection is the one its trial line recorded.
    records = {(r["task_id"], r["budget"]): r for r in
               (item.value for item in iter_jsonl(out / "trials.jsonl"))}
    run_doc = json.loads(written["eceb-run.json"])
    assert run_doc["observations"]
    for obs in run_doc["observations"]:
        record = records[(obs["task_id"], obs["budget"])]
        assert obs["selected_artifacts"] == record["selected_artifacts"]
        assert obs["context_blake3"] == record["rendered_blake3"]

    count.total = 0
    again = run_experiment(seed_spec(tmp_path), resume=True)
    assert again.completed == 0 and again.skipped == first.completed
    assert count.total == count.in_reports == 0
    assert _bytes(out) == written


def test_a_log_that_predates_the_packet_members_is_a_located_error(
        tmp_path: Path) -> None:
    spec = seed_spec(tmp_path)
    run_experiment(spec)
    trials = tmp_path / "out" / "trials.jsonl"
    lines = [json.loads(line) for line in trials.read_text(encoding="utf-8").splitlines()]
    trials.write_text("".join(json.dumps({k: v for k, v in r.items()
                                          if k not in RECORD_MEMBERS}) + "\n"
                              for r in lines), encoding="utf-8")
    with pytest.raises(RunStopped) as info:
        run_experiment(spec, resume=True)
    assert str(info.value) == (
        f"{trials}:1: selected_artifacts: expected the selected_artifacts member, which the "
        "ECEB run file is written from, got nothing: this trial log predates the member "
        "(written by an older ctxbench); run the experiment again into a new output "
        "directory to record it (writing the reports; the trials recorded in "
        f"{trials} predate what this ctxbench records; run again into another output "
        "directory)")
    assert info.value.exit_code == 2


def test_the_runs_cef_report_is_unchanged_by_the_new_members(
        make_spec: Callable[..., Path]) -> None:
    # CEF reads neither member: stripping them from the log gives the same report.
    spec = make_spec()
    run_experiment(spec)
    out = spec.parent / "out"
    from ctxbench.protocols.cef.api import analyze_files

    trials = out / "trials.jsonl"
    before = analyze_files([trials], out / "cef-prereg.json").to_json()
    stripped = out / "stripped.jsonl"
    stripped.write_text("".join(
        json.dumps({k: v for k, v in item.value.items() if k not in RECORD_MEMBERS}) + "\n"
        for item in iter_jsonl(trials)), encoding="utf-8")
    after = analyze_files([stripped], out / "cef-prereg.json").to_json()
    for report in (before, after):
        # Only the input file's name and digest differ.
        report["methodology"]["invocation"] = report["methodology"]["reproduce"] = None
    assert before == after


def test_the_runs_preregistration_is_written_from_its_model_and_not_read_back(
        make_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.protocols.cef import api, prereg
    from ctxbench.runner.reports import run_preregistration

    loads: list[object] = []

    def counted(path: object) -> prereg.Preregistration:
        loads.append(path)
        return prereg.load_preregistration(path)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "load_preregistration", counted)
    spec = make_spec()
    run_experiment(spec)
    assert loads == []  # the analysis got the model in memory
    out = spec.parent / "out"
    model = run_preregistration(
        baseline="full_permitted_context",
        conditions=["compiled@200", "compiled@400", "full_permitted_context"],
        replicates=2, seed=11)
    written = json.loads((out / "cef-prereg.json").read_text(encoding="utf-8"))
    assert written == prereg.preregistration_document(model)
    assert written["protocol_version"] == prereg.DEFAULT_PROTOCOL_VERSION
    report = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert report["preregistration"]["digest_blake3"] == model.digest()


def test_a_resume_refuses_a_preregistration_changed_after_the_trials(
        make_spec: Callable[..., Path]) -> None:
    from ctxbench.core import InputError

    spec = make_spec()
    run_experiment(spec)
    path = spec.parent / "out" / "cef-prereg.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, "quality_tolerance": 0.2}), encoding="utf-8")
    with pytest.raises(InputError, match=(
            rf"^{path}: expected the preregistration this run declares \(digest [0-9a-f]{{64}}"
            r"\), got another one \(digest [0-9a-f]{64}\); a preregistration is never "
            r"changed after trials ran: run again into another output directory$")):
        run_experiment(spec, resume=True)


def test_a_plugin_evaluated_as_ecebs_compiled_is_named_in_its_verdict() -> None:
    from ctxbench.protocols.eceb.api import evaluate_files
    from ctxbench.protocols.eceb.seed import seed_paths
    from ctxbench.runner.reports import eceb_verdicts

    paths = seed_paths()
    report = evaluate_files(paths.benchmark, paths.run, paths.corpus)
    (plain,) = eceb_verdicts(report, {"compiled"})
    (named,) = eceb_verdicts(report, {"compiled"}, shown_as={"compiled": "my-packer"})
    assert plain.startswith("ECEB compiled: ")
    assert named == "ECEB my-packer: " + plain.removeprefix("ECEB compiled: ")


def test_the_demos_baseline_summary_reads_the_log_with_the_typed_reader(
        make_spec: Callable[..., Path]) -> None:
    from ctxbench.core.errors import InputError
    from ctxbench.runner.demo import baseline_summary

    spec = make_spec()
    run_experiment(spec)
    trials = spec.parent / "out" / "trials.jsonl"
    assert baseline_summary(trials).trials == 4
    lines = trials.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    bad["task_score"] = "1"
    trials.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n",
                      encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{trials}:2: task_score: expected a number"):
        baseline_summary(trials)
