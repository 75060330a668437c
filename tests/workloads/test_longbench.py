"""LongBench's metrics (hand-computed cases) and its JSONL loader's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.core import InputError
from ctxbench.workloads import LongBenchTask, load_longbench, score_longbench
from ctxbench.workloads.longbench import (
    classification_score,
    code_sim_score,
    count_score,
    qa_f1_score,
    retrieval_score,
    rouge_l_score,
)


def test_qa_f1() -> None:
    assert qa_f1_score("The Eiffel Tower, in Paris!", "eiffel tower") == pytest.approx(
        2 * (2 / 4) * 1 / (2 / 4 + 1))
    assert qa_f1_score("nothing", "eiffel tower") == 0.0


def test_rouge_l_by_hand() -> None:
    # LCS of "the cat sat on the mat" and "the cat lay on a mat" = the cat on mat (4).
    assert rouge_l_score("the cat sat on the mat", "The cat lay on a mat") == \
        pytest.approx(2 * (4 / 6) * (4 / 6) / (4 / 6 + 4 / 6))
    assert rouge_l_score("", "x") == 0.0


def test_classification_retrieval_count_code() -> None:
    classes = ["Location", "Human being", "Human", "Number"]
    assert classification_score("Human being", "Human being", classes) == 1.0
    assert classification_score("Location or Number", "Location", classes) == 0.5
    assert classification_score("Number", "Location", classes) == 0.0
    assert retrieval_score("Paragraph 12, not 3", "Paragraph 12") == 0.5
    assert retrieval_score("段落7", "段落7", chinese=True) == 1.0
    assert count_score("There are 4 unique paragraphs (4).", "4") == 1.0
    assert count_score("5 or 4", "4") == 0.5
    assert code_sim_score("```python\n# comment\nreturn x + 1\n", "return x + 1") == 1.0
    assert 0.0 < code_sim_score("return y", "return x + 1") < 1.0


def test_score_takes_the_best_gold_and_first_line_for_trec() -> None:
    task = LongBenchTask("t", "q", "c", ("Location",), "trec",
                         ("Location", "Number"))
    assert score_longbench(task, "Location\nNumber") == 1.0
    qa = LongBenchTask("q", "q", "c", ("nope", "port 8443"), "hotpotqa", ())
    assert score_longbench(qa, "port 8443") == 1.0


def _write(tmp_path: Path, row: dict[str, object]) -> Path:
    base = {"_id": "a", "input": "q", "context": "c", "answers": ["x"], "length": 1,
            "dataset": "qasper", "language": "en", "all_classes": None}
    base.update(row)
    path = tmp_path / "lb.jsonl"
    path.write_text(json.dumps(base) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("row", "message"), [
    ({"dataset": "nq"}, r"lb\.jsonl:1: dataset: expected a LongBench dataset name"),
    ({"answers": []}, r"lb\.jsonl:1: answers: expected an array of strings \(non-empty\)"),
    ({"dataset": "trec"}, r"lb\.jsonl:1: all_classes: expected the class names of trec"),
    ({"extra": 1}, r"lb\.jsonl:1: extra"),
])
def test_loader_errors(tmp_path: Path, row: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_longbench(_write(tmp_path, row))


def test_loader_reads_rows(tmp_path: Path) -> None:
    loaded = load_longbench(_write(tmp_path, {}))
    assert loaded.tasks == (LongBenchTask("a", "q", "c", ("x",), "qasper", ()),)
    assert loaded.version.startswith("blake3:")


_value = st.none() | st.booleans() | st.integers() | st.text(max_size=6) | \
    st.lists(st.text(max_size=4) | st.integers(), max_size=3)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["_id", "input", "context", "answers", "length",
                                        "dataset", "language", "all_classes", "other"]),
                       _value | st.sampled_from(["hotpotqa", "trec", "lcc"]), max_size=9))
def test_any_row_loads_or_fails_with_a_located_error(tmp_path: Path,
                                                     row: dict[str, object]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    try:
        loaded = load_longbench(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:1: ") or str(exc).startswith(f"{path}: ")
        return
    assert loaded.tasks[0].task_id == row["_id"]
