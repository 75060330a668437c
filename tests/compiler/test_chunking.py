"""Chunkers respect structure on real-shaped files, and always cover every byte once."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.compiler.chunking import MAX_CHUNK_BYTES, Chunk, chunk_artifact, chunker_for

SEED = Path(__file__).resolve().parents[2] / "src/ctxbench/data/enterprise-seed/corpus"


def _chunks(path: str, kind: str, data: bytes) -> list[Chunk]:
    chunks = chunk_artifact("a", "d" * 64, path, kind, data)
    assert chunks[0].start == 0 and chunks[-1].end == len(data)
    for left, right in itertools.pairwise(chunks):
        assert left.end == right.start
    for chunk in chunks:
        assert chunk.artifact_id == "a" and chunk.source_blake3 == "d" * 64
        assert all(b <= chunk.start for _, b in chunk.context)
        data[chunk.start:chunk.end].decode("utf-8")  # line-aligned, so valid UTF-8
    return chunks


def _texts(data: bytes, chunks: list[Chunk]) -> list[str]:
    return [data[c.start:c.end].decode() for c in chunks]


MARKDOWN = b"""intro line

# Payments failover

Overview of the failover.

## Preconditions

- standby is healthy

```bash
# this is a comment, not a heading
kubectl get pods
```

### Promote the standby

Run the promote script.

# Appendix

