"""Template ``ctxbench.render.v5`` labels: the rule, the commit record and its verification."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.compiler.commit import commit_id, verify_commit
from ctxbench.compiler.labels import LABEL_SHARE, Labeler, corpus_names, suffixes
from ctxbench.compiler.render import Excerpt, packet_blake3, render_excerpt
from ctxbench.compiler.selection import Draft
from ctxbench.core import IntegrityError

RUNBOOK = "services/billing/runbooks/rotation-policy.md"
HIDDEN = "archive/legacy/rotation-policy.md"  # denied by the policy below
FILES = {
    RUNBOOK: "# Signing key rotation\n\n" + "".join(
        (f"## Stage {n // 5}\n\n" if n % 5 == 0 else "") +
        f"Step {n}: rotate the signing key token every {n * 7} days and record the "
        f"interval in the ledger.\n" for n in range(1, 30)),
    HIDDEN: "# Old rotation\n\nSECRETMARK signing key rotation token interval\n",
    "services/billing/config/settings.json": json.dumps(
        {"billing": {"currency": "EUR", "invoice_days": 30}}, indent=1) + "\n",
    "services/auth/config/settings.json": json.dumps(
        {"auth": {"session_minutes": 15, "key_days": 7}}, indent=1) + "\n",
    "README.md": "# Services\n\nBilling and auth services.\n",
    "docs/README.md": "# Docs\n\nHow the rotation of the signing key works.\n",
}
QUERY = "signing key rotation token interval days"
POLICY = Policy(("internal",), (HIDDEN,))


def _corpus(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _corpus(tmp_path / "corpus")


@pytest.fixture
def index(root: Path) -> ContextIndex:
    return ContextIndex.build(Corpus.from_directory(root), get_tokenizer())


def test_suffixes_are_whole_components_shortest_first() -> None:
    assert suffixes("a/b/c.json") == ["c.json", "b/c.json", "a/b/c.json"]
    assert suffixes("c.json") == ["c.json"]


def test_shortest_unique_suffix_with_shared_basenames_and_case() -> None:
    labeler = Labeler(["a/x/conf.json", "b/x/conf.json", "c/readme.md", "d/README.md",
                       "e/deep/notes.txt", "notes.txt"])
    assert labeler.shortest("a/x/conf.json") == "a/x/conf.json"  # x/conf.json is shared
    assert labeler.shortest("b/x/conf.json") == "b/x/conf.json"
    assert labeler.shortest("c/readme.md") == "readme.md"  # case-sensitive
    assert labeler.shortest("d/README.md") == "README.md"
    assert labeler.shortest("e/deep/notes.txt") == "deep/notes.txt"
    assert not labeler.unique("notes.txt") and not labeler.unique("x/conf.json")


def test_label_rule_by_budget_counts_restricted_files(index: ContextIndex) -> None:
    runbook = index.position(RUNBOOK)
    settings = index.position("services/billing/config/settings.json")
    assert runbook is not None and settings is not None
    header = index.count(f"{RUNBOOK}:\n")
    assert header > LABEL_SHARE * 128 and header <= LABEL_SHARE * 4096
    # rotation-policy.md alone would also name the denied archive file
    assert index.label(runbook, 128) == "runbooks/rotation-policy.md"
    assert index.label(runbook, 4096) == RUNBOOK
    assert index.label(runbook, None) == RUNBOOK
    assert index.label(settings, 128) == "billing/config/settings.json"
    permitted_only = Labeler(p for p in FILES if p != HIDDEN)
    assert permitted_only.shortest(RUNBOOK) == "rotation-policy.md"


def test_corpus_names_list_every_file(root: Path) -> None:
    (root / ".hidden").write_text("x\n", encoding="utf-8")
    assert sorted(corpus_names(root)) == sorted([*FILES, ".hidden"])


@pytest.mark.parametrize("strategy", ["compiled", "naive_top_k"])
@pytest.mark.parametrize("budget", [128, 256, 4096])
def test_v5_round_trip_through_compile_and_verify(index: ContextIndex, root: Path,
                                                  strategy: str, budget: int) -> None:
    packet = compile_context(index, query=QUERY, budget=budget, policy=POLICY,
                             strategy=strategy)
    assert packet.selected and packet.token_count <= budget
    assert packet.commit["template"] == "ctxbench.render.v5"
    assert "SECRETMARK" not in packet.text
    for excerpt, record in zip(packet.selected, packet.commit["excerpts"], strict=True):
        assert record["label"] == excerpt.label == index.label(
            index.position(excerpt.artifact_id) or 0, budget)
        assert f"{excerpt.label}:\n" in packet.text
    labels = {e.path: e.label for e in packet.selected}
    if budget <= 128:
        assert any(label != path for path, label in labels.items())
        assert packet.text.startswith(f"{packet.selected[0].label}:\n")
    else:
        assert all(label == path for path, label in labels.items())
    verify_commit(packet.commit, root)


def _forge(commit: dict[str, object], index: ContextIndex, root: Path,
           label: str) -> dict[str, object]:
    """The commit with excerpt 0's label replaced and every digest made consistent."""
    forged = copy.deepcopy(commit)
    items = forged["excerpts"]
    assert isinstance(items, list)
    items[0]["label"] = label
    text = "".join(render_excerpt(
        Excerpt(e["artifact_id"], e["path"], e["classification"], e["source_blake3"],
                tuple((a, b) for a, b in e["ranges"]), e.get("label")),
        (root / e["path"]).read_bytes()) for e in items)
    forged["rendered_blake3"] = packet_blake3(text)
    forged["token_count"] = index.count(text)
    forged["budget"] = max(int(str(forged["budget"])), index.count(text))  # a longer label
    forged["commit_id"] = commit_id(forged)
    return forged


