"""Inspect logs written by the real ``inspect_ai.eval``: graders, old versions, failed runs.

Each log is made in the test by Inspect itself on its offline ``mockllm/model``; the mock's
output function reports usage the way a provider would (fixed counts, so the figures are
exact). ``model_graded_qa()`` with no grader role bound grades with the model under test,
so the grader's tokens land in the same ``model_usage`` entry as the tested calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="pip install 'ctxbench[inspect]'")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai import score as inspect_score
from inspect_ai.dataset import Sample
from inspect_ai.event import CompactionEvent
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, ModelCall, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match, model_graded_qa
from inspect_ai.solver import generate, system_message

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core import InputError
from ctxbench.importers import import_inspect
from ctxbench.importers.inspect_logs import read_inspect_log
from ctxbench.protocols.public_eval.api import compare_files

TASKS = 10
# Per sample: the tested call's prompt + output (full: 10,000; trimmed: 2,379) and the
# grader's call (25,596): 76.21% saved on the context, 21.41% if the grader is mixed in.
TESTED = {"full": (9990, 10), "trimmed": (2369, 10)}
GRADER = (25586, 10)


def _task(condition: str) -> Task:
    filler = "Background line.\n" * (40 if condition == "full" else 4)
    return Task(dataset=[Sample(id=f"q{i}", input=f"Code of item {i}?", target=f"K{i}")
                         for i in range(TASKS)],
                solver=[system_message(filler + "Item codes: K<i>."), generate()],
                scorer=model_graded_qa())


def _model(condition: str, *, legacy: bool = False) -> Any:
    def output(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = messages[-1].text
        grading = "[BEGIN DATA]" in text
        if grading:
            out = ModelOutput.from_content(model="mockllm/model", content="GRADE: C")
            prompt, completion = GRADER
        else:
            item = text.split("item ")[1].rstrip("?")
            out = ModelOutput.from_content(model="mockllm/model", content=f"K{item}")
            prompt, completion = TESTED[condition]
        read = 0 if grading else prompt // 2
        # Inspect >= 0.3.184: input_tokens excludes cache reads; before it, OpenAI-style
        # adapters wrote the prompt count with the reads inside it.
        given = prompt if legacy else prompt - read
        out.usage = ModelUsage(input_tokens=given, input_tokens_cache_read=read or None,
                               output_tokens=completion, total_tokens=prompt + completion)
        return out
    return output


def _eval(folder: Path, condition: str, **options: Any) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=_model(
        condition, legacy=options.pop("legacy", False)))
    [log] = inspect_eval(_task(condition), model=model, log_dir=str(folder / condition),
                         display="none", **options)
    return log


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("graded")
    logs = [_eval(out, condition) for condition in ("full", "trimmed")]
    assert all(log.status == "success" for log in logs)
    return Path(logs[0].location), Path(logs[1].location)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_same_model_grader_is_not_the_context(graded: tuple[Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    log = read_eval_log(str(graded[0]))
    assert log.samples is not None
    sample = log.samples[0]
    # What Inspect recorded: one model_usage entry holding both calls, no role_usage.
    assert sample.role_usage == {}
    assert sample.model_usage["mockllm/model"].total_tokens == 10000 + 25596
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    code = run_guarded(cli, ["import", "inspect", str(graded[0]), str(graded[1]), "--rows",
                             str(rows[0]), str(rows[1])])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == (
        f"not counted as context (graders and other roles): {graded[0]}: mockllm/model in "
        f"scorer model_graded_qa: {TASKS * 25596} token(s); {graded[1]}: mockllm/model in "
        f"scorer model_graded_qa: {TASKS * 25596} token(s)")
    assert {r["tokens"] for r in _rows(rows[0])} == {10000}
    assert {(r["input_tokens"], r["cached_input_tokens"]) for r in _rows(rows[1])} == {
        (1185, 1184)}
    report = compare_files(*rows).to_json()
    assert report["savings"]["tokens"]["percent_saved"] == 76.21  # mixed in: 21.41


def test_a_bound_grader_role_is_reported_apart(tmp_path: Path) -> None:
    logs = [Path(_eval(tmp_path, c, model_roles={"grader": get_model(
        "mockllm/model", custom_outputs=_model(c))}).location) for c in ("full", "trimmed")]
    sample = (read_eval_log(str(logs[0])).samples or [])[0]
    assert sample.role_usage["grader"].total_tokens == 25596
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    summary = import_inspect(logs[0], logs[1], rows=rows)
    assert summary.not_context[0] == (str(logs[0]), "mockllm/model as role grader in scorer "
                                      "model_graded_qa", TASKS * 25596)
    assert compare_files(*rows).to_json()["savings"]["tokens"]["percent_saved"] == 76.21


def test_usage_the_events_do_not_account_for_is_refused(graded: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    log = read_eval_log(str(graded[1]))
    assert log.samples is not None
    sample = log.samples[2]
    sample.events = [e for e in sample.events if e.event != "model"]
    broken = tmp_path / "no-events.eval"
    write_eval_log(log, str(broken))
    with pytest.raises(InputError, match=(
            rf"^{broken}: sample 'q2' epoch 1: model_usage.mockllm/model: expected its model "
            r"events to account for it, to tell the tested model's calls from a grader's "
            r"\(input, cache reads, cache writes, output: 26771, 1184, 0, 20\), got events "
            r"summing to 0, 0, 0, 0$")):
        import_inspect(graded[0], broken, rows=(tmp_path / "b", tmp_path / "t"))


def _as_version(log_path: Path, out: Path, version: str) -> Path:
    log = read_eval_log(str(log_path))
    log.eval.packages["inspect_ai"] = version
    write_eval_log(log, str(out))
    return out


def test_logs_before_0_3_184_count_cache_reads_once(tmp_path: Path) -> None:
    made = [Path(_eval(tmp_path, c, legacy=True).location) for c in ("full", "trimmed")]
    old = [_as_version(path, tmp_path / f"{n}.eval", "0.3.170") for n, path in enumerate(made)]
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    import_inspect(*old, rows=rows)
    # 4,995 of the 9,990 prompt tokens were cache reads, inside input_tokens as well.
    assert {(r["tokens"], r["input_tokens"], r["cached_input_tokens"])
            for r in _rows(rows[0])} == {(10000, 4995, 4995)}
    assert compare_files(*rows).to_json()["savings"]["tokens"]["percent_saved"] == 76.21
    # The same counts under a version that excludes the reads do not add up: refused.
    new = _as_version(made[0], tmp_path / "new.eval", "0.3.285")
    with pytest.raises(InputError, match=(
            rf"^{new}: sample 'q0' epoch 1: model_usage.mockllm/model.total_tokens: expected "
            r"input_tokens \+ input_tokens_cache_read \+ input_tokens_cache_write \+ "
            r"output_tokens = 14995 \(Inspect 0.3.285\), got 10000$")):
        import_inspect(new, old[1], rows=rows)
    # A pre-release of 0.3.184 may follow either rule; the total decides.
    import_inspect(_as_version(made[0], tmp_path / "dev.eval", "0.3.184.dev3+g1a2b3c4"),
                   old[1], rows=rows)
    assert {r["tokens"] for r in _rows(rows[0])} == {10000}


def test_a_total_that_fits_no_rule_is_refused(tmp_path: Path) -> None:
    made = Path(_eval(tmp_path, "full", legacy=True).location)
    log = read_eval_log(str(made))
    log.eval.packages["inspect_ai"] = "0.3.170"
    assert log.samples is not None
    # The sample's model events: the tested call, then the grader's (long prompts are
    # stored as attachments, so the order tells them apart here).
    tested, _ = (e for e in log.samples[1].events if e.event == "model")
    tested.output.usage.total_tokens = 4836  # type: ignore[union-attr]
    bad = tmp_path / "bad.eval"
    write_eval_log(log, str(bad))
    with pytest.raises(InputError, match=(
            r"sample 'q1' epoch 1: model_usage.mockllm/model.total_tokens: expected "
            r"input_tokens \+ input_tokens_cache_read \+ input_tokens_cache_write \+ "
            r"output_tokens = 14995, or 10000 with the cache reads inside input_tokens as "
            r"Inspect before 0.3.184 wrote them for OpenAI-style providers \(Inspect "
            r"0.3.170\), got 4836$")):
        import_inspect(bad, bad, rows=(tmp_path / "b", tmp_path / "t"))


def test_a_run_in_which_every_sample_failed_is_refused(graded: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    def down(*_: Any) -> ModelOutput:
        raise RuntimeError("provider unavailable")

    model = get_model("mockllm/model", custom_outputs=down)
    [log] = inspect_eval(_task("trimmed"), model=model, log_dir=str(tmp_path / "down"),
                         display="none", fail_on_error=False)
    assert log.status == "success"
    assert all(s.error is not None for s in log.samples or [])
    with pytest.raises(InputError, match=(
            rf"^{log.location}: samples: expected at least one sample that ran without error, "
            rf"got {TASKS} of {TASKS} errored \(sample 'q0' epoch 1: RuntimeError\('provider "
            r"unavailable'\)\)$")):
        import_inspect(graded[0], log.location, rows=(tmp_path / "b", tmp_path / "t"))


def test_an_unfinished_run_is_refused(graded: tuple[Path, Path], tmp_path: Path) -> None:
    log = read_eval_log(str(graded[1]))
    log.status = "cancelled"
    cancelled = tmp_path / "cancelled.eval"
    write_eval_log(log, str(cancelled))
    with pytest.raises(InputError, match=(
            rf"^{cancelled}: status: expected \"success\" \(a finished run; finish it with "
            r"inspect eval-retry\), got 'cancelled'$")):
        import_inspect(graded[0], cancelled, rows=(tmp_path / "b", tmp_path / "t"))


def test_the_request_id_is_the_tested_calls(graded: tuple[Path, Path], tmp_path: Path) -> None:
    log = read_eval_log(str(graded[0]))
    assert log.samples is not None
    tested, grader = (e for e in log.samples[0].events if e.event == "model")
    tested.call = ModelCall(request={}, response={"id": "req_tested"})
    grader.call = ModelCall(request={}, response={"id": "req_grader"})
    marked = tmp_path / "ids.eval"
    write_eval_log(log, str(marked))
    first = read_inspect_log(marked).samples[0]
    assert (first.instance_id, first.request_id) == ("q0", "req_tested")


def test_native_compaction_usage_is_the_tested_models(graded: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    # ModelAPI.compact's usage is recorded with a compaction event and no model event.
    log = read_eval_log(str(graded[0]))
    assert log.samples is not None
    sample = log.samples[0]
    sample.events.append(CompactionEvent(tokens_before=9990, tokens_after=300))
    sample.model_usage["mockllm/model"] += ModelUsage(input_tokens=900, output_tokens=100,
                                                      total_tokens=1000)
    compacted = tmp_path / "compacted.eval"
    write_eval_log(log, str(compacted))
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    import_inspect(compacted, graded[1], rows=rows)
    tokens = {(r["instance_id"], r["run"]): r["tokens"] for r in _rows(rows[0])}
    assert tokens[("q0", 0)] == 11000 and tokens[("q1", 0)] == 10000


OLD = Path(__file__).parent / "data" / "inspect-0.3.170"


def test_a_log_written_by_inspect_0_3_170(tmp_path: Path) -> None:
    # Written by the real Inspect 0.3.170 (data/make_inspect_0_3_170.py): cache reads
    # inside input_tokens, and the same-model grader's calls in the same model_usage entry.
    log = read_eval_log(str(OLD / "full.eval"))
    assert log.eval.packages["inspect_ai"] == "0.3.170"
    usage = (log.samples or [])[0].model_usage["mockllm/model"]
    assert (usage.input_tokens, usage.input_tokens_cache_read, usage.total_tokens) == (
        9990 + 25586, 4995, 10000 + 25596)
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    summary = import_inspect(OLD / "full.eval", OLD / "trimmed.eval", rows=rows)
    assert [label for _, label, _ in summary.not_context] == [
        "mockllm/model in scorer model_graded_qa"] * 2
    assert {(r["tokens"], r["input_tokens"], r["cached_input_tokens"])
            for r in _rows(rows[0])} == {(10000, 4995, 4995)}
    report = compare_files(*rows).to_json()
    assert report["savings"]["tokens"]["percent_saved"] == 76.21  # was 28.16


def test_reasoning_outside_output_before_0_3_245(graded: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    # Google's adapter before 0.3.245: output_tokens = candidates only, thinking beside it.
    def thinking(version: str) -> Path:
        log = read_eval_log(str(graded[0]))
        log.eval.packages["inspect_ai"] = version
        assert log.samples is not None
        tested, _ = (e for e in log.samples[0].events if e.event == "model")
        usage = tested.output.usage
        assert usage is not None
        usage.reasoning_tokens, usage.total_tokens = 40, usage.total_tokens + 40
        out = tmp_path / f"{version}.eval"
        write_eval_log(log, str(out))
        return out

    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    import_inspect(thinking("0.3.200"), graded[1], rows=rows)
    first = _rows(rows[0])[0]
    assert (first["tokens"], first["output_tokens"], first["reasoning_tokens"]) == (10040, 10, 40)
    late = thinking("0.3.245")
    with pytest.raises(InputError, match=(
            rf"^{late}: sample 'q0' epoch 1: model_usage.mockllm/model.output_tokens: expected "
            r"at least reasoning_tokens \(40\), got 10$")):
        import_inspect(late, graded[1], rows=rows)


def test_a_log_graded_later_by_inspect_score(tmp_path: Path) -> None:
    # `inspect score` appends the grader's events but leaves model_usage as the run wrote it.
    logs = []
    for condition in ("full", "trimmed"):
        model = get_model("mockllm/model", custom_outputs=_model(condition))
        task = _task(condition)
        task.scorer = [match()]
        [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / condition),
                             display="none")
        graded = inspect_score(log, model_graded_qa(), action="append", display="none",
                               model=get_model("mockllm/model",
                                               custom_outputs=_model(condition)))
        sample = (graded.samples or [])[0]
        assert sample.model_usage["mockllm/model"].total_tokens == (
            10000 if condition == "full" else 2379)
        assert sum(e.event == "model" for e in sample.events) == 2
        path = tmp_path / f"{condition}.eval"
        write_eval_log(graded, str(path))
        logs.append(path)
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    summary = import_inspect(logs[0], logs[1], rows=rows, scorer="model_graded_qa")
    assert summary.not_context[0][1:] == ("mockllm/model in scorer model_graded_qa",
                                          TASKS * 25596)
    assert compare_files(*rows).to_json()["savings"]["tokens"]["percent_saved"] == 76.21
