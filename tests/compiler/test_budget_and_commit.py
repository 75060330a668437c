"""Budgets are never exceeded; packets are deterministic; verify catches any changed byte."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compiler_corpus import WORDS, write_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.compiler import (
    COMMIT_SCHEMA,
    ContextIndex,
    Policy,
    compile_context,
    get_tokenizer,
    verify_commit,
)
from ctxbench.core import InputError, IntegrityError
from ctxbench.schemas import validator

QUERY = "token refresh rotation signing key webhook retry"
POLICY = Policy(("public", "internal", "confidential"), ("a05",))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus")
    write_corpus(path, 20)
    return path


@pytest.fixture(scope="module")
def index(root: Path) -> ContextIndex:
    return ContextIndex.build(write_corpus(root, 20), get_tokenizer())


@pytest.mark.parametrize("strategy", ["compiled", "naive_top_k"])
def test_budget_never_exceeded_for_every_budget_from_one(
    index: ContextIndex, strategy: str
) -> None:
    tokenizer = get_tokenizer()
    smallest = None
    for budget in range(1, 701):
        packet = compile_context(index, query=QUERY, budget=budget, policy=POLICY,
                                 strategy=strategy)
        assert packet.token_count == tokenizer.count(packet.text) <= budget
        if packet.text:
            smallest = budget if smallest is None else smallest
        else:
            assert packet.empty_reason is not None
            assert packet.empty_reason.startswith(f"budget {budget} is smaller than")
            assert smallest is None  # once something fits, bigger budgets never empty
    assert smallest is not None


def test_too_small_budget_says_so(index: ContextIndex) -> None:
    packet = compile_context(index, query=QUERY, budget=1, policy=POLICY)
    assert (packet.text, packet.token_count, packet.selected) == ("", 0, ())
    assert packet.empty_reason is not None
    assert "budget 1 is smaller than the smallest candidate excerpt (" in packet.empty_reason


def test_larger_budget_never_selects_less(index: ContextIndex) -> None:
    sizes = [compile_context(index, query=QUERY, budget=b, policy=POLICY).token_count
             for b in (50, 100, 200, 400, 800, 1600)]
    assert sizes == sorted(sizes)


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(1, 3000),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join))
def test_budget_property(index: ContextIndex, budget: int, query: str) -> None:
    packet = compile_context(index, query=query, budget=budget, policy=POLICY)
    assert packet.token_count <= budget
    assert packet.token_count == get_tokenizer().count(packet.text)


def test_invalid_budget_and_strategy_are_refused(index: ContextIndex) -> None:
    with pytest.raises(InputError, match=r"budget: expected an integer >= 1 for compiled, got 0"):
        compile_context(index, query=QUERY, budget=0, policy=POLICY)
    with pytest.raises(InputError,
                       match="budget: expected an integer >= 1 for naive_top_k, got None"):
        compile_context(index, query=QUERY, budget=None, policy=POLICY, strategy="naive_top_k")
    with pytest.raises(InputError, match="full_permitted_context takes no budget"):
        compile_context(index, query=QUERY, budget=10, policy=POLICY,
                        strategy="full_permitted_context")
    with pytest.raises(InputError, match="strategy: expected one of compiled, naive_top_k, "):
        compile_context(index, query=QUERY, budget=10, policy=POLICY, strategy="magic")


def test_query_without_known_terms_gives_an_empty_packet(index: ContextIndex) -> None:
    packet = compile_context(index, query="zzzz qqqq", budget=500, policy=POLICY)
    assert packet.text == "" and packet.empty_reason == "no permitted text matches the query"


def test_commit_shape_and_id(index: ContextIndex) -> None:
    packet = compile_context(index, query=QUERY, budget=400, policy=POLICY)
    commit = packet.commit
    assert not list(validator(COMMIT_SCHEMA).iter_errors(commit))
    assert commit["commit_id"] == packet.commit_id
    assert packet.commit_id.startswith("ctx_") and len(packet.commit_id) == 36
    assert commit["tokenizer"] == "tiktoken:cl100k_base"
    assert commit["token_count_source"] == "local"
    assert commit["compiler"]["name"] == "ctxbench"
    assert "mk" not in json.dumps(commit["excerpts"])  # ids, digests and ranges only
    # the compiler version is beside the id, not inside it
    changed = copy.deepcopy(commit)
    changed["compiler"]["version"] = "9.9.9"
    from ctxbench.compiler import commit_id

    assert commit_id(changed) == packet.commit_id


_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from compiler_corpus import write_corpus
from ctxbench.compiler import ContextIndex, Policy, compile_context, get_tokenizer
index = ContextIndex.build(write_corpus(Path({root!r}), 20), get_tokenizer())
policy = Policy(("public", "internal", "confidential"), ("a05",))
out = []
for strategy, budget in (("compiled", 150), ("compiled", 700), ("naive_top_k", 300),
                         ("full_permitted_context", None)):
    p = compile_context(index, query={query!r}, budget=budget, policy=policy,
                        strategy=strategy)
    out.append([p.commit_id, p.rendered_blake3])
print(json.dumps(out))
"""


def test_deterministic_across_processes_and_hash_seeds(root: Path, tmp_path: Path) -> None:
    script = _SCRIPT.format(tests=str(Path(__file__).parent), root=str(root), query=QUERY)
    results = []
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True)
        results.append(json.loads(done.stdout))
    assert results[0] == results[1] == results[2]
    assert len({r[0] for r in results[0]}) == 4


def test_verify_accepts_an_untouched_commit(index: ContextIndex, root: Path) -> None:
    for strategy, budget in (("compiled", 300), ("naive_top_k", 300),
                             ("full_permitted_context", None)):
        packet = compile_context(index, query=QUERY, budget=budget, policy=POLICY,
                                 strategy=strategy)
        verify_commit(packet.commit, root)


