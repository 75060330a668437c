"""The on-disk index cache: same index back, keyed by corpus, checked on load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from compiler_corpus import write_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.compiler.index_cache import cache_dir, cache_key, save_index
from ctxbench.core import blake3_hex

QUERY = "token refresh rotation signing key"
POLICY = Policy(("public", "internal"), ("a04",))


@pytest.fixture(autouse=True)
def _cache_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(tmp_path / "cache"))


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("CTXBENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "ctxbench"


def test_a_loaded_index_compiles_the_same_packets(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 12)
    tokenizer = get_tokenizer()
    built = ContextIndex.build(corpus, tokenizer)
    assert ContextIndex.load_cached(corpus, tokenizer) is None
    path = save_index(built)
    assert path is not None and path.parent == tmp_path / "cache" / "index"
    loaded = ContextIndex.load_cached(corpus, tokenizer)
    assert loaded is not None and loaded.stats() == built.stats()
    assert loaded.chunks == built.chunks
    for strategy, budget in (("compiled", 200), ("naive_top_k", 300), ("compiled", 900)):
        a = compile_context(built, query=QUERY, budget=budget, policy=POLICY, strategy=strategy)
        b = compile_context(loaded, query=QUERY, budget=budget, policy=POLICY,
                            strategy=strategy)
        assert a.text == b.text and a.commit_id == b.commit_id
    via = ContextIndex.load_or_build(corpus, tokenizer)
    assert via.chunks == built.chunks


def test_a_corrupt_or_foreign_entry_is_not_used(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 6)
    tokenizer = get_tokenizer()
    path = save_index(ContextIndex.build(corpus, tokenizer))
    assert path is not None
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert ContextIndex.load_cached(corpus, tokenizer) is None
    rebuilt = ContextIndex.load_or_build(corpus, tokenizer)  # rebuilt and rewritten
    assert ContextIndex.load_cached(corpus, tokenizer) is not None
    again = ContextIndex.load_cached(corpus, tokenizer)
    assert again is not None and np.array_equal(rebuilt.chunk_artifact, again.chunk_artifact)
    other = write_corpus(tmp_path / "other", 7)
    assert cache_key(other, tokenizer) != cache_key(corpus, tokenizer)


def test_a_well_signed_entry_with_a_bad_layout_is_not_used(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 6)
    tokenizer = get_tokenizer()
    path = save_index(ContextIndex.build(corpus, tokenizer))
    assert path is not None
    payload = path.read_bytes().split(b"\n", 1)[1]
    form, head, body = payload.split(b"\n", 2)
    table = json.loads(head)
    bad_heads = []
    for row, column, value in ((0, 1, "<f8"), (1, 3, len(body)), (2, 2, [10**6]),
                               (0, 0, "other")):
        changed = json.loads(head)
        changed[row][column] = value
        bad_heads.append(json.dumps(changed).encode())
    bad_heads.append(json.dumps(table[:-1]).encode())
    for form_line, head_line in [(b"ctxbench.index-cache.v0", head),
                                 *((form, h) for h in bad_heads)]:
        signed = form_line + b"\n" + head_line + b"\n" + body
        path.write_bytes(blake3_hex(signed).encode() + b"\n" + signed)
        assert ContextIndex.load_cached(corpus, tokenizer) is None, head_line[:80]


def _forge(path: Path, change: str) -> None:
    """Rewrite a cache entry with one array changed and its digest recomputed."""
    from ctxbench.compiler.index_cache import _read_arrays, _write_arrays

    payload = path.read_bytes().split(b"\n", 1)[1]
    found = _read_arrays(memoryview(payload))
    assert found is not None
    arrays = {k: np.array(v) for k, v in found.items()}
    bounds = arrays["bounds"]
    if change == "negative":
        bounds[:] = -bounds - 1
    elif change == "beyond":
        bounds[-1, 1] += 10_000
    elif change == "shifted":  # a boundary moved off a line start (before "\n\n")
        bounds[0, 1] -= 2
        bounds[1, 0] -= 2
    elif change == "dropped":  # the last artifact's chunks gone
        last = arrays["chunk_artifact"] == arrays["chunk_artifact"].max()
        keep = ~last
        offsets = arrays["offsets"]
        arrays["offsets"] = offsets[: int(keep.sum()) + 1]
        arrays["terms"] = arrays["terms"][: int(arrays["offsets"][-1])]
        counts = arrays["context_counts"]
        arrays["contexts"] = arrays["contexts"][: int(counts[keep].sum())]
        arrays["context_counts"] = counts[keep]
        arrays["chunk_artifact"] = arrays["chunk_artifact"][keep]
        arrays["bounds"] = bounds[keep]
        labels = arrays["labels"].tobytes().split(b"\n")[: int(keep.sum())]
        arrays["labels"] = np.frombuffer(b"\n".join(labels), dtype=np.uint8)
    elif change == "terms":
        arrays["terms"][0] = 10**8
    signed = _write_arrays(arrays)
    path.write_bytes(blake3_hex(signed).encode() + b"\n" + signed)


@pytest.mark.parametrize("change", ["negative", "beyond", "dropped", "terms"])
def test_a_forged_entry_with_its_digest_recomputed_is_rebuilt(
    tmp_path: Path, change: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    corpus = write_corpus(tmp_path / "corpus", 6)
    tokenizer = get_tokenizer()
    built = ContextIndex.build(corpus, tokenizer)
    path = save_index(built)
    assert path is not None
    _forge(path, change)
    assert ContextIndex.load_cached(corpus, tokenizer) is None
    loaded = ContextIndex.load_or_build(corpus, tokenizer)
    assert loaded.chunks == built.chunks
    args = ["compile", "--corpus", str(corpus.root), "--query", QUERY, "--budget", "300",
            "--print"]
    assert run_guarded(cli, args) == 0
    honest = capsys.readouterr().out
    assert honest != ""
    (entry,) = set((tmp_path / "cache" / "index").iterdir()) - {path}
    _forge(entry, change)
    assert run_guarded(cli, args) == 0
    assert capsys.readouterr().out == honest


def test_a_forged_entry_whose_chunks_cut_lines_is_refused_when_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.cli.errors import run_guarded
    from ctxbench.cli.main import cli

    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("# A\n\ntoken rotation alpha\n\n# B\n\nrefresh key beta\n")
    args = ["compile", "--corpus", str(root), "--query", QUERY, "--budget", "300", "--print"]
    assert run_guarded(cli, args) == 0
    capsys.readouterr()
    (entry,) = (tmp_path / "cache" / "index").iterdir()
    _forge(entry, "shifted")  # still a tiling of the file, but off its line starts
    assert run_guarded(cli, args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"ctxbench: error: {entry}: index cache entry: chunk ")
    assert "a.md does not start and end at line boundaries of the file" in err


_FUZZED = ("bounds", "contexts", "chunk_artifact", "context_counts", "offsets")


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_FUZZED), at=st.integers(0, 10**6),
       value=st.integers(-(2**40), 2**40))
def test_a_forged_element_never_crashes_nor_sends_denied_text(
        tmp_path: Path, name: str, at: int, value: int) -> None:
    """One element of an array changed, the digest recomputed: the compile gives a packet
    of permitted text or a located IntegrityError, never a crash or denied text."""
    from ctxbench.compiler.index_cache import _read_arrays, _write_arrays
    from ctxbench.core import IntegrityError

    root = tmp_path / f"fz-{name}-{at}-{value}"
    (root / "d").mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("# A\n\ntoken rotation alpha\n\n# B\n\nrefresh key beta\n")
    (root / "d" / "secret.md").write_text("# S\n\nzqdeniedq token rotation\n" * 3)
    (root / "c.py").write_text("def rotate():\n    return 'token'\n\n\nclass K:\n    x = 1\n")
    corpus = Corpus.from_directory(root)
    tokenizer = get_tokenizer()
    path = save_index(ContextIndex.build(corpus, tokenizer))
    assert path is not None
    found = _read_arrays(memoryview(path.read_bytes().split(b"\n", 1)[1]))
    assert found is not None
    arrays = {k: np.array(v) for k, v in found.items()}
    flat = arrays[name].reshape(-1)
    if len(flat):
        limits = np.iinfo(flat.dtype)
        flat[at % len(flat)] = min(max(value, int(limits.min)), int(limits.max))
    signed = _write_arrays(arrays)
    path.write_bytes(blake3_hex(signed).encode() + b"\n" + signed)
    policy = Policy(("internal",), ("d/secret.md",))
    try:
        index = ContextIndex.load_or_build(corpus, tokenizer)
        for strategy, budget in (("compiled", 200), ("full_permitted_context", None)):
            packet = compile_context(index, query=QUERY, budget=budget, policy=policy,
                                     strategy=strategy)
            assert "zqdeniedq" not in packet.text
    except IntegrityError as exc:
        assert "index cache entry" in str(exc)
