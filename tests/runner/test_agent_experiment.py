"""``ctxbench run`` on agent-run specs: the agent tasks, BFCL multi-turn and recorded
traces under context managers, resumable, priced from a snapshot, with located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.run import run as run_command
from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import InputError, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.providers.base import get_provider
from ctxbench.runner.trace_experiment import recorded_move
from ctxbench.runner.trace_replay import replay_points
from ctxbench.workloads.agent_tasks import agent_tasks
from ctxbench.workloads.agent_traces import decision_points, skipped_summary
from ctxbench.workloads.bfcl_multi_turn import load_multi_turn
from ctxbench.workloads.trace_hermes import read_hermes_trajectories
from ctxbench.workloads.trace_openclaw import read_openclaw_session

from .agent_server import AgentServer

TRACES = Path(__file__).parents[1] / "workloads" / "fixtures" / "traces"
HERMES = TRACES / "trajectory_samples.jsonl"
OPENCLAW = TRACES / "5c8e2f4a-91d3-4b7e-a0c2-7d1e9f3b6a21.jsonl"
CONDITIONS = ('[[conditions]]\nname = "full"\nmanager = "full_history"\n\n'
              '[[conditions]]\nname = "elided"\nmanager = "elide_tool_outputs"\n'
              'budget = 4000\n\n'
              '[[conditions]]\nname = "last-k"\nmanager = "last_k_turns"\nbudget = 4000\n')


def spec(tmp_path: Path, workload: str, *, model: str = 'provider = "fixture"\n',
         conditions: str = CONDITIONS, top: str = "", name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(f'name = "agent-spec"\nseed = 3\nreplicates = 1\noutput = "out"\n{top}\n'
                    f"[workload]\n{workload}\n[model]\n{model}\n{conditions}",
                    encoding="utf-8")
    return path


def lines(path: Path) -> list[dict[str, object]]:
    return [item.value for item in iter_jsonl(path)]


def test_agent_tasks_spec_writes_the_reports_and_resumes(tmp_path: Path) -> None:
    path = spec(tmp_path, 'format = "agent"\nsource = "builtin:agent-tasks"\nlimit = 2\n'
                'offset = 1\n', top="", conditions=CONDITIONS + '\n[agent]\nmax_turns = 4\n')
    summary = run_experiment(path)
    out = tmp_path / "out"
    assert (summary.completed, summary.skipped, summary.planned) == (6, 0, 6)
    assert summary.labels and "fixture" in summary.labels[0]
    for name in ("cef-report.json", "cef-report.md", "public-eval-elided.json",
                 "public-eval-last-k.json", "report.html", "public-eval/full.jsonl"):
        assert (out / name).is_file(), name
    trials = lines(out / "agent-trials.jsonl")
    assert sorted({str(t["task_id"]) for t in trials}) == sorted(
        t.task_id for t in agent_tasks()[1:3])
    assert {t["workload"] for t in trials} == {"ctxbench-agent-tasks"}
    assert all(int(str(t["turn_count"])) <= 4 for t in trials)
    assert len(lines(out / "cef-trials.jsonl")) == 6
    assert "Input tokens per turn" in (out / "report.html").read_text(encoding="utf-8")
    report = (out / "cef-report.json").read_bytes()
    with pytest.raises(InputError, match="already holds a run; continue it with"):
        run_experiment(path)
    again = run_experiment(path, resume=True)
    assert (again.completed, again.skipped) == (0, 6)
    assert (out / "cef-report.json").read_bytes() == report
    # A changed condition is not resumed into the same directory.
    path.write_text(path.read_text(encoding="utf-8").replace("budget = 4000", "budget = 3000",
                                                              1), encoding="utf-8")
    with pytest.raises(InputError, match=r"agent-trials.jsonl:\d+: condition: expected a "
                       r"trial of this spec's conditions \(full=full_history@None, "
                       r"elided=elide_tool_outputs@3000"):
        run_experiment(path, resume=True)


def test_bfcl_multi_turn_spec_runs_a_category(tmp_path: Path) -> None:
    path = spec(tmp_path, 'format = "bfcl_multi_turn"\nsource = "miss_param"\nlimit = 1\n',
                conditions=CONDITIONS + "\n[agent]\nmax_steps = 4\n")
    summary = run_experiment(path)
    assert summary.completed == 3
    trials = lines(tmp_path / "out" / "agent-trials.jsonl")
    assert {t["workload"] for t in trials} == {"bfcl-multi_turn_miss_param"}
    assert {t["scorer"] for t in trials} == {"bfcl-multi-turn-state-response-v1"}
    assert {t["task_id"] for t in trials} == {"multi_turn_miss_param_0"}
    assert (tmp_path / "out" / "public-eval-elided.json").is_file()
    # The CEF lines hold the task's user turns and each turn's ground-truth calls.
    task = load_multi_turn("multi_turn_miss_param", limit=1)[0]
    for record in lines(tmp_path / "out" / "cef-trials.jsonl"):
        assert record["query"] == "\n\n".join("\n".join(t) for t in task.turns)
        answers = record["expected"]["answers"]  # type: ignore[index]
        assert len(answers) == len(task.turns)
        assert answers[0] == "[" + ", ".join(c.render() for c in task.ground_truth[0]) + "]"
        assert answers[0].startswith("[") and "(" in answers[0]


def test_trace_spec_writes_cef_and_public_eval_from_the_replayed_points(
        tmp_path: Path) -> None:
    path = spec(tmp_path, f'format = "agent_traces"\ntrace_format = "hermes"\n'
                f'source = ["{HERMES}"]\n')
    summary = run_experiment(path)
    out = tmp_path / "out"
    points = decision_points(read_hermes_trajectories(HERMES)[0])
    assert summary.completed == 3 * len(points)
    # The same replay, outside the run: the CEF records carry its scores and usage.
    expected = replay_points(get_provider("fixture"), points, [
        (get_context_manager("full_history"), None),
        (get_context_manager("elide_tool_outputs"), 4000),
        (get_context_manager("last_k_turns"), 4000)], tokenizer=get_tokenizer())
    cef = {(r["condition"], r["task_id"]): r for r in lines(out / "cef-trials.jsonl")}
    for n, outcome in enumerate(expected):
        record = cef[(("full", "elided", "last-k")[n // len(points)], outcome.point_id)]
        assert record["task_score"] == outcome.score
        assert record["evidence_recall"] == outcome.evidence_recall
        assert record["context_tokens"] == outcome.usage.context_tokens > 0
        assert record["scorer"] == "trace-next-move-v1"
        point = next(p for p in points if p.point_id == outcome.point_id)
        user = [m.content for m in point.history if m.role == "user"]
        assert record["query"] == user[-1]
        assert record["expected"] == {"answers": [recorded_move(point)],
                                      "answer_terms": [], "abstention": False}
    moves = {p.kind: recorded_move(p) for p in points}
    assert moves["action"].startswith("[") and moves["action"].endswith(")]")
    assert "answer" not in moves or not moves["answer"].startswith("[")
    rows = lines(out / "public-eval" / "elided.jsonl")
    assert sorted(str(r["instance_id"]) for r in rows) == sorted(p.point_id for p in points)
    assert all(r["resolved"] == (cef[("elided", str(r["instance_id"]))]["task_score"] == 1.0)
               for r in rows)
    for name in ("cef-report.json", "public-eval-elided.json", "public-eval-last-k.json",
                 "report.html"):
        assert (out / name).is_file(), name


def test_openclaw_trace_spec_priced_from_a_snapshot(tmp_path: Path) -> None:
    snapshot = {"schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai",
                "model": "agent-loopback", "effective_date": "2026-01-15",
                "source_reference": "https://example.invalid/pricing",
                "rates_usd_per_million": {"uncached_input": 2, "cached_input": 0.5,
                                          "cache_write": 0, "output": 10}}
    (tmp_path / "prices.json").write_text(json.dumps(snapshot), encoding="utf-8")
    with AgentServer() as server:
        path = spec(tmp_path, f'format = "agent_traces"\ntrace_format = "openclaw"\n'
                    f'source = "{OPENCLAW}"\n',
                    model=f'provider = "openai"\nmodel = "agent-loopback"\n'
                          f'base_url = "{server.base_url}"\n',
                    top='pricing = "prices.json"\n')
        summary = run_experiment(path)
    assert summary.completed > 0
    trials = lines(tmp_path / "out" / "agent-trials.jsonl")
    assert {t["cost_source"] for t in trials} == {"pricing_snapshot"}
    for t in trials:
        usage = t["usage"]
        assert isinstance(usage, dict)
        # 2 USD per million input tokens, 10 per million output: micro-USD per request.
        assert t["cost_micro_usd"] == 2 * usage["uncached_input_tokens"] \
            + 10 * usage["output_tokens"]
    rows = lines(tmp_path / "out" / "public-eval" / "full.jsonl")
    assert sum(float(str(r["usd"])) for r in rows) > 0


@pytest.mark.parametrize(("change", "message"), [
    (("last_k_turns", "no_such"), "exp.toml:24: [conditions][2].manager: expected an "
     "installed context manager (full_history, last_k_turns, elide_tool_outputs, "
     "summarize_older, compiled_history, combined; see ctxbench context-managers), "
     'module:attr or external:COMMAND, got the string "no_such"'),
    (("last_k_turns", "no_such_module:thing"), "exp.toml:24: [conditions][2].manager: "
     "expected a context manager that loads (context manager no_such_module:thing: cannot "
     "load no_such_module:thing: ModuleNotFoundError"),
    (('manager = "full_history"\n', 'manager = "full_history"\nbudget = 9\n'),
     "exp.toml:16: [conditions][0].budget: expected no budget (the context manager "
     "full_history takes none), got the integer 9"),
    (('budget = 4000\n\n[[conditions]]', 'budget = 0\n\n[[conditions]]'),
     "exp.toml:20: [conditions][1].budget: expected an integer in [1, 10000000], got the "
     "integer 0"),
    (('provider = "fixture"\n', 'provider = "fixture"\nmax_output_tokens = 9\n'),
     "exp.toml:12: [model].max_output_tokens: expected no max_output_tokens (an agent run "
     "sets max_output_tokens in [agent]"),
    (('manager = "last_k_turns"', 'manager = "last_k_turns"\nparams = {keep = 1}'),
     "exp.toml:25: [conditions][2].params.keep: expected a parameter the manager declares "
     '(k), got the string "keep"'),
    (('manager = "last_k_turns"', 'manager = "last_k_turns"\nparams = {k = "2"}'),
     "exp.toml:25: [conditions][2].params.k: expected an integer (the k parameter), got the "
     'string "2"'),
    (('manager = "last_k_turns"', 'manager = "last_k_turns"\nparams = {k = 0}'),
     "exp.toml:25: [conditions][2].params.k: expected an integer in [1, 1000], got the "
     "integer 0"),
    (('manager = "last_k_turns"', 'manager = "last_k_turns"\nparams = {k = 1.5}'),
     "[conditions][2].params.k: expected an integer (the k parameter), got the number 1.5"),
    (('manager = "last_k_turns"', 'manager = "last_k_turns"\nparams = 3'),
     "exp.toml:25: [conditions][2].params: expected a table of the manager's parameters"),
    (('manager = "full_history"\n', 'manager = "full_history"\nparams = {k = 1}\n'),
     "[conditions][0].params.k: expected a parameter the manager declares (none: the "
     "manager declares no parameters)"),
])
def test_bad_agent_specs_are_located_errors(tmp_path: Path, change: tuple[str, str],
                                            message: str) -> None:
    path = spec(tmp_path, 'format = "agent"\nsource = "builtin:agent-tasks"\n')
    path.write_text(path.read_text(encoding="utf-8").replace(*change, 1), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        run_experiment(path)
    assert message in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_bad_workload_tables_exit_2_with_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for n, (workload, message) in enumerate([
            ('format = "bfcl_multi_turn"\nsource = "nope"\n',
             "[workload].source: expected one of multi_turn_base"),
            ('format = "agent_traces"\nsource = "missing.jsonl"\n',
             "[workload].trace_format: expected"),
            ('format = "agent_traces"\ntrace_format = "hermes"\nsource = "missing.jsonl"\n',
             "[workload].source: expected trace files that exist"),
            ('format = "bfcl_multi_turn"\nsource = "miss_func"\n', "native_context: expected "
             "false")]):
        conditions = CONDITIONS + ("native_context = true\n" if n == 3 else "")
        path = spec(tmp_path, workload, conditions=conditions, name=f"bad{n}.toml")
        code = run_guarded(run_command, [str(path), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_it_helpdesk_example_runs_end_to_end_from_the_cli(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped v2 example and its spec, copied out of the package, through
    ``ctxbench run`` on the fixture provider: CEF and public-eval reports for each manager."""
    import shutil

    folder = Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "examples" / \
        "agent-tasks"
    for name in ("it-helpdesk.json", "it-helpdesk-fixture.toml"):
        shutil.copy(folder / name, tmp_path / name)
    code = run_guarded(run_command, [str(tmp_path / "it-helpdesk-fixture.toml"),
                                     "--no-progress"])
    assert code == 0, capsys.readouterr().err
    out = tmp_path / "runs" / "it-helpdesk-fixture"
    trials = lines(out / "agent-trials.jsonl")
    assert len(trials) == 30
    assert {t["workload"] for t in trials} == {"it-helpdesk"}
    assert {t["workload_version"] for t in trials} == {"2026-12-02"}
    by = {(t["task_id"], t["condition"]): t for t in trials}
    # One lookup answers a single-fact task under every manager.
    for condition in ("full", "last-1", "compiled"):
        assert by[("ticket-host", condition)]["task_score"] == 1.0
        assert by[("runbook-step", condition)]["task_score"] == 1.0
    # The host record prints a restricted credential: full history sends it on, refused.
    assert by[("db-port", "full")]["stop_reason"] == "error"
    assert str(by[("db-port", "full")]["error_type"]).startswith(
        "context_manager_failed:forbidden_text")
    cef = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert cef["schema_version"].startswith("ctxbench.cef-report")
    records = lines(out / "cef-trials.jsonl")
    assert len(records) == 30
    prompts = {t["task_id"]: (t["query"], t["expected"]) for t in trials}
    assert prompts["chain-ticket-ip"] == (
        "Ticket 'INC-4821' reports a failing health check. What is the ip address of the "
        "host it names?", {"answers": ["10.20.7.17"], "answer_terms": [], "abstention": False})
    assert all((r["query"], r["expected"]) == prompts[str(r["task_id"])] for r in records)
    from ctxbench.protocols.cef.records import iter_trials

    parsed = list(iter_trials([out / "cef-trials.jsonl"], baseline="full"))
    assert {t.query for t in parsed} == {q for q, _ in prompts.values()}
    assert {t.expected.answers for t in parsed if t.expected is not None} == {
        tuple(e["answers"]) for _, e in prompts.values()}  # type: ignore[index]
    assert {json.dumps(t["params"]) for t in trials if t["condition"] == "last-1"} == {
        '{"k": 1}'}
    assert {json.dumps(t["params"]) for t in trials if t["condition"] == "compiled"} == {
        '{"keep_newest": 1}'}
    for name in ("last-1", "compiled"):
        report = json.loads((out / f"public-eval-{name}.json").read_text(encoding="utf-8"))
        assert report["schema_version"].startswith("ctxbench.public-eval")
        assert len(lines(out / "public-eval" / f"{name}.jsonl")) == 10


