"""``longbench``: LongBench's JSONL rows and its per-dataset metrics, reimplemented.

Rows have LongBench's fields (``input``, ``context``, ``answers``, ``length``,
``dataset``, ``language``, ``all_classes``, ``_id``); the permitted context of a task is
its ``context`` (documents). The metric is chosen by ``dataset`` as LongBench's
``dataset2metric`` does, and the score of an answer is its best score over the gold
answers; for trec, triviaqa, samsum and lsht only the answer's first line is scored.

Metrics (THUDM/LongBench ``metrics.py`` semantics):

- ``qa_f1``: SQuAD normalization (lower case, drop punctuation and articles), token F1.
- ``rouge_l``: ROUGE-L F1 (Lin 2004; beta = 1) of the longest common subsequence of
  lower-cased whitespace tokens, computed here directly. LongBench calls the ``rouge``
  package, whose tokenization differs in details (it keeps punctuation attached to
  words the same way, but splits sentences); figures can differ from it slightly.
- ``classification``: the classes of ``all_classes`` found in the answer, less those
  that are only part of the gold class; 1/len(found) when the gold class is among them.
- ``retrieval``: the share of numbers in the answer equal to the gold ``Paragraph N``
  (``段落N`` for Chinese).
- ``count``: the share of numbers in the answer equal to the gold count.
- ``code_sim``: the first answer line that is not a comment or a fence, compared with
  the gold by ``difflib.SequenceMatcher`` ratio rounded to a percent (fuzzywuzzy's
  ``fuzz.ratio`` without python-Levenshtein).

Datasets scored with Chinese word segmentation (multifieldqa_zh, dureader, vcsum use
jieba) are refused at load time rather than scored differently.
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import Fields, InputError, blake3_file, iter_jsonl

__all__ = ["DATASET_METRICS", "LONGBENCH_FIELDS", "LongBenchTask", "LongBenchWorkload",
           "classification_score", "code_sim_score", "count_score", "load_longbench",
           "qa_f1_score", "retrieval_score", "rouge_l_score", "score_longbench"]

LONGBENCH_FIELDS = ("_id", "input", "context", "answers", "length", "dataset", "language",
                    "all_classes")

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NUMBER = re.compile(r"\d+")
_FIRST_LINE_ONLY = ("trec", "triviaqa", "samsum", "lsht")
_JIEBA = ("multifieldqa_zh", "dureader", "vcsum")


@dataclass(frozen=True, slots=True)
class LongBenchTask:
    """One LongBench row."""

    task_id: str
    query: str
    context: str
    answers: tuple[str, ...]
    dataset: str
    all_classes: tuple[str, ...]

    permitted = "documents"


def _normalize(text: str) -> str:
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


def qa_f1_score(prediction: str, gold: str) -> float:
    """Token F1 after SQuAD normalization."""
    pred, ref = _normalize(prediction).split(), _normalize(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l_score(prediction: str, gold: str) -> float:
    """ROUGE-L F1 over lower-cased whitespace tokens (0.0 when either side is empty)."""
    pred, ref = prediction.lower().split(), gold.lower().split()
    if not pred or not ref:
        return 0.0
    common = _lcs(pred, ref)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def classification_score(prediction: str, gold: str, all_classes: Sequence[str]) -> float:
    """1/len(matched classes) when the gold class is matched, else 0.0."""
    found = [c for c in all_classes if c in prediction]
    found = [c for c in found if not (c in gold and c != gold)]
    return 1.0 / len(found) if gold in found else 0.0


def retrieval_score(prediction: str, gold: str, *, chinese: bool = False) -> float:
    """Share of numbers in the answer that name the gold paragraph."""
    match = re.findall(r"段落(\d+)" if chinese else r"Paragraph (\d+)", gold)
    if not match:
        return 0.0
    numbers = _NUMBER.findall(prediction)
    return sum(1 for n in numbers if n == match[0]) / len(numbers) if numbers else 0.0


def count_score(prediction: str, gold: str) -> float:
    """Share of numbers in the answer equal to the gold count."""
    numbers = _NUMBER.findall(prediction)
    return sum(1 for n in numbers if n == gold) / len(numbers) if numbers else 0.0


def code_sim_score(prediction: str, gold: str) -> float:
    """Similarity of the first code line of the answer to the gold line, in [0, 1]."""
    line = next((ln for ln in prediction.lstrip("\n").split("\n")
                 if "`" not in ln and "#" not in ln and "//" not in ln), "")
    return round(100 * difflib.SequenceMatcher(None, line, gold).ratio()) / 100


Metric = Callable[[str, str, Sequence[str]], float]

DATASET_METRICS: dict[str, tuple[str, Metric]] = {
    **{name: ("qa_f1", lambda p, g, c: qa_f1_score(p, g)) for name in (
        "narrativeqa", "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique",
        "triviaqa")},
    **{name: ("rouge_l", lambda p, g, c: rouge_l_score(p, g)) for name in (
        "gov_report", "qmsum", "multi_news", "samsum")},
    "trec": ("classification", classification_score),
    "lsht": ("classification", classification_score),
    "passage_retrieval_en": ("retrieval", lambda p, g, c: retrieval_score(p, g)),
    "passage_retrieval_zh": ("retrieval", lambda p, g, c: retrieval_score(p, g,
                                                                           chinese=True)),
    "passage_count": ("count", lambda p, g, c: count_score(p, g)),
    "lcc": ("code_sim", lambda p, g, c: code_sim_score(p, g)),
    "repobench-p": ("code_sim", lambda p, g, c: code_sim_score(p, g)),
}


def score_longbench(task: LongBenchTask, answer: str) -> float:
    """The task's dataset metric, best over its gold answers (LongBench's ``scorer``)."""
    _, metric = DATASET_METRICS[task.dataset]
    if task.dataset in _FIRST_LINE_ONLY:
        answer = answer.lstrip("\n").split("\n")[0]
    return max((metric(answer, gold, task.all_classes) for gold in task.answers),
               default=0.0)


@dataclass(frozen=True, slots=True)
class LongBenchWorkload:
    """A LongBench JSONL file's tasks and its scorer."""

    name: str
    version: str
    tasks: tuple[LongBenchTask, ...]

    def score(self, task: LongBenchTask, answer: str) -> float:
        return score_longbench(task, answer)