done
"""


def test_markdown_sections_keep_their_enclosing_headings() -> None:
    chunks = _chunks("runbooks/x.md", "runbook", MARKDOWN)
    texts = _texts(MARKDOWN, chunks)
    assert [t.splitlines()[0] for t in texts] == [
        "intro line", "# Payments failover", "## Preconditions", "### Promote the standby",
        "# Appendix",
    ]
    assert "# this is a comment" in texts[2]  # fenced code is not a heading
    promote = chunks[3]
    context = [MARKDOWN[a:b].decode() for a, b in promote.context]
    assert context == ["# Payments failover\n", "## Preconditions\n"]
    assert chunks[4].context == ()


PYTHON = b'''"""Tokens."""

import os

TTL = 900


@dataclass
class Token:
    value: str


def issue(user: str) -> Token:
    return Token(user)


async def refresh_token(token: Token) -> Token:
    return token

if __name__ == "__main__":
    issue("x")
'''


def test_python_definitions_by_ast() -> None:
    texts = _texts(PYTHON, _chunks("code/auth/tokens.py", "code", PYTHON))
    assert texts[0].startswith('"""Tokens."""') and "TTL = 900" in texts[0]
    assert texts[1].startswith("@dataclass\nclass Token:")
    assert texts[2].startswith("def issue(")
    assert texts[3].startswith("async def refresh_token(")
    assert texts[4].startswith('if __name__ == "__main__":')


def test_large_python_class_is_split_by_method_with_the_class_line_as_context() -> None:
    methods = "".join(
        f"    def method_{i}(self) -> int:\n" + "        x = 1\n" * 40 + "        return x\n\n"
        for i in range(6)
    )
    data = ("class Big(Base):\n    \"\"\"Doc.\"\"\"\n\n" + methods).encode()
    chunks = _chunks("big.py", "code", data)
    method_chunks = [c for c in chunks if c.label.startswith("def method_")]
    assert len(method_chunks) == 6
    for chunk in method_chunks:
        assert [data[a:b] for a, b in chunk.context] == [b"class Big(Base):\n"]
    assert all(c.end - c.start <= MAX_CHUNK_BYTES for c in chunks)


def test_python_syntax_error_falls_back_to_blocks() -> None:
    data = b"def broken(:\n    pass\n\nx = 1\n"
    assert len(_chunks("bad.py", "code", data)) >= 1


def test_small_json_stays_whole_so_name_and_version_stay_together() -> None:
    data = json.dumps({"name": "pkg", "version": "1.2.3", "beta": {"x": [1, 2]}, "gamma": "é"},
                      indent=2, ensure_ascii=False).encode()
    texts = _texts(data, _chunks("api/package.json", "api_spec", data))
    assert texts == [data.decode()]


def test_large_json_splits_by_nesting_and_keeps_the_key_path() -> None:
    doc = {"name": "pkg", "version": "1.2.3",
           "scripts": {f"s{i:02}": "echo " + "y" * 60 for i in range(60)}, "deps": {"a": "1"}}
    data = json.dumps(doc, indent=2).encode()
    chunks = _chunks("package.json", "api_spec", data)
    first = data[chunks[0].start:chunks[0].end].decode()
    assert '"name": "pkg"' in first and '"version": "1.2.3"' in first
    inner = [c for c in chunks if c.label.startswith("scripts.") and len(c.context) == 2]
    assert len(inner) >= 3
    for chunk in inner:
        assert chunk.end - chunk.start <= MAX_CHUNK_BYTES
        context = b"".join(data[a:b] for a, b in chunk.context).decode()
        assert context == '{\n  "scripts": {\n'
    assert chunks[-1].label == "deps"
    assert b"".join(data[c.start:c.end] for c in chunks) == data


def test_small_yaml_spec_stays_whole_and_large_yaml_keeps_its_key_path() -> None:
    data = (b"openapi: 3.1.0\ninfo:\n  title: Pets\n  version: 1.0.0\npaths:\n  /pets:\n"
            b"    get:\n      summary: List pets\n")
    assert _texts(data, _chunks("spec.yaml", "api_spec", data)) == [data.decode()]
    ops = "".join(f"    op{i:02}:\n      summary: {'z' * 80}\n" for i in range(40))
    big = f"openapi: 3.1.0\npaths:\n  /pets:\n{ops}".encode()
    chunks = _chunks("spec.yaml", "api_spec", big)
    assert len(chunks) > 2
    assert chunks[-1].label.startswith("paths./pets.op")
    assert b"".join(big[a:b] for a, b in chunks[-1].context) == b"paths:\n  /pets:\n"


def test_python_that_makes_the_parser_recurse_falls_back_to_blocks() -> None:
    data = ("x = " + "(" * 100_000 + ")" * 100_000 + "\n\ny = 1\n").encode()
    chunks = _chunks("deep.py", "code", data)
    assert b"".join(data[c.start:c.end] for c in chunks) == data


def test_toml_tables() -> None:
    toml = b'[server]\nport = 1\n\n[db]\nurl = "x"\n'
    assert _texts(toml, _chunks("c.toml", "infrastructure", toml)) == [
        "[server]\nport = 1\n\n", '[db]\nurl = "x"\n']


def test_chat_messages_with_continuation_lines() -> None:
    data = (b"2026-03-04T09:38:12Z [maya.okafor] card auth errors\n"
            b"  continued here\n"
            b"[10:01] bob: ack\n"
            b"alice: done\n")
    texts = _texts(data, _chunks("chat/x.log", "chat", data))
    assert texts == ["2026-03-04T09:38:12Z [maya.okafor] card auth errors\n  continued here\n",
                     "[10:01] bob: ack\n", "alice: done\n"]


def test_other_code_by_blank_line_blocks() -> None:
    block = "\n".join(f'resource "x" "r{i}" {{ name = "{"n" * 300}" }}' for i in range(3))
    data = ("\n\n".join([block] * 4) + "\n").encode()
    chunks = _chunks("infra/terraform/main.tf", "infrastructure", data)
    assert chunker_for("infra/terraform/main.tf", "infrastructure") == "plain"
    assert len(chunks) == 4


@pytest.mark.parametrize(("path", "kind", "name"), [
    ("a.md", "rfc", "markdown"), ("a.py", "code", "python"), ("a.json", "api_spec", "nested"),
    ("a.yaml", "infrastructure", "nested"), ("a.log", "chat", "chat"),
    ("a.md", "chat", "chat"), ("a.jsonl", "chat", "per_line"), ("Makefile", "code", "plain"),
])
def test_chunker_dispatch(path: str, kind: str, name: str) -> None:
    assert chunker_for(path, kind) == name


def test_seed_corpus_files_chunk_cleanly() -> None:
    files = sorted(p for p in SEED.rglob("*") if p.is_file())
    if not files:
        pytest.skip("the seed corpus is not present")
    for path in files:
        rel = path.relative_to(SEED).as_posix()
        kind = "chat" if rel.startswith("chat/") else "runbook"
        chunks = _chunks(rel, kind, path.read_bytes())
        assert chunks


def test_empty_artifact_has_no_chunks() -> None:
    assert chunk_artifact("a", "d", "x.md", "runbook", b"") == []


@given(st.text(alphabet=st.sampled_from(list("ab #\n:{}\"_-é[]`")), max_size=400),
       st.sampled_from(["x.md", "x.py", "x.json", "x.yaml", "x.log", "x.txt", "x.jsonl"]))
def test_any_text_is_covered_exactly_once(text: str, path: str) -> None:
    data = text.encode()
    chunks = chunk_artifact("a", "d", path, "chat" if path.endswith(".log") else "code", data)
    covered = b"".join(data[c.start:c.end] for c in chunks)
    if path.endswith(".jsonl"):  # one chunk per non-blank line; blank lines belong to none
        assert covered == b"".join(
            line for line in data.splitlines(keepends=True) if line.strip())
    else:
        assert covered == data


def test_plain_text_sections_under_man_page_rst_and_markdown_headings() -> None:
    man = (b"NAME\n       kill - send a signal\n\nDESCRIPTION\n       The default signal"
           b" is TERM.\n\nOPTIONS\n       -s sig\n")
    texts = _texts(man, _chunks("doc/kill.1.txt", "runbook", man))
    assert texts == ["NAME\n       kill - send a signal\n\n",
                     "DESCRIPTION\n       The default signal is TERM.\n\n",
                     "OPTIONS\n       -s sig\n"]
    rst = b"Title\n=====\n\nIntro.\n\nUsage\n-----\n\nRun it.\n"
    chunks = _chunks("README", "runbook", rst)
    assert [c.label for c in chunks] == ["Title", "Usage"]
    assert rst[slice(*chunks[1].context[0])] == b"Title\n"
    one = b"Just a paragraph.\n\nAnother one.\n"
    assert len(_chunks("notes.txt", "runbook", one)) == 1


def test_troff_manual_sections() -> None:
    troff = (b".TH KILL 1\n.SH NAME\nkill \\- send a signal\n.SH DESCRIPTION\n"
             b"The default signal is TERM.\n.SS Notes\nx\n")
    chunks = _chunks("man/kill.1", "runbook", troff)
    assert [c.label for c in chunks] == ["", ".SH NAME", ".SH DESCRIPTION", ".SS Notes"]
    assert troff[slice(*chunks[-1].context[0])] == b".SH DESCRIPTION\n"
