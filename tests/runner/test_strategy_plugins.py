"""Plugin strategies in experiments: a separately installed package, bad output, Entroly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

import pytest

from ctxbench.compiler import discovery, plugins
from ctxbench.core import iter_jsonl
from ctxbench.runner.experiment import run_experiment

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    discovery.installed_strategies.cache_clear()
    discovery.get_strategy.cache_clear()
    yield
    discovery.installed_strategies.cache_clear()
    discovery.get_strategy.cache_clear()


def _records(out: Path) -> list[dict[str, object]]:
    return [item.value for item in iter_jsonl(out / "trials.jsonl")]


TINY = '''
"""A third-party strategy: the best candidate chunk, in ctxbench's canonical rendering."""
from ctxbench.compiler.plugins import Selected, StrategyResult


def build(request):
    """the single best BM25 chunk"""
    best = request.candidates()[:1]
    selected = tuple(Selected(c.artifact_id, ((c.start, c.end),)) for c in best)
    return StrategyResult(request.render(selected), selected)
'''


def test_a_separately_installed_package_runs_in_an_experiment(
        tmp_path: Path, make_spec: Callable[..., Path]) -> None:
    package = tmp_path / "tiny"
    (package / "tiny_ctx_strategy").mkdir(parents=True)
    (package / "tiny_ctx_strategy" / "__init__.py").write_text(TINY, encoding="utf-8")
    (package / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "tiny-ctx-strategy"
        version = "0.3.1"
        [project.entry-points."ctxbench.strategies"]
        tiny-best = "tiny_ctx_strategy:build"
        '''), encoding="utf-8")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(site), str(package)],
                   check=True, capture_output=True, timeout=300)
    assert list(site.glob("tiny_ctx_strategy-0.3.1.dist-info/entry_points.txt"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    listed = subprocess.run([sys.executable, "-m", "ctxbench", "strategies"], env=env,
                            capture_output=True, text=True, timeout=120, check=True).stdout
    line = next(x for x in listed.splitlines() if x.startswith("tiny-best"))
    assert "third-party" in line and "tiny-ctx-strategy 0.3.1" in line
    assert "the single best BM25 chunk" in line
    spec = make_spec(conditions='[[conditions]]\nstrategy = "full_permitted_context"\n\n'
                                '[[conditions]]\nstrategy = "tiny-best"\nbudgets = [200]\n')
    done = subprocess.run([sys.executable, "-m", "ctxbench", "run", str(spec)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    out = spec.parent / "out"
    tiny = [r for r in _records(out) if r["strategy"] == "tiny-best"]
    assert len(tiny) == 4 and all(r["outcome"] == "success" for r in tiny)
    assert all(str(r["context_commit_id"]).startswith("ctx_") for r in tiny)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["strategies"]["tiny-best"] == {
        "origin": "third-party", "distribution": "tiny-ctx-strategy", "version": "0.3.1",
        "entry_point": "ctxbench.strategies: tiny-best = tiny_ctx_strategy:build"}
    report = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert "tiny-best@200" in json.dumps(report["aggregate"]["comparisons"])


BAD = '''
import time
from ctxbench.compiler.plugins import Selected, StrategyResult


def _whole(request):
    return tuple(Selected(d.artifact_id) for d in request.documents())


def over_budget(request):
    lines = "".join(d.text.rstrip("\\n") + "\\n" for d in request.documents())
    return StrategyResult(lines * 200, _whole(request))


def forbidden_artifact(request):
    return StrategyResult("x", (Selected("not-in-this-corpus"),))


def forbidden_text(request):
    return StrategyResult(request.render(_whole(request)) + "an invented line\\n",
                          _whole(request))


def not_a_string(request):
    return StrategyResult(["a", "list"], _whole(request))


def raises(request):
    raise ZeroDivisionError("division by zero in the packer")


def hangs(request):
    time.sleep(5)
    return StrategyResult("", ())


def exits(request):
    raise SystemExit(0)
'''
KINDS = {"over-budget": "over_budget", "forbidden-artifact": "forbidden_artifact",
         "forbidden-text": "forbidden_text", "not-a-string": "invalid_output",
         "raises": "exception", "hangs": "timeout", "exits": "exception"}


def test_bad_plugin_output_is_that_trials_failure(
        tmp_path: Path, make_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        fresh_registry: None) -> None:
    site = tmp_path / "bad-site"
    info = site / "bad_ctx_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "bad_ctx_plugins.py").write_text(BAD, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-ctx-plugins\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ctxbench.strategies]\n" + "".join(
            f"{name} = bad_ctx_plugins:{name.replace('-', '_')}\n" for name in KINDS),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(plugins, "STRATEGY_TIMEOUT_S", 0.5)
    conditions = '[[conditions]]\nstrategy = "full_permitted_context"\n\n' + "".join(
        f'[[conditions]]\nstrategy = "{name}"\nbudgets = [200]\n\n' for name in KINDS)
    summary = run_experiment(make_spec(conditions=conditions, replicates=1))
    records = _records(summary.output)
    assert summary.completed == 2 * (1 + len(KINDS))
    for name, kind in KINDS.items():
        failed = [r for r in records if r["strategy"] == name]
        assert len(failed) == 2, name
        for r in failed:
            assert r["outcome"] == "error"
            assert str(r["error_type"]).startswith(f"strategy_failed:{kind}: "), r["error_type"]
            assert r["context_tokens"] == 0 and r["usage_source"] == "runner_error"
            assert r["context_commit_id"] is None and r["response_text"] is None
    by_name = {r["strategy"]: str(r["error_type"]) for r in records}
    assert "ZeroDivisionError: division by zero in the packer" in by_name["raises"]
    assert "exceed the budget" in by_name["over-budget"]
    assert "no packet within 0.5 s" in by_name["hangs"]
    assert by_name["exits"] == "strategy_failed:exception: SystemExit: 0"
    assert "not-in-this-corpus" in by_name["forbidden-artifact"]
    baseline = [r for r in records if r["strategy"] == "full_permitted_context"]
    assert all(r["outcome"] == "success" for r in baseline)
    assert (summary.output / "cef-report.json").exists()
    assert (summary.output / "cef-report.md").exists()


def test_entroly_beside_compiled_and_the_baselines_on_the_seed(tmp_path: Path) -> None:
    spec = tmp_path / "seed.toml"
    spec.write_text(
        'name = "seed-entroly"\nseed = 3\nreplicates = 1\noutput = "out"\n\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 2\n\n'
        '[model]\nprovider = "fixture"\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n\n'
        '[[conditions]]\nstrategy = "entroly"\nbudgets = [1024, 2048]\n\n'
        '[[conditions]]\nstrategy = "truncate-tail"\nbudgets = [1024]\n\n'
        '[[conditions]]\nstrategy = "chunk-bm25"\nbudgets = [1024]\n', encoding="utf-8")
    summary = run_experiment(spec)
    records = _records(summary.output)
    entroly = [r for r in records if r["strategy"] == "entroly"]
    assert len(entroly) == 4 and all(r["outcome"] == "success" for r in entroly)
    assert all(str(r["context_commit_id"]).startswith("ctx_") for r in entroly)
    assert all(int(r["context_tokens"]) > 0 for r in entroly)  # type: ignore[call-overload]
    manifest = json.loads((summary.output / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["strategies"]["entroly"]["requires"]["entroly"] == \
        metadata.version("entroly")
    assert manifest["strategies"]["truncate-tail"]["origin"] == "built-in"
    for name in ("cef-report.json", "eceb-report.json", "eceb-run.json"):
        assert (summary.output / name).exists()
    cef = json.loads((summary.output / "cef-report.json").read_text(encoding="utf-8"))
    compared = {c["condition"] for c in cef["aggregate"]["comparisons"]}
    assert {"entroly@1024", "entroly@2048", "truncate-tail@1024", "chunk-bm25@1024",
            "compiled@1024"} <= compared
    assert any(line.startswith("ECEB compiled:") for line in summary.verdicts)
    # Entroly as ECEB's evaluated system, beside the same baseline trials.
    run = json.loads((summary.output / "eceb-entroly" / "eceb-run.json").read_text(
        encoding="utf-8"))
    assert run["system"]["name"] == "entroly"
    assert f"entroly {metadata.version('entroly')}" in run["system"]["revision"]
    observed = {(o["strategy"], o["budget"]) for o in run["observations"]}
    assert observed == {("full_permitted_context", None), ("compiled", 1024),
                        ("compiled", 2048)}
    report = json.loads((summary.output / "eceb-entroly" / "eceb-report.json").read_text(
        encoding="utf-8"))
    assert "compiled" in report["aggregate"]
    assert sum(line.startswith("ECEB entroly: ") for line in summary.verdicts) == 1
    for other in ("truncate-tail", "chunk-bm25"):
        assert (summary.output / f"eceb-{other}" / "eceb-report.json").exists()


def test_spec_takes_installed_names_and_refuses_others() -> None:
    from ctxbench.core import InputError
    from ctxbench.runner.spec import parse_spec

    def spec(condition: dict[str, object]) -> dict[str, object]:
        return {"name": "x", "seed": 1, "replicates": 1, "output": "o",
                "workload": {"source": "q.jsonl"}, "model": {"provider": "fixture"},
                "conditions": [{"strategy": "full_permitted_context"}, condition]}

    parsed = parse_spec(spec({"strategy": "middle-out", "budgets": [64]}), path=Path("/t/x.toml"))
    assert parsed.conditions[1].strategy == "middle-out"
    assert parsed.conditions[1].name == "middle-out"
    with pytest.raises(InputError, match=r"x.toml: \[conditions\]\[1\].strategy: expected one "
                                         r"of full_permitted_context, .*chunk-bm25, entroly "
                                         r"\(installed: ctxbench strategies\), or "
                                         r"module:attr, got the string "
                                         '"nope"'):
        parse_spec(spec({"strategy": "nope", "budgets": [64]}), path=Path("/t/x.toml"))
    with pytest.raises(InputError, match=r"\[conditions\]\[1\].budgets: expected budgets"):
        parse_spec(spec({"strategy": "entroly"}), path=Path("/t/x.toml"))


def test_module_attr_instances_and_functions_run_in_an_experiment(
        make_spec: Callable[..., Path]) -> None:
    conditions = ('[[conditions]]\nstrategy = "full_permitted_context"\n\n'
                  '[[conditions]]\nstrategy = "compiler.plugin_forms:INSTANCE"\n'
                  'budgets = [200]\n\n'
                  '[[conditions]]\nstrategy = "compiler.plugin_forms:best_chunk"\n'
                  'budgets = [200]\n')
    summary = run_experiment(make_spec(conditions=conditions, replicates=1))
    records = _records(summary.output)
    for name in ("best-chunk", "compiler.plugin_forms.best_chunk"):
        rows = [r for r in records if r["condition"] == f"{name}@200"]
        assert rows and all(r["outcome"] == "success" for r in rows), name
    manifest = json.loads((summary.output / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["strategies"]["compiler.plugin_forms:INSTANCE"] == {
        "origin": "module:attr", "target": "compiler.plugin_forms:INSTANCE"}


def test_a_plugin_exiting_at_import_is_listed_unusable_and_fails_a_spec(
        tmp_path: Path, make_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        fresh_registry: None, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    site = tmp_path / "exit-site"
    info = site / "exit_ctx_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "exit_ctx_plugin.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: exit-ctx-plugin\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ctxbench.strategies]\nexits-at-import = exit_ctx_plugin:X\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    assert run_guarded(cli, ["strategies"], debug=False) == 0
    listed = capsys.readouterr().out
    assert "exits-at-import" in listed and "UNUSABLE" in listed and "SystemExit" in listed
    spec = make_spec(conditions='[[conditions]]\nstrategy = "exits-at-import"\n'
                                'budgets = [200]\n')
    assert run_guarded(cli, ["run", str(spec)], debug=False) == 2
    err = capsys.readouterr().err
    assert "cannot load: SystemExit: 0" in err and len(err.strip().splitlines()) == 1


HOSTILE_NAMES = {"in-exception": "exception", "patch-permits": "forbidden_artifact",
                 "system-exit": "exception", "in-details": "forbidden_text",
                 "read-index": "exception"}


def test_hostile_plugins_in_an_eceb_run_leave_no_restricted_text_anywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    source = Path(__file__).parent.parent / "compiler" / "hostile_plugins.py"
    site = tmp_path / "hostile-site"
    info = site / "hostile_ctx_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "hostile_ctx_plugins.py").write_text(source.read_text(encoding="utf-8"),
                                                 encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-ctx-plugins\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[ctxbench.strategies]\n" + "".join(
        f"{n} = hostile_ctx_plugins:{n.replace('-', '_').upper()}\n" for n in HOSTILE_NAMES),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    spec = tmp_path / "seed.toml"
    spec.write_text(
        'name = "hostile"\nseed = 3\nreplicates = 1\noutput = "out"\n\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 1\n\n'
        '[model]\nprovider = "fixture"\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n' + "".join(
            f'[[conditions]]\nstrategy = "{n}"\nbudgets = [400]\n\n' for n in HOSTILE_NAMES),
        encoding="utf-8")
    summary = run_experiment(spec)
    records = _records(summary.output)
    assert {r["strategy"] for r in records} == {"full_permitted_context", *HOSTILE_NAMES}
    for r in records:
        if r["strategy"] in HOSTILE_NAMES:
            kind = HOSTILE_NAMES[str(r["strategy"])]
            assert str(r["error_type"]).startswith(f"strategy_failed:{kind}: "), r
    from ctxbench.protocols.eceb import seed_paths

    secret = (seed_paths().corpus / "policies" / "compensation-bands-2026.md").read_text(
        encoding="utf-8")
    lines = [line for line in secret.splitlines() if len(line.strip()) >= 24]
    for path in summary.output.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(line in text for line in lines), path
