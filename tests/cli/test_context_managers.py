"""``ctxbench context-managers`` lists the built-in managers and a third party's, with
where each came from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.cli.main import cli
from ctxbench.compiler.context_managers import discovery


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    site = tmp_path / "site"
    info = site / "cm_listed-2.0.dist-info"
    info.mkdir(parents=True)
    (site / "cm_listed.py").write_text(
        'def keep_all(request):\n    """every message, listed"""\n    return request.messages\n',
        encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cm-listed\nVersion: 2.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ctxbench.context_managers]\nkeep-all = cm_listed:keep_all\n"
        "Bad_Name = cm_listed:keep_all\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()
    yield
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()


def test_lists_builtins_and_entry_points_with_their_source(third_party: None) -> None:
    result = CliRunner().invoke(cli, ["context-managers"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()}
    assert set(discovery.BUILTIN) < set(lines)
    full = lines["full_history"].split()
    assert full[1:4] == ["built-in", "ctxbench", full[3]]
    assert "builtins:FULL_HISTORY" in lines["full_history"]
    assert " no " in lines["full_history"] and " yes " in lines["last_k_turns"]
    listed = lines["keep-all"]
    assert listed.split()[1:5] == ["entry", "point", "cm-listed", "2.0"]
    assert "cm_listed:keep_all" in listed and "every message, listed" in listed
    assert "UNUSABLE: the name is not a slug" in lines["Bad_Name"]
