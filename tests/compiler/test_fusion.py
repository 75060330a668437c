"""Chunk ranking: the fused ranking finds the value block of the right file, never a
denied one, and leaves a question that names its identifier to BM25."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact, Policy, get_tokenizer
from ctxbench.compiler.evidence import QueryMatcher
from ctxbench.compiler.fusion import (
    FILE_MIX,
    GATE,
    VALUE_MIX,
    fuse,
    lexical_gate,
    ranked_chunks,
    value_share,
)
from ctxbench.compiler.selection import CANDIDATES, TOP_N, select_compiled
from ctxbench.core import blake3_hex

CLIENT = (
    "def fetch(uri):\n"
    '    """Download the public signing keys again once the cached set is too old to be\n'
    '    trusted; how long a set lives is the module\'s setting."""\n'
    "    return uri\n"
    + "".join(f"\n\ndef helper_{n}(value):\n    return value + {n}\n" for n in range(40))
    + "\n\nMAX_CACHED = 16\nLIFESPAN = 300\nTIMEOUT = 30\n"
)
OTHER = (
    "def sign(payload, keys):\n"
    '    """Sign a payload with one of the public signing keys."""\n'
    "    return payload\n"
    + "".join(f"\n\ndef step_{n}(value):\n    return value * {n}\n" for n in range(40))
)
SECRET = "SECRET_LIFESPAN = 999\nSECRET_TIMEOUT = 1\n"
QUERY = "How long is a downloaded set of public signing keys trusted before it is fetched again?"


def _index(tmp_path: Path) -> tuple[ContextIndex, Policy]:
    artifacts = []
    for aid, name, text in (("c", "client.py", CLIENT), ("o", "other.py", OTHER),
                            ("s", "secret.py", SECRET)):
        data = text.encode("utf-8")
        (tmp_path / name).write_bytes(data)
        artifacts.append(CorpusArtifact(aid, name, "code", "public", blake3_hex(data)))
    index = ContextIndex.build(Corpus(tmp_path, tuple(artifacts), "test"), get_tokenizer())
    return index, Policy(("public",), ("s",))


def test_value_share_and_the_gate() -> None:
    data = b"ONE = 1\nTWO = 'x'\nTHREE = f(2)\n# note"
    assert value_share(data, 0, len(data)) == 0.5
    assert lexical_gate(0.0) == 1.0
    assert lexical_gate(0.5) == 0.0  # 1 - 3 x 0.5, clipped
    assert lexical_gate(0.1) == pytest.approx(1.0 - GATE * 0.1)


def test_the_value_block_of_the_right_file_is_ranked_and_a_denied_one_never(
        tmp_path: Path) -> None:
    index, policy = _index(tmp_path)
    ranked, reason = ranked_chunks(index, policy, QUERY, TOP_N)
    assert reason is None and ranked
    source = index.source(0)
    block = next(c for c in range(len(index.chunks)) if int(index.chunk_artifact[c]) == 0
                 and b"LIFESPAN = 300" in source[index.chunks[c].start:index.chunks[c].end])
    assert block not in dict(ranked)  # it shares no word with the question
    matcher = QueryMatcher(QUERY, index.query_weights(QUERY, policy))
    fused = fuse(index, policy, ranked, matcher, CANDIDATES)
    assert matcher.gate == 1.0  # no chunk names an identifier of query words only
    scores = dict(fused)
    assert scores[block] > 0.0
    # its score: FILE_MIX x its file's best relevance, times 1 + VALUE_MIX x its value
    # share (every line binds a literal), relative to the fused top
    best = max(rel for chunk, rel in ranked if int(index.chunk_artifact[chunk]) == 0)
    assert value_share(source, index.chunks[block].start, index.chunks[block].end) == 0.75
    top_chunk, top = fused[0][0], fused[0][1]
    assert top == 1.0
    raw_top = (dict(ranked).get(top_chunk, 0.0) + FILE_MIX * best) * (1.0 + VALUE_MIX * value_share(
        source, index.chunks[top_chunk].start, index.chunks[top_chunk].end))
    assert scores[block] == pytest.approx(FILE_MIX * best * (1.0 + VALUE_MIX * 0.75) / raw_top)
    denied = {c for c in range(len(index.chunks)) if int(index.chunk_artifact[c]) == 2}
    assert denied and not denied & set(scores)


def test_a_packet_from_512_tokens_holds_the_value_and_below_it_bm25_decides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index, policy = _index(tmp_path)
    packet = select_compiled(index, policy, QUERY, 512)
    assert "LIFESPAN = 300" in packet.text and "SECRET" not in packet.text
    monkeypatch.setattr("ctxbench.compiler.selection.FUSE_FROM", 10**6)
    index, policy = _index(tmp_path)  # a new index: no step kept from the run above
    assert "LIFESPAN = 300" not in select_compiled(index, policy, QUERY, 512).text
