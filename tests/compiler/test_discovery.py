"""Every documented form of naming a strategy loads: entry point or ``module:attr``,
naming an instance, a class or a plain function (docs/strategies.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.compiler import ContextIndex, Corpus, Policy, get_tokenizer
from ctxbench.compiler.discovery import compile_named, get_strategy, is_target
from ctxbench.core import InputError
from ctxbench.protocols.eceb import load_benchmark, seed_paths

SEED = seed_paths()
TASK = "payments-failover-region"
FORMS = {"compiler.plugin_forms:INSTANCE": "best-chunk",
         "compiler.plugin_forms:BestChunk": "best-chunk",
         "compiler.plugin_forms:best_chunk": "compiler.plugin_forms.best_chunk"}


@pytest.mark.parametrize("target", sorted(FORMS))
def test_every_module_attr_form_loads_under_a_slug_name(target: str) -> None:
    strategy = get_strategy(target)
    assert is_target(target) and strategy.name == FORMS[target]
    assert strategy.budgeted is True
    assert strategy.summary.startswith("the single best BM25 chunk")


@pytest.mark.parametrize("target", sorted(FORMS))
def test_every_module_attr_form_compiles(target: str) -> None:
    benchmark = load_benchmark(SEED.benchmark)
    index = ContextIndex.build(Corpus.from_benchmark(benchmark, SEED.corpus),
                               get_tokenizer("cl100k_base"))
    task = benchmark.task(TASK)
    assert task is not None
    packet = compile_named(index, query=task.query, budget=300,
                           policy=Policy.from_task(task), strategy=target)
    assert packet.strategy == FORMS[target] and 0 < packet.token_count <= 300
    assert packet.commit["strategy_source"] == {"origin": "module:attr", "target": target}


def test_a_function_target_whose_path_is_no_slug_is_refused() -> None:
    with pytest.raises(InputError, match="name: expected a slug"):
        get_strategy("compiler.plugin_forms:a_function_whose_dotted_path_is_longer_than_a_slug")


def test_compile_cli_takes_a_plain_function(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    code = run_guarded(cli, ["compile", "--benchmark", str(SEED.benchmark), "--corpus",
                             str(SEED.corpus), "--task", TASK, "--budget", "300",
                             "--strategy", "compiler.plugin_forms:best_chunk",
                             "--output", str(tmp_path / "c.json")], debug=False)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("compiler.plugin_forms.best_chunk: ")