@pytest.mark.parametrize(("label", "reason"), [
    ("policy.md", "expected a suffix of whole components"),
    ("other/runbooks/rotation-policy.md", "expected a suffix of whole components"),
    ("Runbooks/rotation-policy.md", "expected a suffix of whole components"),
    ("rotation-policy.md", "expected a suffix unique among the corpus's files"),
])
def test_a_tampered_label_is_refused_even_with_consistent_digests(
        index: ContextIndex, root: Path, label: str, reason: str) -> None:
    packet = compile_context(index, query=QUERY, budget=128, policy=POLICY)
    assert packet.selected[0].path == RUNBOOK
    forged = _forge(packet.commit, index, root, label)
    with pytest.raises(IntegrityError, match=rf"/excerpts/0/label: {reason}"):
        verify_commit(forged, root)
    # The full path is a label too: re-rendered with it, the commit verifies.
    verify_commit(_forge(packet.commit, index, root, RUNBOOK), root)
    tampered = copy.deepcopy(packet.commit)  # the label alone changed: the packet differs
    tampered["excerpts"][0]["label"] = RUNBOOK
    with pytest.raises(IntegrityError, match="rendered_blake3"):
        verify_commit(tampered, root)


def test_a_label_made_ambiguous_by_a_new_file_is_refused(index: ContextIndex,
                                                          root: Path) -> None:
    packet = compile_context(index, query=QUERY, budget=128, policy=POLICY)
    verify_commit(packet.commit, root)
    extra = root / "other" / "runbooks" / "rotation-policy.md"
    extra.parent.mkdir(parents=True)
    extra.write_text("unrelated\n", encoding="utf-8")
    with pytest.raises(IntegrityError, match="/excerpts/0/label: expected a suffix unique"):
        verify_commit(packet.commit, root)


def test_cli_verify_refuses_a_tampered_label_with_exit_2(
        index: ContextIndex, root: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    packet = compile_context(index, query=QUERY, budget=128, policy=POLICY)
    path = tmp_path / "forged.commit.json"
    path.write_text(json.dumps(_forge(packet.commit, index, root, "policy.md")),
                    encoding="utf-8")
    code = run_guarded(cli, ["compile", "verify", str(path), "--corpus", str(root)])
    out, err = capsys.readouterr()
    assert code == 2 and not out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: context commit: /excerpts/0/label: expected a suffix of whole " \
           f"components of the path '{RUNBOOK}', got 'policy.md'" in err


def test_selection_counts_the_header_it_renders(index: ContextIndex) -> None:
    position = index.position(RUNBOOK)
    assert position is not None
    data = index.source(position)
    end = data.index(b"Step 3")
    for budget, label in ((128, "runbooks/rotation-policy.md"), (4096, RUNBOOK)):
        draft = Draft(index, budget)
        assert draft.add(position, ((0, end),))
        excerpt = draft.packet.excerpt(position, ((0, end),))
        assert excerpt.label == label
        rendered = index.count(render_excerpt(excerpt, data))
        assert abs(draft.estimate - rendered) <= 1, (budget, draft.estimate, rendered)
        assert draft.overhead == index.count(f"{label}:\n") + 1
