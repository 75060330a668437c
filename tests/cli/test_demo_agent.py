"""``ctxbench demo agent`` on the fixture provider, end to end (the embedded-model run is
measured in benchmarks/RESULTS.md, "ctxbench demo agent")."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.cli.main import main
from ctxbench.core import iter_jsonl


def test_demo_agent_with_the_fixture_provider(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as info:
        main(["demo", "agent", "--output", str(out), "--fixture", "--tasks", "4"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "full_history: 4 of 4 tasks resolved (100%)" in text
    assert "verdict: CEF elide_tool_outputs vs full_history: " in text
    assert "verdict: public-eval compiled_history@350 vs full_history: " in text
    # ECEB judges the budgeted manager; the unbudgeted one is named with the reason.
    assert "verdict: ECEB compiled_history: 4/4 tasks qualified, mean token savings " in text
    assert "verdict: ECEB elide_tool_outputs: not evaluated: no budget" in text
    records = [i.value for i in iter_jsonl(out / "agent-trials.jsonl")]
    assert len(records) == 12
    assert {r["condition"] for r in records} == {"full_history", "elide_tool_outputs",
                                                 "compiled_history@350"}
    for name in ("cef-report.json", "cef-report.md", "report.html",
                 "public-eval-elide_tool_outputs.json", "eceb-report.json", "eceb-report.md"):
        assert (out / name).is_file()
    # A rerun resumes: nothing is sent again.
    with pytest.raises(SystemExit) as again:
        main(["demo", "agent", "--output", str(out), "--fixture", "--tasks", "4"])
    assert again.value.code == 0
    assert len(list(iter_jsonl(out / "agent-trials.jsonl"))) == 12
