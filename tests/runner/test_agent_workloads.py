"""An agent workload installed as a separate package (its tools real Python functions)
runs from ``[workload] format = "<its name>"`` with no change to ctxbench; what a bad one
returns is a located error before any trial."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.run import run as run_command
from ctxbench.core import InputError, iter_jsonl
from ctxbench.runner.agent_workloads import (
    agent_workload_names,
    is_agent_workload,
    load_agent_workload,
)
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.workload_formats import WORKLOADS, workload_format, workload_format_names

PLUGIN = '''
from pathlib import Path
from ctxbench.workloads.agent import AgentTask
from ctxbench.workloads.tools import ToolSchema

DISKS = {"web-07": 41, "db-02": 87}

def disk_usage(host):
    host = str(host).strip().lower()
    if host not in DISKS:
        raise KeyError(f"no host {host!r}")
    return f"Disk usage report\\nThe disk usage of host {host} is {DISKS[host]} percent."

TOOL = ToolSchema("disk_usage", "Report the disk usage of a host.",
                  {"type": "dict", "properties": {"host": {"type": "string"}},
                   "required": ["host"]})

class OpsTasks:
    kind = "agent"

    def workload_name(self, source):
        return "ops-" + source

    def load(self, source, limit, spec_dir):
        assert isinstance(spec_dir, Path)
        tasks = [AgentTask(f"disk-{h}", "Answer with one function call.",
                           f"What is the disk usage of host '{h}'?", (TOOL,),
                           {"disk_usage": disk_usage}, str(p), (f"is {p} percent",))
                 for h, p in DISKS.items()]
        return source.upper(), tasks[:limit]

class NotTasks:
    kind = "agent"
    def load(self, source, limit, spec_dir):
        return "1", [{"id": "x"}]

class NoFunction:
    kind = "agent"
    def load(self, source, limit, spec_dir):
        return "1", [AgentTask("t", "s", "p", (TOOL,), {}, "a")]

class Raises:
    kind = "agent"
    def load(self, source, limit, spec_dir):
        raise ZeroDivisionError("the loader divided by zero")

class Blank:
    kind = "agent"
    def load(self, source, limit, spec_dir):
        return "", []
'''
ENTRIES = {"ops-tasks": "OpsTasks", "not-tasks": "NotTasks", "no-function": "NoFunction",
           "raises": "Raises", "blank": "Blank"}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "site"
    info = root / "ops_agent_tasks-1.0.dist-info"
    info.mkdir(parents=True)
    (root / "ops_agent_tasks.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ops-agent-tasks\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[ctxbench.workloads]\n" + "".join(
        f"{name} = ops_agent_tasks:{target}\n" for name, target in ENTRIES.items()),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    WORKLOADS.clear()
    yield tmp_path
    WORKLOADS.clear()


def _spec(folder: Path, fmt: str) -> Path:
    path = folder / "ops.toml"
    path.write_text(f'name = "ops"\nseed = 0\nreplicates = 1\noutput = "out"\n\n'
                    f'[workload]\nformat = "{fmt}"\nsource = "fleet"\nlimit = 1\n\n'
                    '[model]\nprovider = "fixture"\n\n'
                    '[[conditions]]\nname = "full"\nmanager = "full_history"\n\n'
                    '[[conditions]]\nname = "elided"\nmanager = "elide_tool_outputs"\n',
                    encoding="utf-8")
    return path


def test_a_registered_agent_workload_runs_from_its_name(site: Path) -> None:
    assert agent_workload_names()[0] == "agent"
    assert "ops-tasks" in agent_workload_names()
    assert "ops-tasks" not in workload_format_names()
    assert is_agent_workload("ops-tasks") and not is_agent_workload("eceb")
    assert not is_agent_workload("nothing-of-that-name")
    summary = run_experiment(_spec(site, "ops-tasks"))
    assert (summary.completed, summary.skipped) == (2, 0)
    trials = [i.value for i in iter_jsonl(site / "out" / "agent-trials.jsonl")]
    assert {(t["workload"], t["workload_version"], t["task_id"]) for t in trials} == {
        ("ops-fleet", "FLEET", "disk-web-07")}
    # The plugin's own Python function answered the call.
    assert all(t["stop_reason"] == "final_answer" and t["task_score"] == 1.0
               for t in trials)
    for name in ("cef-report.json", "public-eval-elided.json", "report.html"):
        assert (site / "out" / name).is_file()


def test_an_agent_workload_is_not_a_one_request_format(site: Path) -> None:
    with pytest.raises(InputError, match=r"got the agent workload 'ops-tasks' \(it runs "
                       r"under context managers"):
        workload_format("ops-tasks")


@pytest.mark.parametrize(("name", "message"), [
    ("not-tasks", r"agent workload not-tasks: tasks\[0\]: expected an AgentTask, got dict"),
    ("no-function", r"agent workload no-function: tasks\[0\].functions: expected a function "
     r"for every tool offered, got none for disk_usage"),
    ("raises", r"agent workload raises: load\('fleet'\) failed: ZeroDivisionError: the "
     r"loader divided by zero"),
    ("blank", r"agent workload blank: version: expected a non-blank string"),
])
def test_what_a_bad_agent_workload_returns_is_refused(site: Path, name: str,
                                                      message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_agent_workload(name, "fleet", None, site)


def test_a_bad_agent_workload_exits_2_before_any_trial(
        site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_guarded(run_command, [str(_spec(site, "not-tasks")), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "tasks[0]: expected an AgentTask" in err and err.count("\n") == 1
    assert not (site / "out" / "agent-trials.jsonl").exists()


def test_an_agent_spec_names_the_agent_formats(site: Path) -> None:
    from ctxbench.runner.agent_spec import load_agent_spec

    with pytest.raises(InputError, match=r"ops.toml:7: \[workload\].format: expected one of "
                       r"agent, .*ops-tasks.*, bfcl_multi_turn, agent_traces"):
        load_agent_spec(_spec(site, "nope"))
