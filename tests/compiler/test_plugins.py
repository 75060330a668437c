"""Strategy plugins: the baselines, discovery, and the checks applied to any strategy."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.compiler.commit import verify_commit
from ctxbench.compiler.discovery import (
    compile_named,
    get_strategy,
    installed_strategies,
    strategy_source,
    strategy_table,
)
from ctxbench.compiler.plugins import (
    Selected,
    StrategyFailure,
    StrategyRequest,
    StrategyResult,
    compile_with_strategy,
)
from ctxbench.compiler.render import RENDER_TEMPLATE
from ctxbench.core import InputError
from ctxbench.protocols.eceb import load_benchmark, seed_paths

SEED = seed_paths()
TASK = "payments-failover-region"


@pytest.fixture(scope="module")
def seed() -> tuple[ContextIndex, Policy, str]:
    benchmark = load_benchmark(SEED.benchmark)
    index = ContextIndex.build(Corpus.from_benchmark(benchmark, SEED.corpus),
                               get_tokenizer("cl100k_base"))
    task = benchmark.task(TASK)
    assert task is not None
    return index, Policy.from_task(task), task.query


def test_every_strategy_is_listed_with_its_origin() -> None:
    names = {i.name: i for i in installed_strategies()}
    for name in ("compiled", "naive_top_k", "full_permitted_context", "truncate-head",
                 "truncate-tail", "middle-out", "chunk-bm25", "entroly"):
        assert names[name].origin == "built-in" and names[name].distribution == "ctxbench"
        assert names[name].problem is None
    table = strategy_table()
    assert "entroly = ctxbench.compiler.entroly_adapter:ENTROLY" in table
    assert strategy_source("entroly")["requires"]["entroly"] != "not installed"


@pytest.mark.parametrize("name", ["compiled", "naive_top_k"])
def test_builtins_through_the_plugin_path_give_the_same_commit(
        seed: tuple[ContextIndex, Policy, str], name: str) -> None:
    index, policy, query = seed
    direct = compile_context(index, query=query, budget=512, policy=policy, strategy=name)
    plugin = compile_with_strategy(index, strategy=get_strategy(name), query=query,
                                   budget=512, policy=policy, timeout_s=None)
    assert plugin.commit == direct.commit and plugin.text == direct.text


@pytest.mark.parametrize("name", ["truncate-head", "truncate-tail", "middle-out",
                                  "chunk-bm25"])
@pytest.mark.parametrize("budget", [256, 1024])
def test_baselines_fit_the_budget_and_verify(seed: tuple[ContextIndex, Policy, str],
                                             name: str, budget: int) -> None:
    index, policy, query = seed
    packet = compile_context(index, query=query, budget=budget, policy=policy, strategy=name)
    assert 0 < packet.token_count <= budget
    assert packet.token_count == index.count(packet.text)
    assert packet.commit["template"] == RENDER_TEMPLATE
    assert packet.commit["strategy_source"]["entry_point"].startswith(
        f"ctxbench.strategies: {name} = ctxbench.compiler.baselines:")
    verify_commit(packet.commit, SEED.corpus)  # re-rendered from the corpus alone
    assert not set(packet.artifact_ids) - {index.artifact_at(p).artifact_id
                                           for p in index.permitted_artifacts(policy)}


def test_truncation_keeps_the_named_end(seed: tuple[ContextIndex, Policy, str]) -> None:
    index, policy, query = seed
    permitted = [index.artifact_at(p) for p in index.permitted_artifacts(policy)]
    full = compile_context(index, query=query, budget=None, policy=policy,
                           strategy="full_permitted_context")
    tail_cut = compile_context(index, query=query, budget=700, policy=policy,
                               strategy="truncate-tail")
    head_cut = compile_context(index, query=query, budget=700, policy=policy,
                               strategy="truncate-head")
    middle = compile_context(index, query=query, budget=700, policy=policy,
                             strategy="middle-out")
    first, last = tail_cut.selected[0], head_cut.selected[-1]
    assert first.artifact_id == permitted[0].artifact_id and first.ranges[0][0] == 0
    last_size = len(index.source(index.position(permitted[-1].artifact_id) or 0))
    assert last.artifact_id == permitted[-1].artifact_id and last.ranges[-1][1] == last_size
    assert middle.selected[0].ranges[0][0] == 0 and middle.selected[-1].ranges[-1][1] == \
        last_size
    assert full.token_count > 700  # so each really cut something
    # A budget above the whole context keeps all of it.
    whole = compile_context(index, query=query, budget=full.token_count + 50, policy=policy,
                            strategy="middle-out")
    assert whole.artifact_ids == full.artifact_ids


def test_chunk_bm25_ranks_by_the_query(seed: tuple[ContextIndex, Policy, str]) -> None:
    index, policy, query = seed
    packet = compile_context(index, query=query, budget=300, policy=policy,
                             strategy="chunk-bm25")
    assert packet.artifact_ids[0] == "runbook-payments-failover"
    assert "failover" in packet.text.lower()


def test_entroly_adapter_records_its_version(seed: tuple[ContextIndex, Policy, str]) -> None:
    from importlib import metadata

    index, policy, query = seed
    packet = compile_context(index, query=query, budget=512, policy=policy,
                             strategy="entroly")
    assert 0 < packet.token_count <= 512
    details = packet.commit["strategy_source"]["details"]
    assert details["entroly_version"] == metadata.version("entroly")
    assert packet.commit["template"] == "external"
    verify_commit(packet.commit, SEED.corpus, context_text=packet.text)
    assert set(packet.artifact_ids) <= {index.artifact_at(p).artifact_id
                                        for p in index.permitted_artifacts(policy)}


class _Bad:
    budgeted = True
    summary = "misbehaves"

    def __init__(self, name: str, build: object) -> None:
        self.name = name
        self._build = build

    def build(self, request: StrategyRequest) -> StrategyResult:
        return self._build(request)  # type: ignore[operator, no-any-return]


def _first(request: StrategyRequest) -> tuple[Selected, ...]:
    c = request.candidates()[0]
    return (Selected(c.artifact_id, ((c.start, c.end),)),)


def _sleep(request: StrategyRequest) -> StrategyResult:
    time.sleep(3)
    return StrategyResult("", ())


def _raise(request: StrategyRequest) -> StrategyResult:
    raise KeyError("boom")


BAD = {
    "over_budget": lambda r: StrategyResult(
        r.render([Selected(d.artifact_id) for d in r.documents()]),
        tuple(Selected(d.artifact_id) for d in r.documents())),
    "forbidden_artifact": lambda r: StrategyResult("x", (Selected("secret-payments-keys"),)),
    "forbidden_text": lambda r: StrategyResult(r.render(_first(r)) + "the root password\n",
                                               _first(r)),
    "invalid_output": lambda r: StrategyResult(42, ()),  # type: ignore[arg-type]
    "exception": _raise,
    "timeout": _sleep,
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_output_is_a_named_failure(seed: tuple[ContextIndex, Policy, str],
                                       kind: str) -> None:
    index, policy, query = seed
    strategy = _Bad("bad", BAD[kind])
    with pytest.raises(StrategyFailure) as info:
        compile_with_strategy(index, strategy=strategy, query=query, budget=300,
                              policy=policy, timeout_s=0.5)
    assert info.value.kind == kind
    assert info.value.error_type.startswith(f"strategy_failed:{kind}: ")
    assert info.value.exit_code == 3


def test_a_not_a_result_and_unknown_names_are_refused(
        seed: tuple[ContextIndex, Policy, str]) -> None:
    index, policy, query = seed
    with pytest.raises(StrategyFailure, match="invalid_output: expected a StrategyResult, "
                                              "got str"):
        compile_with_strategy(index, strategy=_Bad("bad", lambda r: "text"), query=query,
                              budget=300, policy=policy)
    odd = _Bad("bad", lambda r: StrategyResult("", (Selected(_first(r)[0].artifact_id,
                                                             5),)))  # type: ignore[arg-type]
    with pytest.raises(StrategyFailure, match=r"selected\[0\].ranges: expected a tuple"):
        compile_with_strategy(index, strategy=odd, query=query, budget=300, policy=policy)
    with pytest.raises(InputError, match=r"strategy: expected one of .*entroly.* got 'nope'"):
        compile_named(index, query=query, budget=300, policy=policy, strategy="nope")
    with pytest.raises(InputError, match="budget: expected an integer >= 1 for middle-out"):
        compile_named(index, query=query, budget=None, policy=policy, strategy="middle-out")


def test_compile_cli_takes_any_installed_strategy(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    task = ["compile", "--benchmark", str(SEED.benchmark), "--corpus", str(SEED.corpus),
            "--task", TASK, "--budget", "400", "--strategy"]
    assert run_guarded(cli, [*task, "truncate-tail", "--output", str(tmp_path / "c.json")],
                       debug=False) == 0
    out = capsys.readouterr().out
    assert out.startswith("truncate-tail: ") and "of packet budget 400 (a run" in out
    assert run_guarded(cli, [*task, "nope"], debug=False) == 2
    err = capsys.readouterr().err
    assert "got 'nope'" in err and len(err.strip().splitlines()) == 1
    assert run_guarded(cli, ["strategies"], debug=False) == 0
    assert "chunk-bm25" in capsys.readouterr().out


OVER = _Bad("over", BAD["over_budget"])


def test_compile_cli_reports_bad_output_in_one_line_with_exit_3(
        capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    code = run_guarded(cli, ["compile", "--benchmark", str(SEED.benchmark), "--corpus",
                             str(SEED.corpus), "--task", TASK, "--budget", "300",
                             "--strategy", "compiler.test_plugins:OVER"], debug=False)
    err = capsys.readouterr().err.strip()
    assert code == 3 and len(err.splitlines()) == 1
    assert "strategy over: over_budget: " in err and "exceed the budget 300" in err


HOSTILE = "hostile_plugins"


def _forbidden_lines() -> list[str]:
    from hostile_plugins import secret

    return [line for line in secret().splitlines() if len(line.strip()) >= 24]


@pytest.mark.parametrize(("attack", "kind"), [
    ("read_index", "exception"), ("in_details", "forbidden_text"),
    ("in_empty_reason", "forbidden_text"), ("in_exception", "exception"),
    ("patch_permits", "forbidden_artifact"), ("system_exit", "exception"),
    ("base_exception", "exception"),
])
def test_a_hostile_plugin_fails_closed_with_no_restricted_text(
        seed: tuple[ContextIndex, Policy, str], attack: str, kind: str) -> None:
    index, policy, query = seed
    with pytest.raises(StrategyFailure) as info:
        compile_named(index, query=query, budget=400, policy=policy,
                      strategy=f"{HOSTILE}:{attack.upper()}")
    assert info.value.kind == kind, info.value
    shown = str(info.value).upper()
    assert not any(line.upper() in shown for line in _forbidden_lines())
    assert "compensation" not in shown.lower() or attack != "in_exception"
    assert Policy(("public",)).permits("x", "restricted") is False  # the parent unpatched


def test_a_hostile_plugin_exception_message_is_withheld(
        seed: tuple[ContextIndex, Policy, str]) -> None:
    index, policy, query = seed
    with pytest.raises(StrategyFailure, match="exception: the message is withheld: it holds "
                                              "text of an artifact the policy denies"):
        compile_named(index, query=query, budget=400, policy=policy,
                      strategy=f"{HOSTILE}:IN_EXCEPTION")
    with pytest.raises(StrategyFailure, match="exception: SystemExit: 0"):
        compile_named(index, query=query, budget=400, policy=policy,
                      strategy=f"{HOSTILE}:SYSTEM_EXIT")


def test_a_plugin_holding_the_gil_is_killed_at_the_deadline(
        seed: tuple[ContextIndex, Policy, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.compiler import plugins

    index, policy, query = seed
    from ctxbench.compiler.discovery import strategy_facts

    assert strategy_facts(f"{HOSTILE}:HOLD_GIL").name == "hold-gil"  # its worker is warm
    monkeypatch.setattr(plugins, "STRATEGY_TIMEOUT_S", 2.0)
    started = time.monotonic()
    with pytest.raises(StrategyFailure, match="timeout: no packet within 2 s"):
        compile_named(index, query=query, budget=400, policy=policy,
                      strategy=f"{HOSTILE}:HOLD_GIL")
    assert time.monotonic() - started < 60  # the regex alone runs for minutes


def test_a_plugin_printing_restricted_text_shows_nothing(
        capfd: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    code = run_guarded(cli, ["compile", "--benchmark", str(SEED.benchmark), "--corpus",
                             str(SEED.corpus), "--task", TASK, "--budget", "400", "--print",
                             "--strategy", f"{HOSTILE}:IN_STREAMS"], debug=False)
    out, err = capfd.readouterr()
    assert code == 0
    assert not any(line in out + err for line in _forbidden_lines())


@pytest.mark.parametrize("attack", ["system_exit", "base_exception", "in_exception"])
def test_compile_exits_3_on_a_base_exception_with_one_line(
        attack: str, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    code = run_guarded(cli, ["compile", "--benchmark", str(SEED.benchmark), "--corpus",
                             str(SEED.corpus), "--task", TASK, "--budget", "400",
                             "--strategy", f"{HOSTILE}:{attack.upper()}"], debug=False)
    out, err = capsys.readouterr()
    assert (code, out) == (3, "")
    assert len(err.strip().splitlines()) == 1 and ": exception: " in err


def test_an_in_process_base_exception_is_the_packet_failure(
        seed: tuple[ContextIndex, Policy, str]) -> None:
    from hostile_plugins import base_exception, system_exit

    index, policy, query = seed
    for build in (system_exit, base_exception):
        for timeout in (None, 5.0):
            with pytest.raises(StrategyFailure) as info:
                compile_with_strategy(index, strategy=_Bad("bad", build), query=query,
                                      budget=300, policy=policy, timeout_s=timeout)
            assert info.value.kind == "exception"
