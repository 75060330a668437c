"""Each trial line records its task's query and expected answer, and nothing restricted."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.core.jsonl import iter_jsonl
from ctxbench.runner.experiment import run_experiment

SEED = Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "enterprise-seed"


def _text(artifact: dict[str, str]) -> str:
    return (SEED / "corpus" / artifact["path"]).read_text(encoding="utf-8")


def test_seed_trials_hold_the_question_and_expected_answer_but_no_restricted_text(
        tmp_path: Path) -> None:
    spec = tmp_path / "seed.toml"
    spec.write_text(
        'name = "seed-query"\nseed = 3\nreplicates = 1\noutput = "out"\n\n'
        '[workload]\nsource = "builtin:enterprise-seed"\n\n'
        '[model]\nprovider = "fixture"\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [256]\n', encoding="utf-8")
    summary = run_experiment(spec)
    bench = json.loads((SEED / "benchmark.json").read_text(encoding="utf-8"))
    artifacts = bench["corpus"]["artifacts"]
    tasks = {t["task_id"]: t for t in bench["tasks"]}
    log = summary.output / "trials.jsonl"
    raws = log.read_text(encoding="utf-8").splitlines()
    lines = [(item.value, raws[item.line - 1]) for item in iter_jsonl(log)]
    assert {v["task_id"] for v, _ in lines} == set(tasks)
    abstaining = 0
    for value, raw in lines:
        task = tasks[value["task_id"]]
        # the user's question and what the scorer held the answer to, as the task has them
        assert value["query"] == task["query"]
        assert value["expected"] == {"answers": [], "answer_terms": task["answer_terms"],
                                     "abstention": task.get("expect_abstention", False)}
        abstaining += value["expected"]["abstention"]
        allowed = set(task["allowed_classifications"])
        denied = [a for a in artifacts if a["classification"] not in allowed
                  or a["artifact_id"] in task["denied_artifacts"]]
        kept = "\n".join(_text(a) for a in artifacts if a not in denied).lower()
        # every expected term is permitted text of this task, not only a denied artifact's
        assert all(t.lower() in kept for t in value["expected"]["answer_terms"])
        # markers: every line of 40+ characters that only a denied artifact holds
        markers = {line.strip() for a in denied for line in _text(a).splitlines()
                   if len(line.strip()) >= 40 and line.strip().lower() not in kept}
        assert markers, value["task_id"]  # the check is not vacuous
        # ... in the line as written, its strings as JSON escapes them or decoded
        decoded = json.dumps(value, ensure_ascii=False)
        assert not [m for m in markers if json.dumps(m)[1:-1] in raw or m in decoded]
    assert abstaining == 2  # the salary-band task, under both conditions
