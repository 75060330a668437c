"""Every Markdown file a run writes is exactly the rendering of the JSON report beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.render.markdown import render_markdown
from ctxbench.runner.experiment import run_experiment
from ctxbench.schemas import validator

SCHEMAS = {"cef-report.json": "ctxbench.cef-report.v1",
           "eceb-report.json": "symgliph.eceb/report-v0.1"}


def test_every_markdown_a_run_writes_is_render_of_its_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "exp.toml").write_text(
        'name = "seed"\nseed = 3\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 2\n'
        '[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n', encoding="utf-8")
    run_experiment(tmp_path / "exp.toml")
    out = tmp_path / "out"
    markdown = sorted(out.glob("*.md"))
    assert [p.name for p in markdown] == ["cef-report.md", "eceb-report.md"]
    for md in markdown:
        report = json.loads(md.with_suffix(".json").read_text(encoding="utf-8"))
        assert md.read_text(encoding="utf-8") == render_markdown(report)
        # the fixture run's label is carried by the JSON itself, and the schema allows it
        assert report["notes"][0].startswith("conformance fixture")
        assert md.read_text(encoding="utf-8").startswith(f"> **{report['notes'][0]}**\n")
        errors = [e.message for e in validator(SCHEMAS[md.with_suffix('.json').name])
                  .iter_errors(report)]
        assert errors == []
        # `ctxbench cef render` / `ctxbench eceb render` write the same Markdown (the
        # report's name appears in its reproduce line, so render it under that name)
        folder = tmp_path / f"cli-{md.stem}"
        folder.mkdir()
        (folder / "report.json").write_bytes(md.with_suffix(".json").read_bytes())
        monkeypatch.chdir(folder)
        protocol = md.name.split("-")[0]
        assert run_guarded(cli, [protocol, "render", "report.json", "--output",
                                 "report.md"]) == 0
        assert (folder / "report.md").read_text(encoding="utf-8") == \
            md.read_text(encoding="utf-8")


def test_report_without_notes_renders_as_the_protocol_renderer(tmp_path: Path) -> None:
    from ctxbench.core.node import Node
    from ctxbench.protocols.cef.model import CefReport
    from ctxbench.render.cef import render_markdown as cef_markdown

    golden = Path(__file__).parents[1] / "golden" / "cef-two-stratum" / "report.json"
    report = json.loads(golden.read_text(encoding="utf-8"))
    assert "notes" not in report
    model = CefReport.from_json(Node(str(golden), "", report))
    assert render_markdown(report) == cef_markdown(model)
    noted = {**report, "notes": ["first", "second"]}
    assert render_markdown(noted) == "> **first**\n> **second**\n\n" + cef_markdown(model)
