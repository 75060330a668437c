"""Every TOML reader's rejection names its line: ``file:LINE: field: expected ..., got ...``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.cli.main import main
from ctxbench.protocols.cef.api import example_paths
from ctxbench.protocols.eceb import seed_paths

SPEC = '''\
name = "lines"
seed = 1
replicates = 2
output = "out"

[workload]
source = "qa.jsonl"

[model]
provider = "fixture"

[[conditions]]
strategy = "full_permitted_context"

[[conditions]]
strategy = "compiled"
budgets = [200]
'''


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    code = info.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


def _spec(tmp_path: Path, text: str) -> Path:
    (tmp_path / "qa.jsonl").write_text(
        '{"_id": "q1", "input": "Which port?", "context": "Port 8443.", "answers": ["8443"]}\n',
        encoding="utf-8")
    path = tmp_path / "exp.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "expected"), [
    # a wrong value: the line of its key
    (('budgets = [200]', 'budgets = [200, "x"]'),
     ':17: [conditions][1].budgets: expected a non-empty array of at most 64 integers'),
    # an unknown key: its line
    (('provider = "fixture"', 'provider = "fixture"\ncolour = "red"'),
     ':11: [model].colour: expected no such field'),
    # a missing key of a table: the table's header
    (('source = "qa.jsonl"', 'format = "qa"'),
     ':6: [workload].source: expected a required field'),
    # a missing key of the root: line 1
    (('name = "lines"', '# no name'), ':1: name: expected a required field'),
    # a missing table: line 1
    (('[model]\nprovider = "fixture"\n', ''), ':1: [model]: expected a table'),
    # a value in a table written inline, and a dotted key
    (('output = "out"\n', 'output = "out"\nmodel = { provider = "fixture", n_ctx = 1 }\n'),
     ':5: [model].n_ctx: expected an integer in [256, 10000000]'),
    (('provider = "fixture"', 'provider = "fixture"\nlimits.concurrency = "ten"'),
     ':11: [model].limits: expected no such field'),
])
def test_spec_errors_name_their_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     edit: tuple[str, str], expected: str) -> None:
    old, new = edit
    assert old in SPEC
    text = SPEC.replace(old, new)
    if "model = {" in new:
        text = text.replace('[model]\nprovider = "fixture"\n', "")
    path = _spec(tmp_path, text)
    code, err = _run(["run", str(path)], capsys)
    assert code == 2
    assert err.startswith(f"ctxbench: error: {path}{expected}"), err
    assert err.count("\n") == 1


def test_a_key_word_inside_a_multiline_string_is_not_taken(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SPEC.replace('name = "lines"', 'description = """\nreplicates = 3\n"""\nname = "lines"')
    text = text.replace("replicates = 2\n", "replicates = 0\n")
    path = _spec(tmp_path, text)
    code, err = _run(["run", str(path)], capsys)
    assert code == 2
    assert err.startswith(f"ctxbench: error: {path}:6: replicates: expected an integer in "), err


def test_register_rules_errors_name_their_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('benchmark_id = "b"\n\n[[rule]]\nglob = "**"\nkind = "code"\n'
                     'classification = "internal"\n\n[[rule]]\nglob = "x"\nkind = "nope"\n'
                     'classification = "internal"\n', encoding="utf-8")
    code, err = _run(["eceb", "register", str(seed_paths().corpus), "--map", str(rules),
                      "--output", str(tmp_path / "b.json")], capsys)
    assert code == 2
    assert err.startswith(f"ctxbench: error: {rules}:10: rule[1].kind: expected one of "), err


def test_preregistration_toml_errors_name_their_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trials, prereg = example_paths()
    text = prereg.read_text(encoding="utf-8")
    lines = text.split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith("confidence_level"))
    lines[at] = 'confidence_level = "high"'
    bad = tmp_path / "prereg.toml"
    bad.write_text("\n".join(lines), encoding="utf-8")
    code, err = _run(["cef", "analyze", str(trials), "--prereg", str(bad),
                      "--output", str(tmp_path / "r.json")], capsys)
    assert code == 2
    assert err.startswith(f"ctxbench: error: {bad}:{at + 1}: /confidence_level: expected "), err
