"""The fast cl100k_base counter equals tiktoken's encoder on real corpora and random text."""

from __future__ import annotations

import importlib
import importlib.metadata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxbench.compiler import bpe, cl100k_classes
from ctxbench.compiler.bpe import Cl100kCounter, Ranks, ascii_pieces, bpe_count, load_ranks, pieces
from ctxbench.compiler.tokenizers import (
    _CL100K_PATTERN,
    TiktokenTokenizer,
    get_tokenizer,
    reference_tokenizer,
)
from ctxbench.protocols.eceb import seed_paths

REPO = Path(__file__).resolve().parents[2]


_REFERENCE = TiktokenTokenizer()
_COUNTER = Cl100kCounter()


@pytest.fixture(scope="module")
def reference() -> TiktokenTokenizer:
    return _REFERENCE


@pytest.fixture(scope="module")
def counter() -> Cl100kCounter:
    return Cl100kCounter()


def _texts() -> list[tuple[str, str]]:
    """Every text file of the embedded seed, this repository's docs and sources, and the
    sources of two installed packages (click, jsonschema)."""
    paths = sorted(seed_paths().corpus.rglob("*"))
    paths += sorted((REPO / "docs").glob("*.md")) + sorted((REPO / "src").rglob("*.py"))
    for dist in ("click", "jsonschema"):
        files = importlib.metadata.distribution(dist).files or ()
        paths += sorted(Path(str(f.locate())) for f in files if str(f).endswith((".py", ".md")))
    out = []
    for path in paths:
        if path.is_file():
            try:
                out.append((str(path), path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue
    return out


def test_real_corpora_count_as_tiktoken(reference: TiktokenTokenizer,
                                        counter: Cl100kCounter) -> None:
    texts = _texts()
    assert len(texts) > 250
    wrong = [name for name, text in texts if counter.count(text) != reference.count(text)]
    assert wrong == []
    # Excerpts as packets hold them: line windows of each file, with a header and gaps.
    for name, text in texts[::7]:
        lines = text.splitlines(keepends=True)
        for start in range(0, len(lines), 37):
            part = f"## {name}\n" + "".join(lines[start:start + 9]) + "\u2026\n\n"
            assert counter.count(part) == reference.count(part), (name, start)


_ALPHABET = st.sampled_from(
    list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2003\u3000'\"!?.,;:-_=+*/\\()[]{}<>#@$%^&|~`"
         "abcXYZsdmtlvre0123456789\u00e9\u00df\u017f\u212a\u0130\u2026\u00b2\u00bd"
         "\u0663\u4e00\u4e8c\u3042\u0416\u05d0\U0001f600\u200d\ufe0f")
)


@settings(max_examples=400, deadline=None)
@given(st.text(_ALPHABET, max_size=120))
def test_random_text_from_tricky_alphabet(text: str) -> None:
    assert _COUNTER.count(text) == _REFERENCE.count(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
# Found by this test on a fresh clone: U+3D000 is a letter to the ``regex`` module's
# Unicode tables and unassigned to tiktoken's (5 tokens counted where tiktoken has 6).
@example("\U0003d000:A")
def test_random_unicode_text(text: str) -> None:
    assert _COUNTER.count(text) == _REFERENCE.count(text)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=200))
def test_ascii_transcription_splits_as_the_pattern(text: str) -> None:
    regex = importlib.import_module("regex")
    assert ascii_pieces(text) == regex.findall(_CL100K_PATTERN, text)
    assert "".join(pieces(text)) == text


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=1, max_size=400))
def test_merge_of_any_bytes_equals_tiktoken(data: bytes) -> None:
    # Long pieces go through the heap, short ones through the scan: both are tiktoken's rule.
    encoding = _REFERENCE._encoding
    assert bpe_count(data, load_ranks()) == len(encoding._encode_single_piece(data))


def test_long_pieces_and_contractions(reference: TiktokenTokenizer,
                                      counter: Cl100kCounter) -> None:
    for text in ("=" * 5000, " " * 3000 + "x", "a" * 4000, "ab1" * 900, "\n" * 700,
                 "I'll've", "'S 'LL 'Ve", "'\u017f", "x  \n", "\u2026\u2026\n\n##",
                 "\ud800 lone surrogate", "<|endoftext|> is text here"):
        assert counter.count(text) == reference.count(text), text


def test_ranks_cache_round_trip_and_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           ) -> None:
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(tmp_path))
    built = load_ranks()
    path = bpe._ranks_path()
    assert path.is_file()
    loaded = Ranks.from_bytes(path.read_bytes())
    assert loaded is not None and len(loaded) == len(built) == 100256
    tokens, ranks = bpe._parse_bundled()
    for token, rank in list(zip(tokens, ranks, strict=True))[::997]:
        assert loaded.get(token) == rank
    assert loaded.get(b"\xff\xfe not a token") is None
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0x01
    assert Ranks.from_bytes(bytes(raw)) is None  # the digest catches it
    path.write_bytes(bytes(raw))
    assert load_ranks().get(tokens[0]) == ranks[0]  # rebuilt from the bundled file
    assert Ranks.from_bytes(path.read_bytes()) is not None


