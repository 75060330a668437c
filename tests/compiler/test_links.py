"""The second hop: a window that uses a name brings the line elsewhere that binds it."""

from __future__ import annotations

from pathlib import Path

from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact, Policy, get_tokenizer
from ctxbench.compiler.links import bindings, link_names, links_from
from ctxbench.compiler.selection import select_compiled
from ctxbench.core import blake3_hex

FILTERS = (
    "def do_shorten(env, s, length=255, leeway=None):\n"
    '    """Shorten a string to a length; a string a little longer than the length is\n'
    '    returned whole, within the tolerance."""\n'
    "    if leeway is None:\n"
    '        leeway = env.policies["shorten.leeway"]\n'
    "    if len(s) <= length + leeway:\n"
    "        return s\n"
    "    return s[:length]\n"
    + "".join(f"\n\ndef other_{n}(value):\n    return value * {n}\n" for n in range(30))
)
DEFAULTS = (
    "# settings every environment starts from\n"
    "DEFAULT_POLICIES = {\n"
    '    "json.sort": True,\n'
    '    "shorten.leeway": 5,\n'
    '    "urlize.rel": "noopener",\n'
    "}\n"
    + "".join(f"\nCONSTANT_{n} = {n}\n" for n in range(30))
)
QUERY = "How much longer than the length may a string be before it is shortened?"


def _index(tmp_path: Path, denied: bool = False) -> tuple[ContextIndex, Policy]:
    artifacts = []
    for aid, name, text in (("f", "filters.py", FILTERS), ("d", "defaults.py", DEFAULTS)):
        data = text.encode("utf-8")
        (tmp_path / name).write_bytes(data)
        artifacts.append(CorpusArtifact(aid, name, "code", "public", blake3_hex(data)))
    index = ContextIndex.build(Corpus(tmp_path, tuple(artifacts), "test"), get_tokenizer())
    policy = Policy(("public",), ("d",) if denied else ())
    return index, policy


def test_link_names_are_compounds_quoted_keys_and_defined_names() -> None:
    text = FILTERS.split("\n\n\n")[0].encode("utf-8")
    assert link_names(text) == [b"do_shorten", b'"shorten.leeway"']


def test_the_binding_of_a_quoted_key_is_found_in_the_other_file(tmp_path: Path) -> None:
    index, policy = _index(tmp_path)
    found = []
    for chunk_id, line, _, _ in bindings(index, policy, b'"shorten.leeway"'):
        chunk = index.chunks[chunk_id]
        data = index.source(int(index.chunk_artifact[chunk_id]))
        found.append(data[chunk.start:chunk.end].splitlines()[line].strip())
    assert b'"shorten.leeway": 5,' in found


def test_a_packet_holds_the_use_and_the_default_in_two_files(tmp_path: Path) -> None:
    """The question matches the function (its words) and nothing of the defaults file:
    only the second hop can bring the value the answer needs."""
    index, policy = _index(tmp_path)
    packet = select_compiled(index, policy, QUERY, 300)
    assert packet.token_count <= 300
    assert 'leeway = env.policies["shorten.leeway"]' in packet.text
    assert '"shorten.leeway": 5,' in packet.text


def test_the_second_hop_never_reaches_a_denied_file(tmp_path: Path) -> None:
    index, policy = _index(tmp_path, denied=True)
    filters = index.position("f")
    found = bindings(index, policy, b'"shorten.leeway"')
    assert found and all(int(index.chunk_artifact[c]) == filters for c, *_ in found)
    packet = select_compiled(index, policy, QUERY, 300)
    assert "DEFAULT_POLICIES" not in packet.text and "shorten.leeway\": 5" not in packet.text
    assert filters is not None
    data = index.source(filters)
    span = (0, data.index(b"    if len(s)"))
    assert all(int(index.chunk_artifact[c]) == filters
               for c, _ in links_from(index, policy, filters, span))
