"""Denied and disallowed text never reaches a packet, nor is it read for a query."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_corpus import CLASSES, WORDS, marker, write_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.compiler import (
    ContextIndex,
    Policy,
    compile_context,
    compile_external,
    get_tokenizer,
)
from ctxbench.core import InputError

COUNT = 20


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ContextIndex:
    root = tmp_path_factory.mktemp("corpus")
    return ContextIndex.build(write_corpus(root, COUNT), get_tokenizer())


def _forbidden(policy: Policy) -> list[int]:
    return [n for n in range(COUNT)
            if not policy.permits(f"a{n:02d}", CLASSES[n % 4])]


policies = st.builds(
    Policy,
    st.lists(st.sampled_from(CLASSES), unique=True).map(tuple),
    st.lists(st.sampled_from([f"a{n:02d}" for n in range(COUNT)]), unique=True).map(tuple),
)
queries = st.lists(
    st.one_of(st.sampled_from(WORDS), st.integers(0, COUNT - 1).map(marker)),
    min_size=0, max_size=8,
).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies, query=queries, budget=st.integers(1, 2500),
       strategy=st.sampled_from(["compiled", "naive_top_k", "full_permitted_context"]))
def test_no_forbidden_text_in_any_packet(
    index: ContextIndex, policy: Policy, query: str, budget: int, strategy: str
) -> None:
    packet = compile_context(
        index, query=query, policy=policy, strategy=strategy,
        budget=None if strategy == "full_permitted_context" else budget,
    )
    for n in _forbidden(policy):
        assert marker(n) not in packet.text
    for excerpt in packet.selected:
        assert policy.permits(excerpt.artifact_id, excerpt.classification)


@settings(max_examples=40, deadline=None)
@given(policy=policies, query=queries)
def test_forbidden_artifacts_are_never_read_for_a_query(
    index: ContextIndex, policy: Policy, query: str
) -> None:
    read: list[int] = []
    original = index.source

    def spy(position: int) -> bytes:
        read.append(position)
        return original(position)

    index.source = spy  # type: ignore[method-assign]
    try:
        for strategy, budget in (("compiled", 600), ("naive_top_k", 600),
                                 ("full_permitted_context", None)):
            compile_context(index, query=query, budget=budget, policy=policy, strategy=strategy)
        compile_external(index, query=query, budget=600, policy=policy,
                         system=lambda request: {"context": "", "selected": []})
    finally:
        del index.source
    forbidden = {n for n in _forbidden(policy)}
    assert not forbidden & set(read)


def test_external_candidates_hold_only_permitted_text(index: ContextIndex) -> None:
    policy = Policy(("public", "internal"), ("a01",))
    seen: dict[str, object] = {}

    def system(request: dict[str, object]) -> dict[str, object]:
        seen.update(request)
        return {"context": "", "selected": []}

    compile_external(index, query=" ".join(WORDS), budget=500, policy=policy, system=system)
    candidates = seen["candidates"]
    assert isinstance(candidates, list) and candidates
    assert {c["artifact_id"] for c in candidates} <= {
        f"a{n:02d}" for n in range(COUNT) if n % 4 in (0, 1) and n != 1
    }
    text = "\n".join(c["text"] for c in candidates)
    for n in _forbidden(policy):
        assert marker(n) not in text


def test_query_naming_a_denied_marker_still_gets_nothing_of_it(index: ContextIndex) -> None:
    policy = Policy(("public",), ("a04",))
    packet = compile_context(index, query=f"{marker(4)} {marker(8)}", budget=2000,
                             policy=policy, strategy="compiled")
    assert marker(4) not in packet.text
    assert marker(8) in packet.text  # a08 is public and not denied


def test_empty_allow_list_gives_an_empty_packet_with_a_reason(index: ContextIndex) -> None:
    packet = compile_context(index, query="token", budget=500, policy=Policy(()))
    assert packet.text == "" and packet.token_count == 0
    assert packet.empty_reason == "no artifact with text is permitted by the policy"


def test_policy_rejects_blank_values() -> None:
    with pytest.raises(InputError, match="allowed_classifications: expected non-blank"):
        Policy(("",))
    with pytest.raises(InputError, match="denied_artifacts: expected non-blank"):
        Policy(("public",), (" ",))


def test_policy_digest_ignores_order_and_duplicates() -> None:
    assert Policy(("b", "a", "a"), ("y", "x")).digest() == Policy(("a", "b"), ("x", "y")).digest()
    assert Policy(("a",)).digest() != Policy(("a",), ("x",)).digest()


def test_policy_from_json_rejects_wrong_shapes() -> None:
    with pytest.raises(InputError, match="exactly allowed_classifications and denied"):
        Policy.from_json({"allowed_classifications": []})
    with pytest.raises(InputError, match="expected arrays of strings"):
        Policy.from_json({"allowed_classifications": "x", "denied_artifacts": []})


def test_write_corpus_is_deterministic(tmp_path: Path) -> None:
    a = write_corpus(tmp_path / "a", 5)
    b = write_corpus(tmp_path / "b", 5)
    assert [x.blake3 for x in a.artifacts] == [x.blake3 for x in b.artifacts]
