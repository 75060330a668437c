"""Experiment spec parsing: valid specs load; every validation error names its place."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError
from ctxbench.runner.spec import load_spec, parse_spec

BASE = {
    "name": "x", "seed": 1, "replicates": 1, "output": "out",
    "workload": {"source": "qa.jsonl"},
    "model": {"provider": "fixture"},
    "conditions": [{"strategy": "full_permitted_context"},
                   {"strategy": "compiled", "budgets": [100]}],
}


def parse(**changes: object) -> object:
    doc = {**BASE, **changes}
    return parse_spec(doc, path=Path("/tmp/exp.toml"), display="exp.toml")


def test_full_spec_loads(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(
        'name = "support-qa"\nseed = 7\nreplicates = 3\noutput = "runs/a"\n'
        'pricing = "prices.json"\n[workload]\nsource = "builtin:enterprise-seed"\n'
        '[model]\nprovider = "openai"\nmodel = "gpt-x"\ntemperature = 0.2\n'
        'max_output_tokens = 64\nstop = ["\\n\\n"]\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key_env = "MY_KEY"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n'
        '[[conditions]]\nname = "compiled-native"\nstrategy = "compiled"\nbudgets = [512]\n'
        'params = { reasoning_effort = "low" }\n'
        '[limits]\nconcurrency = 8\nrequests_per_minute = 60\ntokens_per_minute = 90000\n'
        'timeout_s = 30\nretries = 2\nbackoff_s = 0.5\n', encoding="utf-8")
    spec = load_spec(tmp_path / "exp.toml")
    assert spec.name == "support-qa" and spec.replicates == 3 and spec.seed == 7
    assert spec.output == tmp_path / "runs" / "a"
    assert spec.pricing == str(tmp_path / "prices.json")
    assert spec.model.temperature == 0.2 and spec.model.stop == ("\n\n",)
    assert spec.model.api_key_env == "MY_KEY"
    assert [c.name for c in spec.conditions] == ["full_permitted_context", "compiled",
                                                 "compiled-native"]
    assert spec.conditions[1].ladder and spec.conditions[2].budgets == (512,)
    assert spec.conditions[2].params == {"reasoning_effort": "low"}
    assert spec.limits.concurrency == 8 and spec.limits.retries == 2
    assert spec.task_scorer == "answer_terms" and len(spec.digest) == 64


@pytest.mark.parametrize(("changes", "message"), [
    ({"model": {"provider": "openai", "model": "m", "temperature": "low"}},
     'exp.toml: [model].temperature: expected a number in [0, 2], got the string "low"'),
    ({"model": {"provider": "cohere"}},
     'exp.toml: [model].provider: expected one of openai, anthropic, llamacpp, fixture, '
     'got the string "cohere"'),
    ({"model": {"provider": "openai"}},
     "exp.toml: [model].model: expected a required field, got nothing (the field is missing)"),
    ({"model": {"provider": "fixture", "api_key_env": "sk-abc123"}},
     'exp.toml: [model].api_key_env: expected an environment variable NAME (not the key), '
     'got the string "sk-abc123"'),
    ({"model": {"provider": "fixture", "max_output_tokens": 0}},
     "exp.toml: [model].max_output_tokens: expected an integer in [1, 1000000], got the integer 0"),
    ({"replicates": 0},
     "exp.toml: replicates: expected an integer in [1, 1000], got the integer 0"),
    ({"seed": 1.5}, "exp.toml: seed: expected an integer in [0, 9007199254740991], "
     "got the number 1.5"),
    ({"name": "Has Spaces"},
     'exp.toml: name: expected a lowercase slug like support-qa, got the string "Has Spaces"'),
    ({"colour": "blue"}, "exp.toml: colour: expected no such field (it is not part of the "
     "format), got the unknown field 'colour'"),
    ({"model": "fixture"}, 'exp.toml: [model]: expected a table, got the string "fixture"'),
    ({"workload": {"source": "a.jsonl", "extra": 1}},
     "exp.toml: [workload].extra: expected no such field (it is not part of the format), "
     "got the unknown field 'extra'"),
    ({"conditions": []}, "exp.toml: conditions: expected an array of 1 to 64 tables "
     "([[conditions]]), got an array"),
    ({"conditions": [{"strategy": "compiled", "budgets": [100]}]},
     "exp.toml: conditions: expected a full_permitted_context condition (the paired "
     "baseline), got none among compiled"),
    ({"conditions": [{"strategy": "full_permitted_context"}, {"strategy": "compiled"}]},
     'exp.toml: [conditions][1].budgets: expected budgets (an array of integers >= 1, or '
     '"ladder"), got nothing (the field is missing)'),
    ({"conditions": [{"strategy": "full_permitted_context"}]},
     "exp.toml: conditions: expected the baseline and at least one other condition (a "
     "paired experiment), got only full_permitted_context"),
    ({"conditions": [{"strategy": "full_permitted_context", "budgets": [10]}]},
     "exp.toml: [conditions][0].budgets: expected no budgets (the full permitted context is "
     "not budgeted), got an array"),
    ({"conditions": [{"strategy": "full_permitted_context"},
                     {"strategy": "compiled", "budgets": [400, 200]}]},
     "exp.toml: [conditions][1].budgets: expected strictly ascending budgets, got an array"),
    ({"conditions": [{"strategy": "full_permitted_context"},
                     {"strategy": "compiled", "budgets": "all"}]},
     'exp.toml: [conditions][1].budgets: expected a non-empty array of at most 64 integers '
     'in [1, 10000000] or the string "ladder", got the string "all"'),
    ({"conditions": [{"strategy": "full_permitted_context"},
                     {"strategy": "compiled", "budgets": [2**64]}]},
     'exp.toml: [conditions][1].budgets: expected a non-empty array of at most 64 integers '
     'in [1, 10000000] or the string "ladder", got an array'),
    ({"replicates": 10**12},
     "exp.toml: replicates: expected an integer in [1, 1000], got the integer 1000000000000"),
    ({"limits": {"timeout_s": 1e9}},
     "exp.toml: [limits].timeout_s: expected a number in [0.001, 3600], got the number "
     "1000000000.0"),
    ({"limits": {"max_retry_wait_s": -1}},
     "exp.toml: [limits].max_retry_wait_s: expected a number in [0, 3600], got the integer -1"),
    ({"limits": {"tokens_per_minute": 2**63}},
     "exp.toml: [limits].tokens_per_minute: expected an integer in [0, 1000000000], got the "
     "integer 9223372036854775808"),
    ({"conditions": [{"strategy": "full_permitted_context"}, {"strategy": "external"}]},
     "exp.toml: [conditions][1].command: expected a `module:function` or a command line for "
     "the external strategy, got nothing (the field is missing)"),
    ({"conditions": [{"strategy": "full_permitted_context"},
                     {"strategy": "full_permitted_context"}]},
     'exp.toml: [conditions][1].name: expected a name used by no other condition, got the '
     'string "full_permitted_context"'),
    ({"model": {"provider": "openai", "model": "m"}},
     'exp.toml: pricing: expected a pricing snapshot path or "self_hosted", got nothing '
     '(the field is missing)'),
    ({"limits": {"concurrency": 0}},
     "exp.toml: [limits].concurrency: expected an integer in [1, 1024], got the integer 0"),
    ({"workload": {"source": "b.json"}, "scoring": {"task_score": "token_f1"}},
     'exp.toml: [scoring].task_score: expected answer_terms for an ECEB workload (it has no '
     'gold answers), got the string "token_f1"'),
])
def test_errors_name_their_place(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as info:
        parse(**changes)
    assert str(info.value) == message


def test_toml_syntax_error_is_located(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('name = "x"\nseed = = 1\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.toml:2: expected valid TOML"):
        load_spec(tmp_path / "bad.toml")


@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
                 st.booleans(), st.lists(st.integers(), max_size=2)))
def test_temperature_is_valid_or_named(value: object) -> None:
    try:
        spec = parse(model={"provider": "fixture", "temperature": value})
    except InputError as exc:
        assert str(exc).startswith("exp.toml: [model].temperature: expected a number in [0, 2]")
    else:
        assert spec.model.temperature == value  # type: ignore[attr-defined]
        assert not isinstance(value, bool)


def test_shipped_examples_are_valid_specs() -> None:
    from importlib import resources

    folder = resources.files("ctxbench").joinpath("data", "examples", "experiments")
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".toml"))
    assert len(names) >= 5
    for name in names:
        spec = load_spec(Path(str(folder.joinpath(name))))
        assert spec.conditions[0].strategy == "full_permitted_context"


def test_examples_validate_against_the_experiment_schema() -> None:
    import tomllib
    from importlib import resources

    from ctxbench.schemas import validator

    check = validator("ctxbench.experiment.v1")
    folder = resources.files("ctxbench").joinpath("data", "examples", "experiments")
    for entry in folder.iterdir():
        if entry.name.endswith(".toml"):
            document = tomllib.loads(entry.read_text(encoding="utf-8"))
            assert not [e.message for e in check.iter_errors(document)], entry.name
    assert list(check.iter_errors({"name": "x"}))  # required fields are enforced


_BASE: dict[str, object] = {
    "name": "x", "seed": 1, "replicates": 1, "output": "o", "workload": {"source": "q.jsonl"},
    "model": {"provider": "fixture"},
    "conditions": [{"strategy": "full_permitted_context"},
                   {"strategy": "compiled", "budgets": [10]}]}


@pytest.mark.parametrize(("field", "value", "ok"), [
    ("replicates", 1000, True), ("replicates", 1001, False),
    ("limits", {"concurrency": 1024}, True), ("limits", {"concurrency": 1025}, False),
    ("limits", {"timeout_s": 3600}, True), ("limits", {"timeout_s": 3600.5}, False),
    ("limits", {"max_retry_wait_s": 3600}, True), ("limits", {"max_retry_wait_s": 3601}, False),
    ("limits", {"backoff_s": 601}, False), ("limits", {"retries": 21}, False),
    ("limits", {"requests_per_minute": 10**9 + 1}, False),
    ("model", {"provider": "fixture", "max_output_tokens": 10**6 + 1}, False),
    ("model", {"provider": "fixture", "stop": ["a"] * 16}, True),
    ("model", {"provider": "fixture", "stop": ["a"] * 17}, False),
    ("model", {"provider": "fixture", "stop": [""]}, False),
    ("model", {"provider": "fixture", "n_ctx": 10**7 + 1}, False),
    ("model", {"provider": "fixture", "api": "graphql"}, False),
    ("workload", {"source": "q.jsonl", "limit": 10**7 + 1}, False),
    ("conditions", [{"strategy": "full_permitted_context"},
                    {"strategy": "compiled", "budgets": [10**7]}], True),
    ("conditions", [{"strategy": "full_permitted_context"},
                    {"strategy": "compiled", "budgets": [10**7 + 1]}], False),
    ("conditions", [{"strategy": "full_permitted_context"},
                    {"strategy": "compiled", "budgets": list(range(1, 66))}], False),
    ("execution", {"backend": "local"}, True),
    ("execution", {"backend": "local", "workers": 2}, False),
    ("execution", {"workers": 2}, False),
    ("execution", {"backend": "ray", "workers": 1024, "num_gpus": 64}, True),
    ("execution", {"backend": "ray", "workers": 1025}, False),
    ("execution", {"backend": "ray", "num_gpus": 65}, False),
    ("execution", {"backend": "ray", "address": "auto", "local_num_cpus": 2}, False),
    ("execution", {"backend": "ray", "local_num_cpus": 2, "memory_mb": 512}, True),
    ("execution", {"backend": "dask"}, False),
])
def test_bounds_agree_with_the_experiment_schema(field: str, value: object, ok: bool) -> None:
    from ctxbench.schemas import validator

    document = {**_BASE, field: value}
    assert (not list(validator("ctxbench.experiment.v1").iter_errors(document))) is ok
    if ok:
        parse_spec(document, path=Path("/tmp/x.toml"))
    else:
        with pytest.raises(InputError):
            parse_spec(document, path=Path("/tmp/x.toml"))
