"""Both analyzer ratios in one run: ``cef analyze`` beside Entroly's analyzer (10,000
trials) and ``public-eval`` beside MARGINAL's comparator (10,000 rows).

    .venv/bin/python benchmarks/bench_vs_peers.py \\
        --entroly-repo /work/.mirror/juyterman1000+entroly/repo \\
        --marginal-repo /work/.mirror/SignalLayerLabs+Marginal/repo --repeats 5

Inputs, written to a temporary folder (not timed):

- CEF: 2,500 tasks x 4 conditions in Entroly's trial format, the file
  ``bench_vs_entroly.py`` uses (``bench_cef.write_trials``);
- public-eval: two files of 10,000 rows (``instance_id``, ``resolved``, ``tokens``,
  ``usd``, ``latency_ms``, ``tool_calls``), the generator of ``bench_public_eval.py``;
  MARGINAL's ``load_runs`` reads the same rows.

Peers, extracted from their repositories' HEAD into the temporary folder at run time
(nothing of them is kept in this repository):

- Entroly: ``python context_efficiency_frontier.py FILE --bootstrap-samples B --output OUT``;
- MARGINAL: its package ``src/marginal`` on ``PYTHONPATH``, run as ``python -m marginal
  public-eval BASE TREAT --bootstrap-samples B --json`` (the report on standard output,
  discarded).

ctxbench runs as its console script: ``ctxbench cef analyze FILE --bootstrap-samples B
--output OUT`` and ``ctxbench public-eval BASE TREAT --bootstrap-samples B --json
--output OUT``. Every run is a fresh process, start-up included, after one untimed
warm-up of each command; the four commands alternate (Entroly, ctxbench, MARGINAL,
ctxbench, ...) so a change of the machine's load falls on all of them. Printed per
command: median and minimum wall time and the children's CPU time (user + system); per
pair: the ratios of the medians and the minima, wall and CPU. ``--json PATH`` writes
the same as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cef import write_trials
from bench_public_eval import write_rows
from bench_vs_entroly import extract_analyzer, summary, timed

TARGETS = {"cef": 30.0, "public_eval": 60.0}


def extract_marginal(gitdir: str, dest: Path) -> tuple[Path, str, str]:
    """MARGINAL's ``src/marginal`` from its bare repository's HEAD under ``dest``;
    (the folder to put on PYTHONPATH, commit, SHA-256 of its public_eval.py)."""
    commit = subprocess.run(["git", "-C", gitdir, "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "-C", gitdir, "archive", commit, "src/marginal"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    digest = hashlib.sha256((dest / "src" / "marginal" / "public_eval.py").read_bytes())
    return dest / "src", commit, digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entroly-repo", required=True, help="Entroly's bare git directory")
    parser.add_argument("--marginal-repo", required=True, help="MARGINAL's bare git directory")
    parser.add_argument("--tasks", type=int, default=2500, help="CEF tasks (4 trials each)")
    parser.add_argument("--rows", type=int, default=10_000, help="public-eval rows per file")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    ctxbench = shutil.which("ctxbench", path=str(Path(sys.executable).parent))
    if ctxbench is None:
        raise SystemExit(f"the ctxbench console script is not installed beside "
                         f"{sys.executable}; run `make install`")
    samples = str(args.samples)
    with tempfile.TemporaryDirectory(prefix="bench-vs-peers-") as tmp:
        work = Path(tmp)
        analyzer, entroly_commit = extract_analyzer(args.entroly_repo, work)
        marginal_path, marginal_commit, marginal_digest = extract_marginal(
            args.marginal_repo, work)
        trials = work / "trials.jsonl"
        count = write_trials(trials, args.tasks)
        base, treat = write_rows(work, args.rows)
        # MARGINAL's package comes first on its path; ctxbench's own PYTHONPATH is kept.
        marginal_env = os.pathsep.join([str(marginal_path),
                                        *filter(None, [os.environ.get("PYTHONPATH")])])
        commands = {
            "entroly": [sys.executable, str(analyzer), str(trials), "--bootstrap-samples",
                        samples, "--output", str(work / "entroly.json")],
            "ctxbench cef analyze": [ctxbench, "cef", "analyze", str(trials),
                                     "--bootstrap-samples", samples, "--output",
                                     str(work / "cef.json")],
            "marginal": ["env", f"PYTHONPATH={marginal_env}", sys.executable, "-m",
                         "marginal", "public-eval", str(base), str(treat),
                         "--bootstrap-samples", samples, "--json"],
            "ctxbench public-eval": [ctxbench, "public-eval", str(base), str(treat),
                                     "--bootstrap-samples", samples, "--json", "--output",
                                     str(work / "public-eval.json")],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv)  # untimed warm-up: page cache and bytecode caches
        for _ in range(args.repeats):
            for name, argv in commands.items():
                wall, cpu = timed(argv)
                walls[name].append(wall)
                cpus[name].append(cpu)
        cef_report = json.loads((work / "cef.json").read_text(encoding="utf-8"))
        pe_report = json.loads((work / "public-eval.json").read_text(encoding="utf-8"))
    result: dict[str, object] = {
        "trials": count, "rows": args.rows, "bootstrap_samples": args.samples,
        "repeats": args.repeats, "entroly_commit": entroly_commit,
        "marginal_commit": marginal_commit, "marginal_public_eval_sha256": marginal_digest,
        "ctxbench_trials_analyzed": cef_report["inputs"]["trials_analyzed"],
        "ctxbench_public_eval_status": pe_report["status"],
        "load_average_1min": os.getloadavg()[0],
        "commands": {name: summary(walls[name], cpus[name]) for name in commands},
        "walls": walls, "cpus": cpus,
    }
    print(f"{count:,} CEF trials, {args.rows:,} public-eval rows per file, {args.samples} "
          f"resamples, {args.repeats} repeats, load average {os.getloadavg()[0]:.1f}")
    print(f"Entroly {entroly_commit}; MARGINAL {marginal_commit} (public_eval.py sha256 "
          f"{marginal_digest})")
    print("| command | median wall | min wall | median CPU | min CPU |")
    print("|---|---:|---:|---:|---:|")
    stats = result["commands"]
    assert isinstance(stats, dict)
    for name in commands:
        s = stats[name]
        print(f"| {name} | {s['median_s']:.3f} s | {s['min_s']:.3f} s | "
              f"{s['median_cpu_s']:.3f} s | {s['min_cpu_s']:.3f} s |")
    ratios = {}
    for key, peer, ours in (("cef", "entroly", "ctxbench cef analyze"),
                            ("public_eval", "marginal", "ctxbench public-eval")):
        p, o = stats[peer], stats[ours]
        ratios[key] = {"median": p["median_s"] / o["median_s"], "min": p["min_s"] / o["min_s"],
                       "median_cpu": p["median_cpu_s"] / o["median_cpu_s"],
                       "min_cpu": p["min_cpu_s"] / o["min_cpu_s"]}
        r = ratios[key]
        verdict = "met" if r["median"] >= TARGETS[key] else "MISSED"
        print(f"{key}: {peer} / ctxbench wall median {r['median']:.1f}x, min {r['min']:.1f}x; "
              f"CPU median {r['median_cpu']:.1f}x, min {r['min_cpu']:.1f}x "
              f"(target >= {TARGETS[key]:.0f}x on the wall medians: {verdict})")
    result["ratios"] = ratios
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
