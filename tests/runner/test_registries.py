"""Providers and workload formats by entry points: ctxbench's own declared once, a
separately installed package's used with no change to ctxbench, unknown names refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from ctxbench.compiler import discovery
from ctxbench.core import InputError, entrypoints, iter_jsonl
from ctxbench.runner.agent_workloads import agent_workload_names
from ctxbench.runner.providers.registry import PROVIDERS, provider_factory, provider_names
from ctxbench.runner.spec import parse_spec
from ctxbench.runner.workload_formats import WORKLOADS, workload_format_names

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ("ctxbench.strategies", "ctxbench.providers", "ctxbench.workloads")


def _declared(group: str) -> dict[str, str]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["project"]["entry-points"][group])


def test_pyproject_is_the_one_declaration_of_the_builtins() -> None:
    assert entrypoints.source_pyproject() == ROOT / "pyproject.toml"
    assert discovery.builtin_strategies() == _declared("ctxbench.strategies")
    assert not hasattr(discovery, "BUILTIN")
    assert provider_names()[:4] == list(_declared("ctxbench.providers"))
    assert provider_names()[:4] == ["openai", "anthropic", "llamacpp", "fixture"]
    # The workloads group holds the one-request-per-trial formats and the agent workloads.
    assert workload_format_names()[:4] + agent_workload_names()[:1] == list(
        _declared("ctxbench.workloads"))
    assert agent_workload_names()[:1] == ["agent"]
    # Context managers too: the built-ins are the declared entries, each loading by name.
    from ctxbench.compiler.context_managers import discovery as managers

    assert _declared("ctxbench.context_managers") == managers.BUILTIN
    assert list(managers.installed_context_managers())[:6] == list(managers.BUILTIN)
    for name in managers.BUILTIN:
        assert managers.get_context_manager(name).name == name
    for group in GROUPS:  # every target loads
        for name in _declared(group):
            registry = {"ctxbench.providers": PROVIDERS, "ctxbench.workloads": WORKLOADS}
            if group in registry:
                assert registry[group].load(name) is not None
            else:
                assert discovery.get_strategy(name).name == name


def test_an_installed_copy_reads_its_distribution_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a source pyproject (a wheel install), ctxbench's own entries are its
    distribution's entry points, and no other distribution's."""
    dist = tmp_path / "ctxbench-9.9.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ctxbench\nVersion: 9.9\n",
                                   encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[ctxbench.providers]\nfixture = ctxbench.runner.providers.builtin:FIXTURE\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(entrypoints, "source_pyproject", lambda: None)
    PROVIDERS.clear()
    try:
        assert entrypoints.own_entries("ctxbench.providers") == {
            "fixture": "ctxbench.runner.providers.builtin:FIXTURE"}
        assert provider_names() == ["fixture"]
    finally:
        monkeypatch.undo()
        PROVIDERS.clear()
    assert provider_names()[:4] == ["openai", "anthropic", "llamacpp", "fixture"]


def _spec(tmp_path: Path, model: str, workload: str = 'source = "qa.jsonl"') -> str:
    (tmp_path / "qa.jsonl").write_text("", encoding="utf-8")
    return (f'name = "t"\nseed = 1\nreplicates = 1\noutput = "out"\n'
            f'pricing = "self_hosted"\n[workload]\n{workload}\n[model]\n{model}\n'
            '[[conditions]]\nstrategy = "full_permitted_context"\n'
            '[[conditions]]\nstrategy = "compiled"\nbudgets = [100]\n')


def _parse(tmp_path: Path, text: str) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(text, encoding="utf-8")
    parse_spec(tomllib.loads(text), path=path, display="exp.toml")


def test_unknown_names_are_refused_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        _parse(tmp_path, _spec(tmp_path, 'provider = "cohere"'))
    assert str(info.value) == ('exp.toml: [model].provider: expected one of openai, '
                               'anthropic, llamacpp, fixture, got the string "cohere"')
    with pytest.raises(InputError) as info:
        _parse(tmp_path, _spec(tmp_path, 'provider = "fixture"',
                               'source = "qa.jsonl"\nformat = "csv"'))
    assert str(info.value) == ('exp.toml: [workload].format: expected one of eceb, qa, '
                               'longbench, got the string "csv"')
    with pytest.raises(InputError, match=r"^provider: expected one of openai, anthropic, "
                       r"llamacpp, fixture, got 'cohere'$"):
        provider_factory("cohere")


