"""Every reported policy leak, reproduced: 0 restricted bytes in any packet, exit 2 for
unknown names, and a property test over random corpora and spellings of denied names."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.core import InputError
from ctxbench.protocols.eceb import register_directory, seed_paths

SECRET = "zqtokensecretq"
CAFE = "zqcafesecretq"
CAFE_NFC = unicodedata.normalize("NFC", "café.md")
CAFE_NFD = unicodedata.normalize("NFD", "café.md")
QUERY = "refresh token rotation signing key"
RUNS = [["--strategy", "full_permitted_context"], ["--budget", "40"], ["--budget", "400"],
        ["--strategy", "naive_top_k", "--budget", "400"]]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "src" / "auth").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "auth" / "tokens.py").write_text("".join(
        f"# {SECRET} refresh token rotation signing key line {n}\n" for n in range(20)))
    (root / CAFE_NFC).write_text(f"{CAFE} refresh token café rotation\n" * 5)
    (root / "docs" / "guide.md").write_text("# Guide\nRotate the refresh token signing key.\n")
    (root / "docs" / "notes.md").write_text("Token rotation notes: refresh daily.\n")
    return root


def _compile(capsys: pytest.CaptureFixture[str], corpus: Path, *extra: str
             ) -> tuple[int, str, str]:
    code = run_guarded(cli, ["compile", "--corpus", str(corpus), "--query", QUERY,
                             "--print", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _variants(corpus: Path) -> list[str]:
    return ["./src/auth/tokens.py", str(corpus / "src" / "auth" / "tokens.py"),
            "SRC/Auth/TOKENS.py", "tokens.py", "src/auth/tokens.py ", " src/auth/tokens.py",
            "src/auth/../auth/tokens.py", "src/auth", "./src/", "src/auth/tokens.py"]


def test_every_spelling_of_a_denied_file_denies_it(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packets = 0
    for spelling in _variants(corpus):
        for run in RUNS:
            code, out, err = _compile(capsys, corpus, "--deny", spelling, *run)
            assert code == 0, (spelling, err)
            assert SECRET not in out and "tokens.py" not in out, spelling
            # headers name a file by its path or, at small budgets, a unique suffix of it
            assert "guide.md:\n" in out or "notes.md:\n" in out or CAFE in out
            packets += 1
    assert packets == 40


def test_nfc_and_nfd_names_and_paths_relative_to_the_working_directory(
    corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for spelling in (CAFE_NFD, CAFE_NFC, CAFE_NFD.upper(), f"./{CAFE_NFD} "):
        code, out, err = _compile(capsys, corpus, "--deny", spelling,
                                  "--strategy", "full_permitted_context")
        assert code == 0, err
        assert CAFE not in out and SECRET in out
    monkeypatch.chdir(corpus.parent)
    code, out, _ = _compile(capsys, corpus, "--deny", "corpus/src/auth/tokens.py",
                            "--strategy", "full_permitted_context")
    assert code == 0 and SECRET not in out
    monkeypatch.chdir(corpus / "src")
    # "auth/tokens.py" from inside src/ is the file src/auth/tokens.py
    code, out, _ = _compile(capsys, corpus, "--deny", "auth/tokens.py",
                            "--strategy", "full_permitted_context")
    assert code == 0 and SECRET not in out


@pytest.mark.parametrize(("args", "message"), [
    (["--deny", "token.py"], 'policy: denied_artifacts: expected an artifact of the corpus '
     '(its id, its path, a path inside the corpus or a unique file name), got the string '
     '"token.py"; did you mean \'tokens.py\' or \'src/auth/tokens.py\'?'),
    (["--deny", "src/auth/tokens.py", "--deny", "nope.md"], 'got the string "nope.md"'),
    (["--deny", "/etc/passwd"], 'got the string "/etc/passwd"'),
    (["--deny", "../corpus2/x.md"], 'got the string "../corpus2/x.md"'),
    (["--allow", "interal"], 'policy: allowed_classifications: expected one of confidential, '
     'internal, public, restricted, got the string "interal"; did you mean \'internal\'?'),
    (["--allow", "secret"], 'got the string "secret"'),
    (["--allow", "public"], "policy: allowed_classifications: expected at least one "
     "classification the corpus holds (internal), got public"),
])
def test_unknown_names_are_refused_with_exit_2(
    corpus: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = _compile(capsys, corpus, *args, "--budget", "400")
    assert code == 2
    assert out == ""
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert message in line


def test_ambiguous_names_are_refused(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (corpus / "docs" / "Guide.md").write_text(f"{SECRET} upper-case twin\n")
    (corpus / "src" / "notes.md").write_text(f"{SECRET} a second notes.md\n")
    code, out, err = _compile(capsys, corpus, "--deny", "DOCS/GUIDE.MD", "--budget", "400")
    assert (code, out) == (2, "")
    assert ("matches several that differ only in case: 'docs/Guide.md', 'docs/guide.md'; "
            "give the exact path") in err
    code, out, err = _compile(capsys, corpus, "--deny", "notes.md", "--budget", "400")
    assert (code, out) == (2, "")
    assert "matches several that share this file name: 'docs/notes.md', 'src/notes.md'" in err
    code, out, err = _compile(capsys, corpus, "--deny", "docs/Guide.md", "--deny",
                              "src/notes.md", "--deny", "src/auth",
                              "--strategy", "full_permitted_context")
    assert code == 0 and SECRET not in out and "Guide" in err + out


def test_policy_options_do_not_apply_to_a_benchmark(
    capsys: pytest.CaptureFixture[str]
) -> None:
    seed = seed_paths()
    code = run_guarded(cli, ["compile", "--benchmark", str(seed.benchmark), "--corpus",
                             str(seed.corpus), "--task", "webhook-retry-policy",
                             "--budget", "300", "--deny", "x"])
    assert code == 2
    assert "--allow and --deny apply to a plain directory" in capsys.readouterr().err


def test_an_in_corpus_symlink_never_becomes_a_public_artifact(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / "restricted").mkdir(parents=True)
    (corpus / "public").mkdir()
    (corpus / "restricted" / "salaries.md").write_text(f"{SECRET}\n")
    (corpus / "public" / "faq.md").write_text("public faq\n")
    rules = tmp_path / "rules.toml"
    rules.write_text('benchmark_id = "b"\n'
                     '[[rule]]\nglob = "public/**"\nkind = "runbook"\n'
                     'classification = "public"\n'
                     '[[rule]]\nglob = "restricted/**"\nkind = "policy"\n'
                     'classification = "restricted"\n')
    assert len(register_directory(corpus, rules)["corpus"]["artifacts"]) == 2
    os.symlink("../restricted/salaries.md", corpus / "public" / "salaries.md")
    with pytest.raises(InputError, match=r"public/salaries\.md: expected a regular file or "
                       r"directory, got a symbolic link"):
        register_directory(corpus, rules)
    os.unlink(corpus / "public" / "salaries.md")
    os.symlink("../restricted", corpus / "public" / "mirror")
    with pytest.raises(InputError, match=r"public/mirror: expected a regular file or "
                       r"directory, got a symbolic link"):
        register_directory(corpus, rules)


def test_external_restricted_text_never_reaches_a_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = seed_paths()
    secret_file = seed.corpus / "policies" / "compensation-bands-2026.md"
    script = tmp_path / "smuggler.py"
    script.write_text(
        "import json, sys\n"
        "request = json.load(sys.stdin)\n"
        "best = request['candidates'][0]\n"
        f"secret = open({str(secret_file)!r}, encoding='utf-8').read()\n"
        "json.dump({'context': best['text'] + secret, 'selected': [{'artifact_id': "
        "best['artifact_id'], 'ranges': [[best['start'], best['end']]]}]}, sys.stdout)\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    output = tmp_path / "commit.json"
    code = run_guarded(cli, ["compile", "--benchmark", str(seed.benchmark), "--corpus",
                             str(seed.corpus), "--task", "webhook-retry-policy", "--budget",
                             "4000", "--external", command, "--print", "--output",
                             str(output)])
    out, err = capsys.readouterr()
    assert code == 3
    assert out == "" and not output.exists()
    assert ("external strategy response: refused, no packet was built (policy is "
            "fail-closed): context: character") in err
    assert secret_file.read_text(encoding="utf-8")[:40] not in err


# Property: for random corpora and random spellings of denied names, no denied byte ever
# appears in a packet; a spelling is either bound to the file or refused (exit 2).

_names = st.text(st.sampled_from("abAB_é"), min_size=1, max_size=4)


def _spell(rel: str, root: Path, how: int) -> str:
    return [rel, "./" + rel, str(root / rel), rel.upper(), unicodedata.normalize("NFD", rel),
            rel + " ", rel.rsplit("/", 1)[-1], " ./" + rel.swapcase()][how]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(st.tuples(st.sampled_from(["", "d/", "D/", "d/e/"]), _names),
                      min_size=1, max_size=6, unique_by=lambda f: f[0] + f[1]),
       denied=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7)), min_size=1,
                       max_size=3),
       strategy=st.sampled_from(["compiled", "full_permitted_context"]))
def test_no_denied_byte_in_any_packet(files: list[tuple[str, str]],
                                      denied: list[tuple[int, int]], strategy: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        marks: dict[str, str] = {}
        for n, (folder, stem) in enumerate(files):
            rel = unicodedata.normalize("NFC", f"{folder}{stem}.md")
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            if (root / rel).exists():  # the file system folded two names together
                continue
            marks[rel] = f"zqmark{n}q"
            (root / rel).write_text(f"{marks[rel]} token rotation\n" * 3)
        corpus = Corpus.from_directory(root)
        rels = sorted(marks)
        spellings = [_spell(rels[i % len(rels)], root, how) for i, how in denied]
        try:
            policy = Policy(("internal",), tuple(spellings)).resolved_for(corpus)
        except InputError as exc:
            assert "matches several" in str(exc), exc  # only ever refused as ambiguous
            event("refused as ambiguous")
            return
        event("compiled")
        index = ContextIndex.build(corpus, get_tokenizer())
        packet = compile_context(index, query="token rotation", policy=policy,
                                 strategy=strategy,
                                 budget=None if strategy == "full_permitted_context" else 300)
        for i, _how in denied:
            rel = rels[i % len(rels)]
            assert marks[rel] not in packet.text, (rel, spellings)
        assert json.dumps(packet.commit["policy"]["denied_artifacts"])


def test_entries_that_are_never_read_can_be_denied(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (corpus / ".env").write_text("KEY=zqenvq\n")
    os.symlink("src/auth/tokens.py", corpus / "link.py")
    for name in (".env", "./.env"):
        code, out, err = _compile(capsys, corpus, "--deny", name,
                                  "--strategy", "full_permitted_context")
        assert code == 0, err
        assert "zqenvq" not in out and SECRET in out
    # Denying a link denies the file it points at as well (fail-closed).
    code, out, err = _compile(capsys, corpus, "--deny", "link.py",
                              "--strategy", "full_permitted_context")
    assert code == 0, err
    assert SECRET not in out and "docs/guide.md" in out


def test_compile_verify_refuses_a_commit_forged_around_restricted_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.compiler.commit import commit_id
    from ctxbench.core import blake3_hex

    seed = seed_paths()
    honest = tmp_path / "honest.py"
    honest.write_text(
        "import json, sys\nrequest = json.load(sys.stdin)\nc = request['candidates'][:2]\n"
        "json.dump({'context': ''.join(x['text'] for x in c), 'selected': [{'artifact_id': "
        "x['artifact_id'], 'ranges': [[x['start'], x['end']]]} for x in c]}, sys.stdout)\n")
    commit_path, text_path = tmp_path / "commit.json", tmp_path / "ext.txt"
    code = run_guarded(cli, ["compile", "--benchmark", str(seed.benchmark), "--corpus",
                             str(seed.corpus), "--task", "webhook-retry-policy", "--budget",
                             "4000", "--external",
                             f"{shlex.quote(sys.executable)} {shlex.quote(str(honest))}",
                             "--print", "--output", str(commit_path)])
    text = capsys.readouterr().out
    assert code == 0
    text_path.write_bytes(text.encode("utf-8"))
    assert run_guarded(cli, ["compile", "verify", str(commit_path), "--corpus",
                             str(seed.corpus), "--context", str(text_path)]) == 0
    assert capsys.readouterr().out.startswith("verified: ")
    secret = (seed.corpus / "policies" / "compensation-bands-2026.md").read_text("utf-8")
    forged = json.loads(commit_path.read_text())
    forged["rendered_blake3"] = blake3_hex((text + secret).encode("utf-8"))
    forged["commit_id"] = commit_id(forged)
    commit_path.write_text(json.dumps(forged))
    text_path.write_bytes((text + secret).encode("utf-8"))
    code = run_guarded(cli, ["compile", "verify", str(commit_path), "--corpus",
                             str(seed.corpus), "--context", str(text_path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (f"ctxbench: error: {commit_path}: context commit: the context is not "
                   f"composed of the "
                   f"selected bytes: character {len(text)} of the context starts text that is "
                   f"neither a whole line of a selected range nor framing\n")


def test_a_bare_name_that_is_also_a_root_path_is_refused_when_others_share_it(
        tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "A.md").write_text("root zqrootq\n")
    (tmp_path / "d" / "A.md").write_text("nested zqnestedq\n")
    corpus = Corpus.from_directory(tmp_path)
    with pytest.raises(InputError, match="matches several that share this file name"):
        Policy(("internal",), ("A.md",)).resolved_for(corpus)
    bound = Policy(("internal",), ("d/A.md",)).resolved_for(corpus)
    assert bound.denied_artifacts == ("d/A.md",)


def test_a_bare_name_that_folds_to_one_file_and_names_another_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "a.md" folds to the root file A.md and is the exact name of d/a.md: refused, exit 2,
    # rather than binding to A.md and sending d/a.md (found by the property test below).
    root = tmp_path / "c"
    (root / "d").mkdir(parents=True)
    for name in ("A", "B", "AA", "AAA", "d/a"):
        (root / f"{name}.md").write_text(f"zq{name.replace('/', '')}secret rotation\n")
    code, out, err = _compile(capsys, root, "--deny", "a.md",
                              "--strategy", "full_permitted_context")
    assert code == 2 and out == ""
    assert "'A.md', 'd/a.md'" in err and err.count("\n") == 1
    code, out, err = _compile(capsys, root, "--deny", "d/a.md",
                              "--strategy", "full_permitted_context")
    assert code == 0, err
    assert "zqdasecret" not in out and "zqAsecret" in out


HARD_LINK_RUNS = [["--strategy", "full_permitted_context"], ["--budget", "400"],
                  ["--strategy", "naive_top_k", "--budget", "400"],
                  *(["--strategy", s, "--budget", "400"]
                    for s in ("truncate-head", "truncate-tail", "middle-out", "chunk-bm25"))]


def test_a_hard_link_to_a_denied_file_is_denied_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    (root / "hr").mkdir(parents=True)
    (root / "pub").mkdir()
    (root / "hr" / "salaries.md").write_text(
        "".join(f"{SECRET} salary band token rotation {n}\n" for n in range(10)))
    (root / "pub" / "faq.md").write_text("Refresh token rotation happens daily.\n")
    os.link(root / "hr" / "salaries.md", root / "pub" / "notes.md")
    for deny in ("hr/salaries.md", "pub/notes.md"):
        for run in HARD_LINK_RUNS:
            code, out, err = _compile(capsys, root, "--deny", deny, *run)
            assert code == 0, (deny, run, err)
            assert SECRET not in out, (deny, run)
            assert "faq.md" in out or "Refresh token" in out, (deny, run)
    corpus = Corpus.from_directory(root)
    assert corpus.aliases("pub/notes.md") == ("hr/salaries.md", "pub/notes.md")
    index = ContextIndex.build(corpus, get_tokenizer())
    policy = Policy(("internal",), ("hr/salaries.md",))
    assert [index.artifact_at(p).artifact_id for p in index.permitted_artifacts(policy)] == [
        "pub/faq.md"]


def test_compile_verify_refuses_a_commit_of_a_second_name_of_a_denied_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.compiler.commit import commit_id
    from ctxbench.compiler.render import Excerpt, packet_blake3, render_excerpt

    root = tmp_path / "corpus"
    (root / "hr").mkdir(parents=True)
    (root / "hr" / "salaries.md").write_text(f"{SECRET} salary band\n")
    (root / "notes.md").write_text(f"{SECRET} salary band\n")
    commit_path = tmp_path / "commit.json"
    code = run_guarded(cli, ["compile", "--corpus", str(root), "--query", "salary",
                             "--strategy", "full_permitted_context", "--deny", "hr",
                             "--output", str(commit_path)])
    assert code == 0  # the copy shares the denied file's bytes: it is denied too
    assert json.loads(commit_path.read_text())["excerpts"] == []
    capsys.readouterr()
    (root / "notes.md").unlink()
    os.link(root / "hr" / "salaries.md", root / "notes.md")
    assert run_guarded(cli, ["compile", "--corpus", str(root), "--query", "salary",
                             "--strategy", "full_permitted_context",
                             "--output", str(commit_path)]) == 0
    forged = json.loads(commit_path.read_text())
    forged["excerpts"] = [e for e in forged["excerpts"] if e["path"] == "notes.md"]
    forged["policy"]["denied_artifacts"] = ["hr/salaries.md"]
    forged["policy_blake3"] = Policy.from_json(forged["policy"]).digest()
    item = forged["excerpts"][0]
    excerpt = Excerpt(item["artifact_id"], item["path"], item["classification"],
                      item["source_blake3"], tuple(map(tuple, item["ranges"])),
                      item.get("label"))
    text = render_excerpt(excerpt, (root / "notes.md").read_bytes(), forged["template"])
    forged["rendered_blake3"] = packet_blake3(text)
    forged["token_count"] = get_tokenizer().count(text)
    forged["commit_id"] = commit_id(forged)
    commit_path.write_text(json.dumps(forged))
    capsys.readouterr()
    code = run_guarded(cli, ["compile", "verify", str(commit_path), "--corpus", str(root)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "notes.md is the same file as, or holds the same bytes as, an artifact the " \
           "commit's policy denies" in err


def test_a_registry_giving_one_file_two_classifications_never_sends_it(
    tmp_path: Path,
) -> None:
    from ctxbench.compiler.corpus import CorpusArtifact
    from ctxbench.core import blake3_hex

    root = tmp_path / "c"
    (root / "restricted").mkdir(parents=True)
    (root / "public").mkdir()
    data = f"{SECRET} salary band token rotation\n".encode()
    (root / "restricted" / "salaries.md").write_bytes(data)
    os.link(root / "restricted" / "salaries.md", root / "public" / "notes.md")
    (root / "public" / "faq.md").write_text("token rotation faq\n")
    digest = blake3_hex(data)
    corpus = Corpus(root, (
        CorpusArtifact("salaries", "restricted/salaries.md", "policy", "restricted", digest),
        CorpusArtifact("notes", "public/notes.md", "runbook", "public", digest),
        CorpusArtifact("faq", "public/faq.md", "runbook", "public",
                       blake3_hex(b"token rotation faq\n"))), "test")
    index = ContextIndex.build(corpus, get_tokenizer())
    policy = Policy(("public",))
    for strategy, budget in (("compiled", 300), ("naive_top_k", 300),
                             ("full_permitted_context", None), ("chunk-bm25", 300)):
        packet = compile_context(index, query="salary token rotation", budget=budget,
                                 policy=policy, strategy=strategy)
        assert SECRET not in packet.text and packet.artifact_ids == ("faq",), strategy


def test_compile_verify_refuses_restricted_text_in_a_commits_free_text(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_path = tmp_path / "commit.json"
    assert run_guarded(cli, ["compile", "--corpus", str(corpus), "--query", QUERY,
                             "--strategy", "truncate-head", "--budget", "300",
                             "--deny", "src/auth/tokens.py",
                             "--output", str(commit_path)]) == 0
    assert run_guarded(cli, ["compile", "verify", str(commit_path), "--corpus",
                             str(corpus)]) == 0
    capsys.readouterr()
    secret = (corpus / "src" / "auth" / "tokens.py").read_text().splitlines()[3]
    forged = json.loads(commit_path.read_text())
    forged["strategy_source"]["details"] = {"note": secret}  # outside the commit id
    commit_path.write_text(json.dumps(forged))
    code = run_guarded(cli, ["compile", "verify", str(commit_path), "--corpus", str(corpus)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "strategy_source holds text of a file the commit's policy denies" in err


def test_denying_a_hidden_file_denies_its_hard_links_and_copies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    (root / ".private").mkdir(parents=True)
    (root / "pub").mkdir()
    (root / ".private" / "salaries.md").write_text(f"{SECRET} salary token rotation\n")
    os.link(root / ".private" / "salaries.md", root / "pub" / "notes.md")
    (root / "pub" / "copy.md").write_text(f"{SECRET} salary token rotation\n")
    (root / "pub" / "faq.md").write_text("Token rotation faq.\n")
    for deny in (".private/salaries.md", ".private"):
        code, out, err = _compile(capsys, root, "--deny", deny,
                                  "--strategy", "full_permitted_context")
        assert code == 0, err
        assert SECRET not in out and "faq.md" in out, deny