def test_default_tokenizer_is_the_counter_and_recounts_use_tiktoken() -> None:
    assert isinstance(get_tokenizer("cl100k_base"), Cl100kCounter)
    assert isinstance(reference_tokenizer("cl100k_base"), TiktokenTokenizer)
    assert get_tokenizer("cl100k_base").id == reference_tokenizer("cl100k_base").id


# Each code point is counted between letters, digits, spaces, punctuation, newlines,
# contractions and combining marks: every branch of the pattern sees it.
_CONTEXTS = ("a{c}b", "{c}{c}1", " {c}", "x{c}\n", "{c}:A", "1{c}2", "'{c}", "{c}'s",
             "\n{c}\n", ". {c}!", "\t{c} ", "{c}\u0301", "\u00e9{c}", "{c} \n", "'{c}ll")


def _miscounted(points: list[int], contexts: tuple[str, ...] = _CONTEXTS) -> list[str]:
    """The (context, code point) pairs the counter counts unlike tiktoken; 512 points are
    compared at once ("|"-joined) and a batch that differs is searched point by point."""
    wrong = []
    for context in contexts:
        for start in range(0, len(points), 512):
            batch = points[start:start + 512]
            text = "|".join(context.format(c=chr(point)) for point in batch)
            if _COUNTER.count(text) == _REFERENCE.count(text):
                continue
            for point in batch:
                one = context.format(c=chr(point))
                if _COUNTER.count(one) != _REFERENCE.count(one):
                    wrong.append(f"{context!r} U+{point:04X}")
    return wrong


def test_character_classes_are_those_of_tiktokens_engine() -> None:
    # Every Unicode scalar value: the embedded tables are the installed tiktoken's.
    assert importlib.metadata.version("tiktoken") == cl100k_classes.TIKTOKEN_VERSION
    assert cl100k_classes._installed_version() == cl100k_classes.TIKTOKEN_VERSION
    assert cl100k_classes.classes() == cl100k_classes.derive()


def test_code_points_whose_class_other_unicode_tables_disagree_on() -> None:
    # The code points where the ``regex`` module's or Python's Unicode tables class a
    # character otherwise than tiktoken: the ones a transcription with \p{L} gets wrong.
    import unicodedata

    regex = importlib.import_module("regex")
    tables = cl100k_classes.classes()
    mine = {name: {p for first, last in ranges for p in range(first, last + 1)}
            for name, ranges in tables.items()}
    text = "".join(map(chr, (*range(0xD800), *range(0xE000, 0x110000))))
    theirs_letter = set(map(ord, regex.findall(r"\p{L}", text)))
    theirs_number = set(map(ord, regex.findall(r"\p{N}", text)))
    python_letter = {ord(c) for c in text if unicodedata.category(c)[0] == "L"}
    differ = sorted((mine["letter"] ^ theirs_letter) | (mine["number"] ^ theirs_number)
                    | (mine["letter"] ^ python_letter))
    assert len(differ) > 1000  # U+3D000 among them
    assert 0x3D000 in differ
    assert _miscounted(differ, _CONTEXTS[:6]) == []


@pytest.mark.slow
def test_every_code_point_counts_as_tiktoken() -> None:
    """Each Unicode scalar value in every context of ``_CONTEXTS`` (about 10 minutes)."""
    points = [p for p in range(0x110000) if not 0xD800 <= p < 0xE000]
    assert _miscounted(points) == []


def test_seed_packets_and_commits_equal_those_counted_by_tiktoken() -> None:
    """Every seed task at every ladder budget: the same packet bytes and commit whether
    the index counts with the fast counter or with tiktoken's encoder."""
    from ctxbench.compiler.corpus import Corpus
    from ctxbench.compiler.index import ContextIndex
    from ctxbench.compiler.policy import Policy
    from ctxbench.compiler.strategies import compile_context
    from ctxbench.protocols.eceb import load_benchmark

    paths = seed_paths()
    benchmark = load_benchmark(paths.benchmark)
    corpus = Corpus.from_benchmark(benchmark, paths.corpus)
    fast = ContextIndex.build(corpus, _COUNTER)
    slow = ContextIndex.build(corpus, _REFERENCE)
    compared = 0
    for task in benchmark.tasks:
        for budget in task.budget_ladder:
            for strategy in ("compiled", "naive_top_k"):
                a = compile_context(fast, query=task.query, budget=budget,
                                    policy=Policy.from_task(task), strategy=strategy)
                b = compile_context(slow, query=task.query, budget=budget,
                                    policy=Policy.from_task(task), strategy=strategy)
                assert (a.text, a.commit) == (b.text, b.commit), (task.task_id, budget)
                compared += 1
    assert compared >= 100