PLUGIN = '''
"""A third-party provider (echoes the prompt) and workload format (tab-separated lines)."""
from pathlib import Path

from ctxbench.core import TokenUsage
from ctxbench.runner.providers.base import ProviderResponse
from ctxbench.runner.workload import Workload, WorkTask


class EchoProvider:
    name = "echo"
    usage_source = "provider_response"

    def __init__(self, *, model, **options):
        self.model = model

    async def complete(self, request):
        text = request.messages[-1].content
        usage = TokenUsage(uncached_input=len(text.split()), output=len(text.split()))
        return ProviderResponse(text=text, usage=usage, raw_usage=None, request_id="e-1",
                                latency_ms=1.0, http_status=200)

    async def aclose(self):
        pass


class EchoFactory:
    default_model = "echo-1"
    uses_api_key = False
    fixture = False

    def tokenizer(self, model):
        return "cl100k_base"

    def options(self, model, *, api_key, timeout_s):
        return {"model": model.model}

    def create(self, **options):
        return EchoProvider(**options)


class LinesFormat:
    context = "task_text"
    prefix = None
    takes_offset = False
    own_scorer = "contains_answer"
    default_scorer = "token_f1"
    judge_refusal = None

    def default_for(self, source):
        return False

    def resolve_source(self, source, base):
        return str(base / source)

    def check_scorer(self, scorer):
        return None

    def load(self, spec):
        tasks = []
        for line in Path(spec.source).read_text(encoding="utf-8").splitlines():
            task_id, query, context, answer = line.split("\\t")
            tasks.append(WorkTask(task_id=task_id, query=query, answers=(answer,),
                                  answer_terms=(), required_evidence=(answer,),
                                  expect_abstention=False, budget_ladder=(),
                                  context=context))
        return Workload(name="lines", version="v1", format="tab-lines", tasks=tuple(tasks),
                        source=spec.source)

    def score(self, task, answer):
        return 1.0 if task.answers[0] in answer else 0.0


FACTORY = EchoFactory()
'''


def test_a_separately_installed_provider_and_workload_run(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "echo_ctx_plugin").mkdir(parents=True)
    (package / "echo_ctx_plugin" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    (package / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "echo-ctx-plugin"
        version = "1.2.0"
        [project.entry-points."ctxbench.providers"]
        echo = "echo_ctx_plugin:FACTORY"
        [project.entry-points."ctxbench.workloads"]
        tab-lines = "echo_ctx_plugin:LinesFormat"
        '''), encoding="utf-8")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(site), str(package)],
                   check=True, capture_output=True, timeout=300)
    (tmp_path / "tasks.txt").write_text(
        "k1\tWho rotated the key?\tThe key was rotated by Alice.\tAlice\n"
        "k2\tWhich port?\tThe gateway listens on port 8443.\t8443\n", encoding="utf-8")
    spec = tmp_path / "exp.toml"
    spec.write_text(
        'name = "plugins"\nseed = 3\nreplicates = 1\noutput = "out"\n'
        'pricing = "self_hosted"\n[workload]\nsource = "tasks.txt"\nformat = "tab-lines"\n'
        '[model]\nprovider = "echo"\n[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [300]\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "ctxbench", "run", str(spec)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    records = [item.value for item in iter_jsonl(tmp_path / "out" / "trials.jsonl")]
    assert len(records) == 4
    assert {(r["provider"], r["model"], r["scorer"], r["workload"]) for r in records} == {
        ("echo", "echo-1", "contains_answer", "lines")}
    assert all(r["outcome"] == "success" and r["task_score"] == 1.0 for r in records)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["workload"]["format"] == "tab-lines"
    # The same names, unknown without the package: refused, listing what is installed.
    env.pop("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run([sys.executable, "-m", "ctxbench", "run", str(spec)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        '[model].provider: expected one of openai, anthropic, llamacpp, fixture, got the '
        'string "echo"'), done.stderr
