"""More budget never loses evidence, and no gap marker stands for a line or two of it.

A ``compiled`` packet at a budget above ``SEED_BASE`` starts from the packet of the ladder
step below it (``SEED_BASE * 2**k``), so every byte a ladder budget's packet holds is held
at every larger budget; a gap between two kept ranges of a file whose text costs at most
the gap marker plus ``BRIDGE_TOKENS`` is filled rather than marked.
"""

from __future__ import annotations

import importlib
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact, Policy, get_tokenizer
from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.fill import BRIDGE_TOKENS, bridge, small_gap
from ctxbench.compiler.selection import SEED_BASE, Draft, Selection, select_compiled
from ctxbench.core import blake3_hex
from ctxbench.protocols.eceb import seed_paths

LEVELS = (128, 256, 512, 1024, 2048)
DEVSETS = Path(__file__).resolve().parents[2] / "benchmarks" / "devsets"


def _held(selection: Selection) -> dict[str, set[int]]:
    return {e.artifact_id: {i for a, b in e.ranges for i in range(a, b)}
            for e in selection.excerpts}


def _lost(index: ContextIndex, policy: Policy, query: str, small: int, large: int
          ) -> list[str]:
    """Artifact ids whose bytes the packet at ``small`` holds and the one at ``large`` not."""
    a = _held(select_compiled(index, policy, query, small))
    b = _held(select_compiled(index, policy, query, large))
    return [art for art, held in a.items() if not held <= b.get(art, set())]


@pytest.fixture(scope="module")
def seed() -> tuple[list[tuple[str, Policy]], ContextIndex]:
    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus)
    return [(t.query, Policy.from_task(t)) for t in benchmark.tasks], index


def test_seed_packets_keep_all_evidence_up_the_ladder(
        seed: tuple[list[tuple[str, Policy]], ContextIndex]) -> None:
    tasks, index = seed
    for query, policy in tasks:
        for small, large in pairwise(LEVELS):
            assert _lost(index, policy, query, small, large) == [], (query, small, large)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_any_budget_holds_every_ladder_step_below_it(
        seed: tuple[list[tuple[str, Policy]], ContextIndex], data: st.DataObject) -> None:
    tasks, index = seed
    query, policy = data.draw(st.sampled_from(tasks))
    budget = data.draw(st.integers(SEED_BASE + 1, 3000))
    packet = select_compiled(index, policy, query, budget)
    assert packet.token_count <= budget
    held = _held(packet)
    for level in (x for x in LEVELS if x < budget):
        below = _held(select_compiled(index, policy, query, level))
        assert all(b <= held.get(art, set()) for art, b in below.items()), (query, level)
    assert select_compiled(index, policy, query, budget) == packet  # deterministic


def test_dev_corpus_packets_keep_all_evidence_up_the_ladder(tmp_path: Path) -> None:
    sys.path.insert(0, str(DEVSETS))
    try:
        devset = importlib.import_module("devset")
    finally:
        sys.path.remove(str(DEVSETS))
    try:  # the corpus where a 512-token packet once held an answer the 1024 one lost
        devset.build(tmp_path, ["dev-schema"])
    except (SystemExit, FileNotFoundError, OSError) as exc:
        pytest.skip(f"the pinned dev-schema packages are not installed here: {exc}")
    benchmark, index = benchmark_index(tmp_path / "dev-schema" / "benchmark.json",
                                       tmp_path / "dev-schema" / "corpus")
    for task in benchmark.tasks:
        policy = Policy.from_task(task)
        for small, large in pairwise(LEVELS):
            assert _lost(index, policy, task.query, small, large) == [], (task.task_id, small)


def _one_file(tmp_path: Path, text: str) -> ContextIndex:
    data = text.encode("utf-8")
    (tmp_path / "opts.md").write_bytes(data)
    corpus = Corpus(tmp_path, (CorpusArtifact("o1", "opts.md", "doc", "public",
                                              blake3_hex(data)),), "test")
    return ContextIndex.build(corpus, get_tokenizer())


TEXT = ("## worker idle timeout\n"
        "timeout: 30\n"
        "units: seconds\n"
        "Threads idle longer than this are reclaimed by the pool and started again later.\n"
        + "".join(f"unrelated line {n} about something else entirely\n" for n in range(40)))


def test_a_small_gap_under_a_heading_is_filled_not_marked(tmp_path: Path) -> None:
    index = _one_file(tmp_path, TEXT)
    data = index.source(0)
    heading = (0, data.index(b"timeout: 30"))
    window = (data.index(b"Threads"), data.index(b"unrelated line 0"))
    assert small_gap(index, data, (heading[1], window[0]))  # the two evidence lines
    draft = Draft(index, 400)
    assert draft.add(0, (heading,)) and draft.add(0, (window,))
    assert draft.packet.ranges[0] == ((0, window[1]),)
    packet = draft.finish("nothing was selected")
    assert "\u2026" not in packet.text and "timeout: 30\nunits: seconds\n" in packet.text


def test_bridge_fills_a_small_gap_of_a_finished_packet_and_keeps_a_large_one(
        tmp_path: Path) -> None:
    index = _one_file(tmp_path, TEXT)
    data = index.source(0)
    heading = (0, data.index(b"timeout: 30"))
    window = (data.index(b"Threads"), data.index(b"unrelated line 0"))
    far = (data.index(b"unrelated line 30"), data.index(b"unrelated line 31"))
    draft = Draft(index, 400)
    packet = draft.packet
    packet.order, packet.ranges = [0], {0: (heading, window, far)}
    assert bridge(packet)
    assert packet.ranges[0] == ((0, window[1]), far)  # 29 lines are more than a marker
    assert not small_gap(index, data, (window[1], far[0]))
    assert BRIDGE_TOKENS > 0


def test_a_lone_packet_equals_the_one_built_up_the_ladder(
        seed: tuple[list[tuple[str, Policy]], ContextIndex]) -> None:
    """The steps of a lone packet share one ranking and one weighing of each candidate's
    lines; what they select is what a ladder compiled budget by budget selects."""
    from ctxbench.compiler import selection
    from ctxbench.compiler.ladder import StepMemo

    tasks, index = seed
    for query, policy in tasks[:6]:
        selection._STEPS = StepMemo()
        lone = select_compiled(index, policy, query, 2048)
        selection._STEPS = StepMemo()
        for budget in LEVELS:
            stepped = select_compiled(index, policy, query, budget)
        assert (stepped.text, stepped.token_count) == (lone.text, lone.token_count)


def test_chunk_names_are_what_the_chunk_text_names(
        seed: tuple[list[tuple[str, Policy]], ContextIndex]) -> None:
    from ctxbench.compiler.evidence import names_in

    _, index = seed
    for chunk_id, chunk in enumerate(index.chunks[:50]):
        data = index.source(int(index.chunk_artifact[chunk_id]))
        assert index.chunk_names(chunk_id) == names_in(data, chunk.start, chunk.end)
