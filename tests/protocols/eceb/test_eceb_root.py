"""Corpus root: the issue's two conformance vectors, order independence, sensitivity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import blake3_hex, canonical_json
from ctxbench.protocols.eceb import Artifact, corpus_root
from ctxbench.protocols.eceb.root import ROOT_DOMAIN

EMPTY_ROOT = "cae2a652e18362b015984d1baa618066eb7b943c95ee8d336af660d194ff6ca7"
ONE_ROOT = "3666a9efba9f68d1e2af9e4b8c484b738c0729db2b8d5eccc6b1981400c859ed"
RUNBOOK = Artifact("runbook-payments", "runbooks/payments.md", "runbook", "internal",
                   blake3_hex(b"# Payments failover\nFail over to us-east-2.\n"))


def test_empty_corpus_vector() -> None:
    assert corpus_root([]) == EMPTY_ROOT


def test_one_artifact_vector() -> None:
    assert corpus_root([RUNBOOK]) == ONE_ROOT


def test_root_is_the_documented_byte_string() -> None:
    other = Artifact("code-a", "code/a.py", "code", "public", "0" * 64)
    data = ROOT_DOMAIN + canonical_json(other.record()) + b"\n" + \
        canonical_json(RUNBOOK.record()) + b"\n"
    assert corpus_root([RUNBOOK, other]) == blake3_hex(data)


_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._:", min_size=1, max_size=12)


@given(st.lists(_ids, min_size=0, max_size=8, unique=True), st.randoms())
def test_root_does_not_depend_on_input_order(ids: list[str], rnd: object) -> None:
    arts = [Artifact("a" + i, f"p/{n}.md", "rfc", "internal", blake3_hex(i.encode()))
            for n, i in enumerate(ids)]
    shuffled = list(arts)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert corpus_root(shuffled) == corpus_root(arts)
    # id order equals the order of the complete canonical records (spec §5's wording)
    assert sorted(arts, key=lambda a: a.artifact_id) == \
        sorted(arts, key=lambda a: canonical_json(a.record()))


def test_root_commits_to_every_field() -> None:
    base = corpus_root([RUNBOOK])
    for field, value in (("artifact_id", "runbook-payments2"), ("path", "runbooks/p.md"),
                         ("kind", "policy"), ("classification", "public"),
                         ("blake3", "f" * 64)):
        record = RUNBOOK.record()
        record[field] = value
        assert corpus_root([Artifact(**record)]) != base