@pytest.mark.parametrize("template", ["ctxbench.render.v1", "ctxbench.render.v2",
                                      "ctxbench.render.v3", "ctxbench.render.v4"])
def test_commits_of_earlier_templates_still_verify(index: ContextIndex, root: Path,
                                                   template: str) -> None:
    from dataclasses import replace

    from ctxbench.compiler.render import render_excerpt
    from ctxbench.compiler.strategies import finish_packet

    packet = compile_context(index, query=QUERY, budget=300, policy=POLICY,
                             strategy="compiled")
    assert packet.commit["template"] == "ctxbench.render.v5"
    assert any(len(e.ranges) > 1 for e in packet.selected)  # a gap marker is rendered
    first = packet.selected[0]
    assert first.label is not None
    assert packet.text.startswith(f"{first.label}:\n") and "\n\u2026\n" in packet.text
    # Earlier templates record no label: their headers name the path.
    excerpts = tuple(replace(e, label=None) for e in packet.selected)
    text = "".join(render_excerpt(e, (root / e.path).read_bytes(), template)
                   for e in excerpts)
    assert ("\n\u2026\n" if template in ("ctxbench.render.v3", "ctxbench.render.v4")
            else "[...]\n") in text
    old = finish_packet(index, query=QUERY, budget=600, policy=POLICY, strategy="compiled",
                        text=text, token_count=index.count(text), excerpts=excerpts,
                        empty_reason=None, template=template)
    assert old.commit["template"] == template
    assert all("label" not in e for e in old.commit["excerpts"])
    verify_commit(old.commit, root)
    forged = copy.deepcopy(old.commit)
    forged["template"] = ("ctxbench.render.v2" if template == "ctxbench.render.v3"
                          else "ctxbench.render.v3")
    with pytest.raises(IntegrityError):
        verify_commit(forged, root)
    labelled = copy.deepcopy(old.commit)  # a label where the template renders none
    labelled["excerpts"][0]["label"] = first.path
    with pytest.raises(IntegrityError, match=r"/excerpts/0/label: expected no label"):
        verify_commit(labelled, root)


def _flip(path: Path, offset: int) -> bytes:
    data = path.read_bytes()
    changed = bytearray(data)
    changed[offset] ^= 0x01
    path.write_bytes(bytes(changed))
    return data


def test_verify_detects_a_changed_byte_anywhere(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, 20)
    index = ContextIndex.build(corpus, get_tokenizer())
    packet = compile_context(index, query=QUERY, budget=250, policy=POLICY)
    assert packet.selected
    for excerpt in packet.selected:
        path = tmp_path / excerpt.path
        size = path.stat().st_size
        for offset in sorted({0, size // 3, size // 2, size - 1, excerpt.ranges[0][0]}):
            original = _flip(path, offset)
            with pytest.raises(IntegrityError, match="does not match source_blake3"):
                verify_commit(packet.commit, tmp_path)
            path.write_bytes(original)
    verify_commit(packet.commit, tmp_path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("query", "another query", "query_blake3 does not match the query"),
    ("budget", 10_000, "commit_id .* does not match its content"),
    ("token_count", 3, "commit_id .* does not match|token_count 3 does not match"),
    ("rendered_blake3", "0" * 64, "commit_id .* does not match its content"),
    ("commit_id", "ctx_" + "0" * 32, "commit_id ctx_0+ does not match its content"),
    ("schema_version", "ctxbench.context-commit.v0", "/schema_version"),
])
def test_verify_detects_a_changed_commit_field(
    index: ContextIndex, root: Path, field: str, value: object, message: str
) -> None:
    packet = compile_context(index, query=QUERY, budget=300, policy=POLICY)
    commit = copy.deepcopy(packet.commit)
    commit[field] = value
    with pytest.raises(IntegrityError, match=message):
        verify_commit(commit, root)


def test_verify_detects_changed_ranges_and_policy(index: ContextIndex, root: Path) -> None:
    packet = compile_context(index, query=QUERY, budget=300, policy=POLICY)
    commit = copy.deepcopy(packet.commit)
    commit["excerpts"][0]["ranges"][0][1] -= 1
    with pytest.raises(IntegrityError, match="does not match its content"):
        verify_commit(commit, root)
    commit = copy.deepcopy(packet.commit)
    commit["policy"]["allowed_classifications"] = ["public"]
    with pytest.raises(IntegrityError, match="policy_blake3 does not match the policy"):
        verify_commit(commit, root)


def test_verify_refuses_a_self_consistent_forgery(index: ContextIndex, root: Path) -> None:
    """A commit rebuilt with a matching id still fails when the bytes do not re-render."""
    from ctxbench.compiler import commit_id

    packet = compile_context(index, query=QUERY, budget=300, policy=POLICY)
    commit = copy.deepcopy(packet.commit)
    commit["excerpts"][0]["ranges"][0][0] += 1
    commit["commit_id"] = commit_id(commit)
    with pytest.raises(IntegrityError, match="re-rendered packet does not match"):
        verify_commit(commit, root)
    commit = copy.deepcopy(packet.commit)
    commit["policy"] = {"allowed_classifications": ["restricted"], "denied_artifacts": []}
    commit["policy_blake3"] = Policy(("restricted",)).digest()
    commit["commit_id"] = commit_id(commit)
    with pytest.raises(IntegrityError, match="not permitted by the commit's policy"):
        verify_commit(commit, root)


def test_verify_fails_closed_on_missing_files(index: ContextIndex, tmp_path: Path) -> None:
    packet = compile_context(index, query=QUERY, budget=300, policy=POLICY)
    with pytest.raises(IntegrityError, match="cannot be verified"):
        verify_commit(packet.commit, tmp_path)