def test_manager_params_reach_the_manager_and_are_part_of_the_condition(
        tmp_path: Path) -> None:
    conditions = ('[[conditions]]\nname = "full"\nmanager = "full_history"\n\n'
                  '[[conditions]]\nname = "last"\nmanager = "last_k_turns"\n'
                  'params = { k = 1 }\n')
    path = spec(tmp_path, 'format = "agent"\nsource = "builtin:agent-tasks"\nlimit = 1\n',
                conditions=conditions)
    assert run_experiment(path).completed == 2
    trials = lines(tmp_path / "out" / "agent-trials.jsonl")
    assert [t["params"] for t in trials] == [{}, {"k": 1}]
    assert run_experiment(path, resume=True).skipped == 2
    path.write_text(path.read_text(encoding="utf-8").replace("k = 1", "k = 2"),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"agent-trials.jsonl:2: condition: expected a trial "
                       r"of this spec's conditions \(full=full_history@None, "
                       r"last=last_k_turns@None\(k=2\) on extractive-reader-v1\), got "
                       r"last=last_k_turns@None\(k=1\)"):
        run_experiment(path, resume=True)
    # The declared default, given or not, is the same condition.
    path.write_text(path.read_text(encoding="utf-8").replace("params = { k = 2 }\n", ""),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"last=last_k_turns@None\(k=2\) on "):
        run_experiment(path, resume=True)


