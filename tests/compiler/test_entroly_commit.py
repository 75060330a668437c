"""Entroly context commits verify exactly, and a one-byte change to any of them fails.

Commits are made by the real ``entroly`` package (a ``dev`` dependency): its Python and
Rust receipt engines, written the two ways Entroly writes them -- its benchmark runner
(``benchmarks/context_efficiency_openai.py``, ``run_trials``: ``json.dumps(commit,
indent=2, sort_keys=True) + "\\n"`` per controlled trial) and its ``entroly context-commit
--out`` command (``entroly/context_receipts/store.py``: ``write_json``). The files under
``entroly_commits/`` were written by entroly 1.0.87 (README there).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("entroly", reason="pip install 'ctxbench[entroly]'")

from entroly.context_commit import create_context_commit, verify_context_commit
from entroly.context_receipts.store import write_json

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler.api import verify_any_commit_file
from ctxbench.compiler.entroly_commit import entroly_hash, verify_entroly_commit
from ctxbench.core import CtxbenchError, IntegrityError

HERE = Path(__file__).parent / "entroly_commits"
QUERY = "Where is token rotation enforced?"


def _documents() -> list[tuple[str, str]]:
    return [(f"docs/{p.name}", p.read_bytes().decode("utf-8"))
            for p in sorted((HERE / "docs").iterdir())]


def _runner_file(path: Path, commit: dict[str, Any]) -> None:
    path.write_text(json.dumps(commit, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def commit_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("entroly")
    files = sorted(HERE.glob("*.json"))
    for rust in (False, True):
        commit = create_context_commit(_documents(), query=QUERY, token_budget=120,
                                       chunk_tokens=60, overlap_tokens=8, prefer_rust=rust)
        assert verify_context_commit(commit).valid
        _runner_file(out / f"runner-{rust}.json", commit)
        write_json(out / f"cli-{rust}.json", commit)
        files += [out / f"runner-{rust}.json", out / f"cli-{rust}.json"]
    child = create_context_commit([("a.txt", "ünïcode ✓ rotation\r\n" * 20)], query="rotation",
                                  token_budget=12, chunk_tokens=12, overlap_tokens=2,
                                  parent_commit_id=json.loads(files[0].read_text())["commit_id"],
                                  prefer_rust=False)
    _runner_file(out / "child.json", child)
    return [*files, out / "child.json"]


def test_entroly_hash_is_python_json_not_rfc8785() -> None:
    # RFC 8785 would write 1e-05 as 0.00001 and 1.0 as 1; Entroly's hash keeps Python's text.
    value = {"b": 1.0, "a": 1e-05, "é": "✓"}
    text = '{"a":1e-05,"b":1.0,"é":"✓"}'
    import hashlib
    assert entroly_hash(value) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_every_commit_verifies_and_says_its_format(commit_files: list[Path]) -> None:
    omitted: list[int] = []
    for path in commit_files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        checked = verify_any_commit_file(path, None)
        assert checked.format == "entroly.context-commit.v1"
        assert checked.commit_id == doc["commit_id"]
        assert checked.line().startswith(f"verified: {doc['commit_id']} (")
        assert "format entroly.context-commit.v1 (Entroly's sorted-key JSON, SHA-256)" in \
            checked.line()
        result = verify_entroly_commit(doc)
        assert result.selected_chunks == len(doc["receipt"]["selected_context"]) >= 1
        assert result.omitted_chunks == len(doc["receipt"]["omitted_context"])
        assert result.engine == doc["engine"]["implementation"]
        omitted.append(result.omitted_chunks)
    assert min(omitted[:2]) >= 1 and omitted[-1] >= 1
    engines = {json.loads(p.read_text())["engine"]["implementation"] for p in commit_files}
    assert engines == {"python", "rust"}


def test_corpus_check_reads_each_source(commit_files: list[Path]) -> None:
    checked = verify_entroly_commit(json.loads(commit_files[0].read_text()), HERE)
    assert checked.sources_checked == 2


def test_changed_source_fails_the_corpus_check(tmp_path: Path) -> None:
    shutil.copytree(HERE / "docs", tmp_path / "docs")
    target = tmp_path / "docs" / "deploy.md"
    target.write_bytes(target.read_bytes().replace(b"two", b"tw0"))
    doc = json.loads((HERE / "cli-rust.json").read_text())
    with pytest.raises(IntegrityError, match=r"source docs/deploy.md: does not match "
                       r"source_bytes \(the source changed\)"):
        verify_entroly_commit(doc, tmp_path)


def test_one_byte_change_anywhere_fails(commit_files: list[Path], tmp_path: Path) -> None:
    # XOR 0x01 never maps a byte to an equivalent one: JSON whitespace becomes an invalid
    # character, and a byte inside a token changes the value the digests cover.
    for path in commit_files[:2] + commit_files[-1:]:
        data = path.read_bytes()
        mutated = tmp_path / "m.json"
        step = max(1, len(data) // 400)
        for offset in range(0, len(data), step):
            changed = bytearray(data)
            changed[offset] ^= 0x01
            mutated.write_bytes(bytes(changed))
            with pytest.raises(CtxbenchError):
                verify_any_commit_file(mutated, None)


def test_tampered_commit_names_each_failed_check(commit_files: list[Path]) -> None:
    doc = json.loads(commit_files[0].read_text())
    doc["receipt"]["selected_context"][0]["text"] += " "
    with pytest.raises(IntegrityError) as info:
        verify_entroly_commit(doc)
    message = str(info.value)
    assert message.startswith("entroly context commit: /commit_id: ")
    assert "/receipt/reproducibility_hash: does not match the receipt" in message
    doc = json.loads(commit_files[0].read_text())
    del doc["recovery_bundle"]["chunks"][doc["receipt"]["omitted_context"][0]["chunk_id"]]
    with pytest.raises(IntegrityError, match="cannot be recovered"):
        verify_entroly_commit(doc)


def test_compile_verify_cli(commit_files: list[Path], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code = run_guarded(cli, ["compile", "verify", str(HERE / "cli-rust.json"), "--corpus",
                             str(HERE)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out == ("verified: ctx_d4d69b2e53179db8cd1f8ec7 (2 selected, 8 omitted chunk(s) "
                   "recovered, rust engine, 2 source file(s) checked against the corpus); "
                   "format entroly.context-commit.v1 (Entroly's sorted-key JSON, SHA-256)\n")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": "other.v1"}))
    tampered = tmp_path / "tampered.json"
    tampered.write_text((HERE / "cli-rust.json").read_text().replace("two reviewers",
                                                                      "one reviewer"))
    code = run_guarded(cli, ["compile", "verify", str(tampered)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"ctxbench: error: {tampered}: entroly context commit: /commit_id: ")
    code = run_guarded(cli, ["compile", "verify", str(bad)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert "schema_version: expected one of ctxbench.context-commit.v1, " \
        "entroly.context-commit.v1, got 'other.v1'" in err


def test_arguments_that_do_not_apply_are_named_as_given(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The library names its argument (``corpus``); ``ctxbench compile verify`` its option."""
    from ctxbench.core import SettingError

    entroly = HERE / "cli-rust.json"
    with pytest.raises(SettingError, match=r"^tokenizer: expected none for an Entroly commit "):
        verify_any_commit_file(entroly, None, tokenizer="cl100k_base")
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"schema_version": "ctxbench.context-commit.v1"}))
    with pytest.raises(SettingError) as info:
        verify_any_commit_file(ours, None)
    assert str(info.value) == (f"corpus: expected the corpus directory of the ctxbench context "
                               f"commit {ours}, got none")
    code = run_guarded(cli, ["compile", "verify", str(ours)])
    assert code == 2 and capsys.readouterr().err == (
        f"ctxbench: error: --corpus: expected the corpus directory of the ctxbench context "
        f"commit {ours}, got none\n")
    code = run_guarded(cli, ["compile", "verify", str(entroly), "--context", str(ours)])
    assert code == 2 and capsys.readouterr().err.startswith(
        "ctxbench: error: --context: expected none for an Entroly commit (")
