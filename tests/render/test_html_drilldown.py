"""The run page's drill-down and the run diff, read from the HTML (no browser)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxbench.render.html import render_html, write_html
from render.drill_runs import make_run, rewrite_trial

HOSTILE = ('</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
           "<!-- &amp; \u2028 ]]>")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("drill")
    return make_run(base / "a"), make_run(base / "b", moved=True)


def _data(page: str) -> list[dict[str, Any]]:
    blocks = re.findall(r'<script type="application/json" class="dd-data">(.*?)</script>',
                        page, flags=re.S)
    return [json.loads(b) for b in blocks]


def _packet_texts(page: str) -> list[str]:
    blocks = re.findall(r'<script type="application/json" class="dd-pk">(.*?)</script>',
                        page, flags=re.S)
    return [json.loads(b) for b in blocks]


def _line(trials: list[dict[str, Any]], task: str, condition: str, replicate: int) -> int:
    return next(k + 1 for k, t in enumerate(trials) if t["task_id"] == task
                and t["condition"] == condition and t["replicate"] == replicate)


def _trials(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "trials.jsonl").read_text("utf-8").splitlines()]


def test_every_pair_with_its_trials_and_packets(runs: tuple[Path, Path], tmp_path: Path
                                               ) -> None:
    run = runs[0]
    page = write_html([run], tmp_path / "run.html").read_text(encoding="utf-8")
    (data,) = _data(page)
    trials = _trials(run)
    assert [t[0] for t in data["trials"]] == list(range(1, len(trials) + 1))
    # 12 tasks x 2 replicates x 2 candidate conditions against the baseline
    assert len(data["pairs"]) == 48
    assert data["baseline"] == "full_permitted_context" and data["conditions"][0] == \
        "full_permitted_context"
    lost = [p for p in data["pairs"] if p[3] == 0]
    assert len(lost) == 8
    for _, b, c, _ in lost:
        assert trials[b]["task_score"] == 1.0 and trials[c]["task_score"] == 0.0
        assert trials[b]["task_id"] == trials[c]["task_id"]
        assert trials[b]["replicate"] == trials[c]["replicate"]
    # each packet once, the store's bytes, the one each trial names
    shas = {t["context_sha256"] for t in trials}
    assert sorted(p[0] for p in data["packets"]) == sorted(shas)
    texts = _packet_texts(page)
    assert len(texts) == len(shas)
    for sha, block, kept in data["packets"]:
        assert texts[block] == (run / "packets" / f"{sha}.txt").read_text(encoding="utf-8")
        assert kept == 1
    for k, t in enumerate(trials):
        assert data["packets"][data["trials"][k][15]][0] == t["context_sha256"]
        assert data["texts"][data["trials"][k][7]] == t["response_text"]
    assert "baseline right, candidate wrong" in page  # 0/1 scores read as right and wrong
    # the script runs by its hash only
    script = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(script) == 1
    digest = base64.b64encode(hashlib.sha256(script[0].encode("utf-8")).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in page and "unsafe-eval" not in page


def test_without_script_the_discordant_pairs_are_listed(runs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    page = render_html([runs[0]], tmp_path / "run.html")
    static = page[page.index("<noscript>"):page.index("</noscript>")]
    assert ("truncate-head@150 vs full_permitted_context: discordant pairs (all 8 listed)"
            in static)
    assert "compiled@150 vs full_permitted_context: discordant pairs (all 0 listed)" in static
    assert static.count("<details id=\"trial-") == 8
    # truncate-head keeps the tail: the tasks whose answer is first are lost
    assert "Service 0 listens on port 8000." in static
    assert "q0 replicate 1: baseline right, candidate wrong, task score 1.0 \u2192 0.0" in static


def test_a_packet_not_in_the_store_says_so(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for name in ("trials.jsonl", "manifest.json", "cef-report.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    page = render_html([run], tmp_path / "run.html")  # an imported log: no packet store
    (data,) = _data(page)
    assert all(block == -1 and kept == 0 for _, block, kept in data["packets"])
    assert "packet not kept (sha256 <code>" in page


def test_hostile_strings_stay_text(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "packets").mkdir(parents=True)
    for name in ("trials.jsonl", "manifest.json", "cef-report.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    trials = _trials(run)
    # a lost pair's candidate (listed without script too) answers with markup
    line = next(k + 1 for k, t in enumerate(trials) if t["condition"] == "truncate-head@150"
                and t["task_id"] == "q0" and t["replicate"] == 0)
    rewrite_trial(run, line, response_text=HOSTILE,
                  response_sha256=hashlib.sha256(HOSTILE.encode("utf-8")).hexdigest(),
                  query=HOSTILE, expected={"answers": [HOSTILE], "answer_terms": [HOSTILE],
                                           "abstention": False},
                  scorer_details={"method": HOSTILE, HOSTILE: [HOSTILE],
                                  "constructor": "x"})
    for sha in {t["context_sha256"] for t in trials}:
        (run / "packets" / f"{sha}.txt").write_text(HOSTILE, encoding="utf-8")
    page = render_html([run], tmp_path / "run.html")
    scripts = 2 + len(_packet_texts(page))  # the data, the program, one block per packet
    assert page.count("<script") == scripts and "<img" not in page and "<!-- " not in page
    assert "window.pwned" in page  # shown, as text
    (data,) = _data(page)
    assert HOSTILE in data["texts"] and set(_packet_texts(page)) == {HOSTILE}
    assert "&lt;/script&gt;&lt;script&gt;window.pwned=1" in page  # the static listing


def test_a_run_being_written_shows_its_finished_trials(runs: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for name in ("trials.jsonl", "manifest.json", "cef-report.json"):
        (run / name).write_bytes((runs[0] / name).read_bytes())
    with (run / "trials.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"schema_version": "ctxbench.trial.v1", "workl')
    page = render_html([run], tmp_path / "run.html")
    assert "the run is going on, and that trial is not shown yet" in page
    assert len(_data(page)[0]["trials"]) == len(_trials(runs[0]))


def test_report_files_carry_no_script(runs: tuple[Path, Path], tmp_path: Path) -> None:
    page = render_html([runs[0] / "cef-report.json"], tmp_path / "r.html")
    assert "<script" not in page and "script-src" not in page


def test_two_runs_give_a_diff_of_the_same_tasks(runs: tuple[Path, Path], tmp_path: Path
                                                ) -> None:
    page = render_html(list(runs), tmp_path / "diff.html")
    diff = page[page.index('id="diff"'):page.index('id="r1-top"')]
    text = " ".join(re.sub(r"<[^>]+>", " ", diff).split()).replace(" ,", ",")
    assert "Tasks in both runs 12" in text and "Tasks only in A 0" in text
    # truncate-head keeps the tail: in B every answer is first, so q1, q4, q7, q10 (answer
    # last in A) are lost; the decoy of q2, q5, q8, q11 is gone, so their baseline is right
    for task in ("q1", "q4", "q7", "q10"):
        assert f"{task} truncate-head@150 score down 1.0, 1.0 0.0, 0.0" in text
    for task in ("q2", "q5", "q8", "q11"):
        assert f"{task} full_permitted_context score up 0.0, 0.0 1.0, 1.0" in text
    assert "Run diff: 4 (task, condition) cells score lower in B, 8 higher" in text
    # each score links to its trial in that run's drill-down
    a, b = _trials(runs[0]), _trials(runs[1])
    line_a = next(k + 1 for k, t in enumerate(a) if t["task_id"] == "q1"
                  and t["condition"] == "truncate-head@150" and t["replicate"] == 0)
    assert f'<a href="#r1-trial-{line_a}">1.0</a>' in diff
    assert len(_data(page)) == 2 and [d["prefix"] for d in _data(page)] == ["r1-", "r2-"]
    assert len(b) == len(a)


def test_packets_over_the_page_budget_link_to_their_files(
        runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.render.html import drilldown

    run = runs[0]
    sizes = sorted((p.stat().st_size for p in (run / "packets").iterdir()), reverse=True)
    monkeypatch.setattr(drilldown, "INLINE_PACKET_BYTES", sizes[0])  # room for one
    out = tmp_path / "site" / "run.html"
    page = render_html([run], out)
    (data,) = _data(page)
    assert len(_packet_texts(page)) == 1
    linked = [sha for sha, block, kept in data["packets"] if block == -1]
    assert len(linked) == len(data["packets"]) - 1
    for sha in linked:  # the link the script builds, relative to the page
        assert (out.parent / (data["packetBase"] + sha + ".txt")).resolve() == \
            (run / "packets" / f"{sha}.txt").resolve()


def test_query_expected_answer_and_scorer_details_are_shown_in_their_fields(
        runs: tuple[Path, Path], tmp_path: Path) -> None:
    run = runs[0]
    page = render_html([run], tmp_path / "run.html")
    (data,) = _data(page)
    trials = _trials(run)
    line = _line(trials, "q0", "truncate-head@150", 0)
    row, texts = data["trials"][line - 1], data["texts"]
    assert texts[row[17]] == "Which port does service 0 use?"
    answers, terms, abstain = data["expected"][row[18]]
    assert ([texts[i] for i in answers], terms, abstain) == (
        ["Service 0 listens on port 8000."], [], 0)
    details = {texts[k]: texts[v] if isinstance(v, int) else [texts[i] for i in v]
               for k, v in data["details"][row[19]]}
    assert details == trials[line - 1]["scorer_details"]
    assert details["method"] == "exact_match"
    chosen = [data["artifacts"][i] for i in data["selected"][row[20]]]
    assert chosen == [[a["artifact_id"], a["blake3"]]
                      for a in trials[line - 1]["selected_artifacts"]]
    assert row[16] == -1  # nothing the format does not know: no member shown as written
    # without script: the pair's query and expected answer once, the scorer's fields
    static = page[page.index("<noscript>"):page.index("</noscript>")]
    pair = static[static.index(f'<details id="trial-{line}">'):]
    pair = pair[:pair.index("</details>")]
    assert ('<dl class="dd-task"><dt>query</dt><dd><pre>Which port does service 0 use?'
            "</pre></dd><dt>expected answers</dt><dd><ul class=\"dd-list\"><li>Service 0 "
            "listens on port 8000.</li></ul></dd><dt>abstention expected</dt><dd>no</dd>"
            "</dl>") in pair
    assert pair.count("<dt>scoring method</dt><dd>exact_match</dd>") == 2
    assert pair.count("<dt>evidence required</dt>") == 2
    assert pair.count("<dt>selected artifacts</dt>") == 2
    assert "scorer_details" not in pair and "<dt>query</dt>" not in pair.split("dd-pair")[1]


def test_a_line_without_the_members_says_they_are_not_recorded(
        runs: tuple[Path, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    lines = (run / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    members = ("query", "expected", "scorer_details", "selected_artifacts", "rendered_blake3")
    old = [json.dumps({k: v for k, v in json.loads(x).items() if k not in members})
           for x in lines]
    (run / "trials.jsonl").write_text("\n".join(old) + "\n", encoding="utf-8")
    page = render_html([run], tmp_path / "run.html")
    (data,) = _data(page)
    assert all(row[17:] == [-1, -1, -1, -1] for row in data["trials"])
    static = page[page.index("<noscript>"):page.index("</noscript>")]
    note = "not recorded (the trial line predates the member)"
    assert f"<dt>query</dt><dd>{note}</dd><dt>expected answer</dt><dd>{note}</dd>" in static
    assert f"<dt>scorer details</dt><dd>{note}</dd>" in static


def test_members_a_newer_runner_records_are_shown_as_written(
        runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.render.html import trials as trials_module

    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    line = _line(_trials(run), "q0", "truncate-head@150", 0)
    notes = {"rubric": ["port number"], "grader": "v2"}
    rewrite_trial(run, line, grader_notes=notes, review="<b>checked</b>")
    from ctxbench.protocols.cef.records import parse_trial as original

    known = trials_module._KNOWN

    def newer(obj: dict[str, Any], **kw: Any) -> Any:  # a reader that knows the members
        return original({k: v for k, v in obj.items() if k in known}, **kw)

    monkeypatch.setattr(trials_module, "parse_trial", newer)
    page = render_html([run], tmp_path / "run.html")
    (data,) = _data(page)
    row = data["trials"][line - 1]
    # only the members the format does not know, as written; the known ones in their fields
    extras = json.loads(data["texts"][row[16]])
    assert extras == [["grader_notes", json.dumps(notes, separators=(",", ":"))],
                      ["review", '"<b>checked</b>"']]
    assert data["texts"][row[17]] == "Which port does service 0 use?"
    static = page[page.index("<noscript>"):page.index("</noscript>")]
    assert "<dt>grader_notes</dt>" in static and "&lt;b&gt;checked" in static
    assert "<dt>scorer_details</dt>" not in static and "<dt>query</dt>" in static