def _strings(f: Fields, field: str, *, allow_empty: bool) -> tuple[str, ...]:
    value = f.value.get(field)
    if value is None and allow_empty:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or \
            (not value and not allow_empty):
        f.fail(field, "an array of strings" + ("" if allow_empty else " (non-empty)"), value)
    assert isinstance(value, list)
    return tuple(value)


def load_longbench(path: Path, *, limit: int | None = None) -> LongBenchWorkload:
    """Read a LongBench JSONL file; every row's ``dataset`` must have a supported metric."""
    tasks: list[LongBenchTask] = []
    seen: set[str] = set()
    for item in iter_jsonl(path):
        if not isinstance(item.value, dict):
            raise InputError(f"{path}:{item.line}: expected a JSON object")
        f = Fields(item.value, path=str(path), line=item.line)
        f.only(LONGBENCH_FIELDS)
        task_id = f.req_string("_id")
        if task_id in seen:
            f.fail("_id", "an id used by no earlier line", task_id)
        seen.add(task_id)
        dataset = f.req_string("dataset")
        if dataset in _JIEBA:
            f.fail("dataset", "a dataset whose metric needs no Chinese word segmentation "
                   f"({', '.join(_JIEBA)} need jieba)", dataset)
        if dataset not in DATASET_METRICS:
            f.fail("dataset", "a LongBench dataset name (" + ", ".join(DATASET_METRICS) + ")",
                   dataset)
        classes = _strings(f, "all_classes", allow_empty=True)
        if DATASET_METRICS[dataset][0] == "classification" and not classes:
            f.fail("all_classes", f"the class names of {dataset} (a non-empty array)",
                   item.value.get("all_classes"))
        tasks.append(LongBenchTask(
            task_id=task_id, query=f.req_string("input", nonblank=False),
            context=f.req_string("context", nonblank=False),
            answers=_strings(f, "answers", allow_empty=False), dataset=dataset,
            all_classes=classes))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise InputError(f"{path}: expected at least one task, got an empty file")
    return LongBenchWorkload(name=path.stem, version="blake3:" + blake3_file(path),
                             tasks=tuple(tasks))
