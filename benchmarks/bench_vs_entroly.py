"""Side by side: Entroly's CEF analyzer and ``ctxbench cef analyze`` on one 10,000-trial file.

    .venv/bin/python benchmarks/bench_vs_entroly.py --entroly-repo GITDIR
    .venv/bin/python benchmarks/bench_vs_entroly.py --entroly-analyzer PATH --repeats 7

The file is 2,500 tasks x 4 conditions (raw, native_compaction, entroly, combined) x 1
replicate in Entroly's own trial format (``entroly.context-efficiency-trial.v1``, written
by ``ctxbench.testing.cef_trials`` as ``bench_cef.py`` writes it), which both
analyzers accept. Each analyzer runs as a fresh process, start-up included, with 2,000
bootstrap resamples, in alternation (Entroly, ctxbench, Entroly, ...) so that a change of
the machine's load falls on both, after one untimed warm-up run of each (the file in the
page cache, bytecode caches written, as for any installed tool; ``PYTHONDONTWRITEBYTECODE``
is cleared for the children):

- Entroly: ``python context_efficiency_frontier.py FILE --bootstrap-samples 2000
  --output OUT`` (its ``benchmarks/context_efficiency_frontier.py``, read from the given
  file or extracted from the given bare git directory into a temporary folder at run time;
  nothing of it is kept in this repository);
- ctxbench: ``ctxbench cef analyze FILE --bootstrap-samples 2000 --output OUT`` (the
  installed console script).

It prints, per analyzer, the median and minimum wall time and the children's CPU time,
the ratio of the medians and of the minima, and the Entroly commit and the analyzer's
SHA-256; ``--json PATH`` writes the same as JSON. Before that it times ctxbench's
start-up alone, each a fresh process: ``ctxbench --help`` (target < 0.25 s) and
``ctxbench cef analyze --help``, which imports everything the analysis imports and
analyzes nothing (``--startup-runs``, default 10).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cef import write_trials  # the same file bench_cef.py analyzes

ANALYZER_PATH = "benchmarks/context_efficiency_frontier.py"
TARGET_RATIO = 30.0


def extract_analyzer(gitdir: str, dest: Path) -> tuple[Path, str]:
    """Entroly's analyzer from its bare repository's HEAD into ``dest``; (path, commit)."""
    commit = subprocess.run(["git", "-C", gitdir, "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    text = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{ANALYZER_PATH}"],
                          check=True, capture_output=True).stdout
    path = dest / "context_efficiency_frontier.py"
    path.write_bytes(text)
    return path, commit


def child_env() -> dict[str, str]:
    """The environment of both analyzers: bytecode caching on, as in an installation."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(argv: list[str]) -> tuple[float, float]:
    """Run ``argv`` to completion; (wall seconds, the child's user + system CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, check=False, capture_output=True, text=True,
                          env=child_env())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} {argv[1]} failed ({done.returncode}): "
                         f"{done.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(walls: list[float], cpus: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(walls), "min_s": min(walls),
            "median_cpu_s": statistics.median(cpus), "min_cpu_s": min(cpus)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--entroly-analyzer", help="path of context_efficiency_frontier.py")
    source.add_argument("--entroly-repo", help="a bare git directory of Entroly's repository")
    parser.add_argument("--tasks", type=int, default=2500, help="tasks (4 trials each)")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--startup-runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    ctxbench = shutil.which("ctxbench", path=str(Path(sys.executable).parent))
    if ctxbench is None:
        raise SystemExit("the ctxbench console script is not installed beside "
                         f"{sys.executable}; run `make install`")
    startup = {}
    for label, argv in (("ctxbench --help", [ctxbench, "--help"]),
                        ("ctxbench cef analyze --help", [ctxbench, "cef", "analyze", "--help"])):
        timed(argv)
        runs = [timed(argv) for _ in range(args.startup_runs)]
        startup[label] = summary([w for w, _ in runs], [c for _, c in runs])
        print(f"{label}: median {startup[label]['median_s']:.3f} s, min "
              f"{startup[label]['min_s']:.3f} s (CPU median {startup[label]['median_cpu_s']:.3f}"
              f" s) over {args.startup_runs} fresh processes")
    with tempfile.TemporaryDirectory(prefix="bench-vs-entroly-") as tmp:
        work = Path(tmp)
        if args.entroly_repo:
            analyzer, commit = extract_analyzer(args.entroly_repo, work)
        else:
            analyzer, commit = Path(args.entroly_analyzer), "not given (a file was supplied)"
        digest = hashlib.sha256(analyzer.read_bytes()).hexdigest()
        trials = work / "trials.jsonl"
        count = write_trials(trials, args.tasks)
        samples = str(args.samples)
        commands = {
            "entroly": [sys.executable, str(analyzer), str(trials), "--bootstrap-samples",
                        samples, "--output", str(work / "entroly.json")],
            "ctxbench": [ctxbench, "cef", "analyze", str(trials), "--bootstrap-samples",
                         samples, "--output", str(work / "ctxbench.json")],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv)  # untimed warm-up: page cache and bytecode caches, as in daily use
        for _ in range(args.repeats):
            for name, argv in commands.items():
                wall, cpu = timed(argv)
                walls[name].append(wall)
                cpus[name].append(cpu)
        entroly_report = json.loads((work / "entroly.json").read_text(encoding="utf-8"))
        ctxbench_report = json.loads((work / "ctxbench.json").read_text(encoding="utf-8"))
    result = {
        "trials": count, "tasks": args.tasks, "bootstrap_samples": args.samples,
        "repeats": args.repeats, "entroly_commit": commit, "entroly_analyzer_sha256": digest,
        "entroly_pairs": entroly_report["pair_count"],
        "ctxbench_trials_analyzed": ctxbench_report["inputs"]["trials_analyzed"],
        "load_average_1min": os.getloadavg()[0],
        "entroly": summary(walls["entroly"], cpus["entroly"]),
        "ctxbench": summary(walls["ctxbench"], cpus["ctxbench"]),
        "walls": walls,
        "startup": startup,
    }
    ratio_median = result["entroly"]["median_s"] / result["ctxbench"]["median_s"]
    ratio_min = result["entroly"]["min_s"] / result["ctxbench"]["min_s"]
    result.update(ratio_median=ratio_median, ratio_min=ratio_min)
    print(f"{count:,} trials ({args.tasks:,} tasks x 4), {args.samples} resamples, "
          f"{args.repeats} repeats each, load average {result['load_average_1min']:.1f}")
    print(f"Entroly analyzer: commit {commit}, sha256 {digest}")
    print("| analyzer | median wall | min wall | median CPU | min CPU |")
    print("|---|---:|---:|---:|---:|")
    for name in commands:
        s = result[name]
        print(f"| {name} | {s['median_s']:.3f} s | {s['min_s']:.3f} s | "
              f"{s['median_cpu_s']:.3f} s | {s['min_cpu_s']:.3f} s |")
    verdict = "met" if ratio_median >= TARGET_RATIO else "MISSED"
    print(f"ratio (Entroly / ctxbench): median {ratio_median:.1f}x, min {ratio_min:.1f}x "
          f"(target >= {TARGET_RATIO:.0f}x: {verdict})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
