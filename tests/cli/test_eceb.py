"""``ctxbench eceb``: root, register, evaluate (--check), render, and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.protocols.eceb import seed_paths

PATHS = seed_paths()
GOLDEN = Path(__file__).parents[1] / "golden" / "eceb-seed"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_guarded(cli, list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_root(capsys: pytest.CaptureFixture[str]) -> None:
    root = json.loads(PATHS.benchmark.read_text())["corpus"]["root"]
    assert _run(capsys, "eceb", "root", str(PATHS.benchmark)) == (0, root + "\n", "")
    code, out, _ = _run(capsys, "eceb", "root", str(PATHS.benchmark), "--corpus",
                        str(PATHS.corpus))
    assert (code, out) == (0, root + "\n")


def test_root_with_a_stale_corpus_exits_2(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(PATHS.corpus, corpus)
    (corpus / "policies" / "acceptable-use.md").write_text("changed\n")
    code, _, err = _run(capsys, "eceb", "root", str(PATHS.benchmark), "--corpus", str(corpus))
    assert code == 2
    assert "artifact policy-acceptable-use (policies/acceptable-use.md): stale source bytes" \
        in err


def test_register(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "b.json"
    code, out, _ = _run(capsys, "eceb", "register", str(PATHS.corpus), "--map",
                        str(PATHS.root / "register-rules.toml"), "--output", str(out_path))
    assert code == 0 and out.startswith("registered 35 artifacts, root ")
    shipped = json.loads(PATHS.benchmark.read_text())
    assert json.loads(out_path.read_text())["corpus"] == shipped["corpus"]


def test_evaluate_and_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    args = ["eceb", "evaluate", str(PATHS.benchmark), str(PATHS.run), "--corpus",
            str(PATHS.corpus), "--output", str(report)]
    code, out, err = _run(capsys, *args)
    assert (code, out, err) == (0, f"12/13 tasks qualified -> {report}\n", "")
    assert report.read_bytes() == (GOLDEN / "report.json").read_bytes()
    code, _, err = _run(capsys, *args, "--check")
    assert code == 1
    assert err == ("ctxbench: check failed: task(s) did not qualify: "
                   "duplicate-webhooks-root-cause\n")
    md = tmp_path / "report.md"
    assert _run(capsys, "eceb", "render", str(report), "--output", str(md))[0] == 0
    assert md.read_text() == (GOLDEN / "report.md").read_text()
    code, out, _ = _run(capsys, "eceb", "render", str(report))
    assert code == 0 and out == (GOLDEN / "report.md").read_text()


def test_evaluate_prints_json_without_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "eceb", "evaluate", str(PATHS.benchmark), str(PATHS.run),
                        "--corpus", str(PATHS.corpus))
    assert code == 0 and json.loads(out)["schema"] == "symgliph.eceb/report-v0.1"


def test_invalid_input_exits_2_with_a_pointer(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = json.loads(PATHS.run.read_text())
    run["observations"][7]["latency_ms"] = 12.5
    bad = tmp_path / "run.json"
    bad.write_text(json.dumps(run))
    code, _, err = _run(capsys, "eceb", "evaluate", str(PATHS.benchmark), str(bad),
                        "--corpus", str(PATHS.corpus))
    assert code == 2
    assert err == (f"ctxbench: error: {bad}: /observations/7/latency_ms: expected an integer "
                   "(every number in a run is an integer), got the number 12.5\n")


def test_render_rejects_other_documents(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "x.json"
    other.write_text('{"schema": "ctxbench.cef-report.v1"}')
    code, _, err = _run(capsys, "eceb", "render", str(other))
    assert code == 2
    assert f"{other}: /schema: expected \"symgliph.eceb/report-v0.1\"" in err


def test_register_says_which_claim_class_it_declared(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("# handbook\n", encoding="utf-8")
    rules = tmp_path / "rules.toml"
    rules.write_text('benchmark_id = "mine"\n[[rule]]\nglob = "*.md"\nkind = "runbook"\n'
                     'classification = "internal"\n', encoding="utf-8")
    out_path = tmp_path / "b.json"
    base = ["eceb", "register", str(corpus), "--map", str(rules), "--output", str(out_path)]
    code, out, _ = _run(capsys, *base)
    assert code == 0 and ("claim_class conformance_seed (the default, the weakest class; "
                          "declare yours with --claim-class (docs/eceb.md))") in out
    code, out, _ = _run(capsys, *base, "--claim-class", "enterprise_validated")
    assert code == 0 and "claim_class enterprise_validated (from --claim-class)" in out
    assert json.loads(out_path.read_text())["claim_class"] == "enterprise_validated"
    rules.write_text('claim_class = "public_reproduction"\n' + rules.read_text(),
                     encoding="utf-8")
    code, out, _ = _run(capsys, *base)
    assert code == 0 and f"claim_class public_reproduction (from {rules})" in out
    code, _, err = _run(capsys, *base, "--claim-class", "enterprise_validated")
    assert code == 2 and err.strip() == (
        f"ctxbench: error: {rules}: claim_class: expected 'enterprise_validated' (the class "
        "passed in) or no claim_class, got 'public_reproduction'")