def test_ctrl_c_reports_the_trials_done_and_resume_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.runner.providers.fixture import FixtureProvider

    real = FixtureProvider.complete
    calls = [0]

    async def complete(self: FixtureProvider, request: object) -> object:
        calls[0] += 1
        if calls[0] == 5:  # each task takes two requests: two trials are done by then
            raise KeyboardInterrupt
        return await real(self, request)  # type: ignore[arg-type]

    monkeypatch.setattr(FixtureProvider, "complete", complete)
    path = spec(tmp_path, 'format = "agent"\nsource = "builtin:agent-tasks"\nlimit = 2\n')
    summary = run_experiment(path)
    assert summary.interrupted and (summary.completed, summary.skipped) == (2, 0)
    assert summary.resume_command == f"ctxbench run {path} --resume"
    log = tmp_path / "out" / "agent-trials.jsonl"
    assert len(lines(log)) == 2 and log.read_bytes().endswith(b"\n")
    assert not (tmp_path / "out" / "cef-report.json").exists()
    # From the CLI: exit 130, the count and the resume hint.
    calls[0] = 0
    (tmp_path / "cli").mkdir()
    again = spec(tmp_path / "cli", 'format = "agent"\nsource = "builtin:agent-tasks"\n'
                 'limit = 2\n')
    assert run_guarded(run_command, [str(again), "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "interrupted after 2 trial(s)" in err and "--resume" in err
    monkeypatch.setattr(FixtureProvider, "complete", real)
    done = run_experiment(path, resume=True)
    assert not done.interrupted and (done.completed, done.skipped) == (4, 2)
    assert len(lines(log)) == 6 and (tmp_path / "out" / "cef-report.json").is_file()


SHAPES = TRACES / "shapes"  # built by tests/workloads/trace_shapes.py, writer by writer


@pytest.mark.parametrize(("trace_format", "names"), [
    ("hermes", ("hermes-trajectory_samples.jsonl", "hermes-batch.jsonl",
                "hermes-compressed.jsonl", "hermes-structured.jsonl")),
    ("openclaw", ("openclaw-tree.jsonl", "openclaw-v1.jsonl", "openclaw-v2.jsonl",
                  "openclaw-incomplete.jsonl"))])
def test_every_writer_shape_replays_end_to_end_from_the_cli(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], trace_format: str,
        names: tuple[str, ...]) -> None:
    sources = ", ".join(f'"{SHAPES / n}"' for n in names)
    path = spec(tmp_path, f'format = "agent_traces"\ntrace_format = "{trace_format}"\n'
                f"source = [{sources}]\n")
    code = run_guarded(run_command, [str(path), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    read = read_hermes_trajectories if trace_format == "hermes" else \
        (lambda p: (read_openclaw_session(p),))
    traces = [t for n in names for t in read(SHAPES / n)]
    points = [p for t in traces for p in decision_points(t)]
    # a completed run of each file gives points; the failed, partial and aborted give none
    assert {p.trace.source.split(":")[0] for p in points} == {
        str(SHAPES / n) for n in names if "incomplete" not in n}
    note = skipped_summary(traces)
    assert note is not None and note in out.splitlines()
    trials = lines(tmp_path / "out" / "agent-trials.jsonl")
    assert len(trials) == 3 * len(points)
    assert {t["trace_agent"] for t in trials} == {trace_format}
    expected = replay_points(get_provider("fixture"), points, [
        (get_context_manager("full_history"), None)], tokenizer=get_tokenizer())
    cef = {(r["condition"], r["task_id"]): r for r in lines(tmp_path / "out" / "cef-trials.jsonl")}
    for outcome in expected:
        record = cef[("full", outcome.point_id)]
        assert (record["task_score"], record["evidence_recall"]) == (
            outcome.score, outcome.evidence_recall)
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_trace_no_writer_produces_stops_the_run_with_one_located_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(x) for x in (SHAPES / "openclaw-v2.jsonl").read_text().splitlines()]
    rows[0]["version"] = 4
    bad = tmp_path / "s.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path = spec(tmp_path, f'format = "agent_traces"\ntrace_format = "openclaw"\n'
                f'source = "{bad}"\n')
    code = run_guarded(run_command, [str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"{bad}:1: version: expected a session version 1, 2 or 3" in err
