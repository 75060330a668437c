"""Replay every reported policy leak and count restricted bytes in the packets produced.

    .venv/bin/python benchmarks/bench_policy_leaks.py                 # all cases
    .venv/bin/python benchmarks/bench_policy_leaks.py --random 200    # fewer random corpora

Cases (each through the real command line, ``run_guarded``, in-process):

1. ``compile --deny`` in directory mode with every reported spelling (``./path``, an
   absolute path, another case, the basename, a trailing space, NFC vs NFD) and more
   (a leading space, ``..`` segments, the directory, a path relative to the working
   directory), each under four strategy/budget runs;
2. unknown names: a typo'd ``--deny``, ``--allow interal``, an allow-list the corpus does
   not hold, ``--deny``/``--allow`` with ``--benchmark``: each must exit 2 with no packet;
3. ``eceb register`` on a corpus with a public-path symlink to a restricted file (and a
   directory link): must be refused;
4. an external strategy returning restricted seed text under a permitted selection (at
   the start, inside and at the end of the context): must be refused, no packet;
   the same system without the smuggled text must give a packet (control);
5. random corpora and random spellings of denied names (seeded): every packet searched;
6. the built-in strategies on every seed task x budget: every packet searched for every
   line of every artifact the task may not read;
7. hard links: ``--deny`` of either name of a file with two names (and of a copy), under
   the seven document strategies, and ``eceb register`` on a corpus holding a hard link
   to a restricted file (must be refused);
8. hostile plugins (``module:attr``, run in their worker process): reading denied text
   through ``request.index``, from disk into ``details`` or ``empty_reason``, into an
   exception message, onto stdout/stderr, monkeypatching ``Policy.permits``,
   ``SystemExit(0)``, a ``BaseException``, and a GIL-holding regex under a 3 s deadline:
   stdout, stderr and the commit file of each compile are searched, and each must fail
   (exit 3) except the one that only prints (exit 0, a clean packet).

Restricted bytes are counted as the total length of forbidden lines (each line of a
forbidden file carries a unique marker, or is a line of a forbidden seed artifact of at
least 24 characters that occurs nowhere in the text the task may read) found in a
packet's text.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import shlex
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.core import InputError
from ctxbench.protocols.eceb import load_benchmark, register_directory, seed_paths

QUERY = "refresh token rotation signing key"
RUNS = [["--strategy", "full_permitted_context"], ["--budget", "40"], ["--budget", "400"],
        ["--strategy", "naive_top_k", "--budget", "400"]]


class Tally:
    def __init__(self) -> None:
        self.packets = 0
        self.restricted_bytes = 0
        self.refused = 0
        self.unexpected: list[str] = []

    def packet(self, text: str, forbidden: list[str]) -> None:
        self.packets += 1
        self.restricted_bytes += sum(len(line) for line in forbidden if line in text)


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_guarded(cli, args)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def directory_cases(tally: Tally, tmp: Path) -> None:
    root = tmp / "corpus"
    (root / "src" / "auth").mkdir(parents=True)
    (root / "docs").mkdir()
    secret = [f"# zqtok{n}q refresh token rotation signing key" for n in range(20)]
    (root / "src" / "auth" / "tokens.py").write_text("\n".join(secret) + "\n")
    cafe = [f"zqcafe{n}q refresh token café rotation" for n in range(5)]
    (root / unicodedata.normalize("NFC", "café.md")).write_text("\n".join(cafe) + "\n")
    (root / "docs" / "guide.md").write_text("# Guide\nRotate the refresh token signing key.\n")
    spellings = ["./src/auth/tokens.py", str(root / "src/auth/tokens.py"), "SRC/Auth/TOKENS.py",
                 "tokens.py", "src/auth/tokens.py ", " src/auth/tokens.py",
                 "src/auth/../auth/tokens.py", "src/auth", "./src/"]
    cafe_spellings = [unicodedata.normalize("NFD", "café.md"), "CAFÉ.md", "./café.md "]
    for deny, forbidden in [*((s, secret) for s in spellings),
                            *((s, cafe) for s in cafe_spellings)]:
        for run in RUNS:
            code, out, err = _cli(["compile", "--corpus", str(root), "--query", QUERY,
                                   "--print", "--deny", deny, *run])
            if code != 0:
                tally.unexpected.append(f"deny {deny!r}: exit {code}: {err.strip()}")
                continue
            tally.packet(out, forbidden)
    with _chdir(tmp):
        for run in RUNS:
            code, out, err = _cli(["compile", "--corpus", "corpus", "--query", QUERY, "--print",
                                   "--deny", "corpus/src/auth/tokens.py", *run])
            if code != 0:
                tally.unexpected.append(f"cwd-relative deny: exit {code}: {err.strip()}")
                continue
            tally.packet(out, secret)
    seed = seed_paths()
    for args in (["--deny", "token.py"], ["--deny", "src/auth/tokens.py", "--deny", "nope"],
                 ["--allow", "interal"], ["--allow", "public"]):
        code, out, _ = _cli(["compile", "--corpus", str(root), "--query", QUERY,
                             "--budget", "400", "--print", *args])
        _expect_refusal(tally, " ".join(args), code, out, 2)
    code, out, _ = _cli(["compile", "--benchmark", str(seed.benchmark), "--corpus",
                         str(seed.corpus), "--task", "webhook-retry-policy", "--budget",
                         "400", "--print", "--deny", "x"])
    _expect_refusal(tally, "--deny with --benchmark", code, out, 2)


def _expect_refusal(tally: Tally, what: str, code: int, out: str, expected: int) -> None:
    if code == expected and out == "":
        tally.refused += 1
    else:
        tally.unexpected.append(f"{what}: exit {code}, {len(out)} characters on stdout")


def symlink_cases(tally: Tally, tmp: Path) -> None:
    corpus = tmp / "reg"
    (corpus / "restricted").mkdir(parents=True)
    (corpus / "public").mkdir()
    (corpus / "restricted" / "salaries.md").write_text("zqsalaryq\n")
    (corpus / "public" / "faq.md").write_text("faq\n")
    rules = tmp / "rules.toml"
    rules.write_text('benchmark_id = "b"\n[[rule]]\nglob = "public/**"\nkind = "runbook"\n'
                     'classification = "public"\n[[rule]]\nglob = "restricted/**"\n'
                     'kind = "policy"\nclassification = "restricted"\n')
    for link, target in (("public/salaries.md", "../restricted/salaries.md"),
                         ("public/mirror", "../restricted")):
        os.symlink(target, corpus / link)
        try:
            register_directory(corpus, rules)
            tally.unexpected.append(f"register accepted the link {link}")
        except InputError:
            tally.refused += 1
        os.unlink(corpus / link)


def external_cases(tally: Tally, tmp: Path) -> None:
    seed = seed_paths()
    bench = load_benchmark(seed.benchmark)
    restricted = [a for a in bench.artifacts if a.classification == "restricted"]
    for artifact in restricted:
        for where in ("start", "inside", "end"):
            script = tmp / f"ext-{artifact.artifact_id}-{where}.py"
            script.write_text(
                "import json, sys\nrequest = json.load(sys.stdin)\n"
                "best = request['candidates'][0]\n"
                f"secret = open({str(seed.corpus / artifact.path)!r}, encoding='utf-8').read()\n"
                f"where = {where!r}\ntext = best['text']\n"
                "context = {'start': secret + text, 'end': text + secret,\n"
                "           'inside': text[:5] + secret + text[5:]}[where]\n"
                "json.dump({'context': context, 'selected': [{'artifact_id': "
                "best['artifact_id'], 'ranges': [[best['start'], best['end']]]}]}, sys.stdout)\n")
            code, out, _ = _cli(["compile", "--benchmark", str(seed.benchmark), "--corpus",
                                 str(seed.corpus), "--task", "webhook-retry-policy",
                                 "--budget", "8000", "--print", "--external",
                                 f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"])
            _expect_refusal(tally, f"external {artifact.artifact_id} {where}", code, out, 3)
    honest = tmp / "honest.py"
    honest.write_text(
        "import json, sys\nrequest = json.load(sys.stdin)\nc = request['candidates'][:3]\n"
        "json.dump({'context': ''.join(x['text'] for x in c), 'selected': [{'artifact_id': "
        "x['artifact_id'], 'ranges': [[x['start'], x['end']]]} for x in c]}, sys.stdout)\n")
    for task in bench.tasks:
        policy = Policy.from_task(task)
        permitted = "\n".join((seed.corpus / a.path).read_text(encoding="utf-8")
                              for a in bench.artifacts
                              if policy.permits(a.artifact_id, a.classification))
        forbidden = [line for line in _seed_lines(
            [a for a in bench.artifacts if not policy.permits(a.artifact_id, a.classification)])
            if line not in permitted]
        code, out, err = _cli(["compile", "--benchmark", str(seed.benchmark), "--corpus",
                               str(seed.corpus), "--task", task.task_id, "--budget", "8000",
                               "--print", "--external",
                               f"{shlex.quote(sys.executable)} {shlex.quote(str(honest))}"])
        if code != 0:
            tally.unexpected.append(f"honest external on {task.task_id}: {err.strip()}")
            continue
        tally.packet(out, forbidden)


def _seed_lines(artifacts: list[object]) -> list[str]:
    corpus = seed_paths().corpus
    lines: set[str] = set()
    for artifact in artifacts:
        text = (corpus / artifact.path).read_text(encoding="utf-8")  # type: ignore[attr-defined]
        lines.update(line for line in text.splitlines() if len(line.strip()) >= 24)
    return sorted(lines)


def random_cases(tally: Tally, tmp: Path, count: int) -> None:
    rng = random.Random(20261201)
    tokenizer = get_tokenizer()
    for k in range(count):
        root = tmp / f"r{k}"
        marks: dict[str, str] = {}
        for n in range(rng.randint(2, 7)):
            folder = rng.choice(["", "d/", "D/", "d/e/", "é/"])
            stem = "".join(rng.choice("abAB_é") for _ in range(rng.randint(1, 4)))
            rel = unicodedata.normalize("NFC", f"{folder}{stem}.md")
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            if (root / rel).exists():
                continue
            marks[rel] = f"zqr{k}x{n}q token rotation"
            (root / rel).write_text(f"{marks[rel]}\n" * 3)
        rels = sorted(marks)
        denied = rng.sample(rels, rng.randint(1, max(1, len(rels) - 1)))
        spellings = [_spell(r, root, rng.randrange(8)) for r in denied]
        corpus = Corpus.from_directory(root)
        try:
            policy = Policy(("internal",), tuple(spellings)).resolved_for(corpus)
        except InputError as exc:
            if "matches several" in str(exc):
                tally.refused += 1
            else:
                tally.unexpected.append(f"random corpus {k}: {exc}")
            continue
        index = ContextIndex.build(corpus, tokenizer)
        for strategy, budget in (("compiled", 60), ("compiled", 300), ("naive_top_k", 300),
                                 ("full_permitted_context", None)):
            packet = compile_context(index, query="token rotation", policy=policy,
                                     strategy=strategy, budget=budget)
            tally.packet(packet.text, [marks[r] for r in denied])


def _spell(rel: str, root: Path, how: int) -> str:
    return [rel, "./" + rel, str(root / rel), rel.upper(), unicodedata.normalize("NFD", rel),
            rel + " ", rel.rsplit("/", 1)[-1], " ./" + rel.swapcase()][how]


def seed_cases(tally: Tally) -> None:
    seed = seed_paths()
    bench = load_benchmark(seed.benchmark)
    index = ContextIndex.build(Corpus.from_benchmark(bench, seed.corpus), get_tokenizer())
    for task in bench.tasks:
        policy = Policy.from_task(task)
        forbidden = _seed_lines([a for a in bench.artifacts
                                 if not policy.permits(a.artifact_id, a.classification)])
        permitted = "\n".join((seed.corpus / a.path).read_text(encoding="utf-8")
                              for a in bench.artifacts
                              if policy.permits(a.artifact_id, a.classification))
        # a forbidden line that is also permitted text (code quoted in a public PR) is
        # not restricted text
        forbidden = [line for line in forbidden if line not in permitted]
        for strategy in ("compiled", "naive_top_k"):
            for budget in (128, 256, 512, 1024, 2048, 4096):
                packet = compile_context(index, query=task.query, policy=policy,
                                         strategy=strategy, budget=budget)
                tally.packet(packet.text, forbidden)
        packet = compile_context(index, query=task.query, policy=policy,
                                 strategy="full_permitted_context", budget=None)
        tally.packet(packet.text, forbidden)


LINK_STRATEGIES = [["--strategy", "full_permitted_context"], ["--budget", "400"],
                   ["--strategy", "naive_top_k", "--budget", "400"],
                   *(["--strategy", s, "--budget", "400"] for s in
                     ("truncate-head", "truncate-tail", "middle-out", "chunk-bm25"))]


def hard_link_cases(tally: Tally, tmp: Path) -> None:
    root = tmp / "links"
    (root / "hr").mkdir(parents=True)
    (root / "pub").mkdir()
    secret = [f"zqsal{n}q salary band token rotation signing key" for n in range(12)]
    (root / "hr" / "salaries.md").write_text("\n".join(secret) + "\n")
    (root / "pub" / "faq.md").write_text("Rotate the refresh token signing key daily.\n")
    os.link(root / "hr" / "salaries.md", root / "pub" / "notes.md")
    (root / "pub" / "copy.md").write_bytes((root / "hr" / "salaries.md").read_bytes())
    for deny in ("hr/salaries.md", "pub/notes.md", "hr", "pub/copy.md"):
        for run in LINK_STRATEGIES:
            code, out, err = _cli(["compile", "--corpus", str(root), "--query", QUERY,
                                   "--print", "--deny", deny, *run])
            if code != 0:
                tally.unexpected.append(f"hard link deny {deny!r}: exit {code}: {err.strip()}")
                continue
            tally.packet(out, secret)
    corpus = tmp / "reglink"
    (corpus / "restricted").mkdir(parents=True)
    (corpus / "public").mkdir()
    (corpus / "restricted" / "salaries.md").write_text("zqsalaryq\n")
    os.link(corpus / "restricted" / "salaries.md", corpus / "public" / "notes.md")
    rules = tmp / "rules-links.toml"
    rules.write_text('benchmark_id = "b"\n[[rule]]\nglob = "public/**"\nkind = "runbook"\n'
                     'classification = "public"\n[[rule]]\nglob = "restricted/**"\n'
                     'kind = "policy"\nclassification = "restricted"\n')
    try:
        register_directory(corpus, rules)
        tally.unexpected.append("register accepted a hard link to a restricted file")
    except InputError:
        tally.refused += 1


HOSTILE = """
import re, sys
from ctxbench.compiler.plugins import Selected, StrategyResult
from ctxbench.compiler.policy import Policy

SECRET = open(%r, encoding="utf-8").read()
SECRET_ID = %r


def first(r):
    c = r.candidates()[0]
    s = (Selected(c.artifact_id, ((c.start, c.end),)),)
    return r.render(s), s


class P:
    budgeted = True

    def __init__(self, name, build):
        self.name, self.summary, self.build = name, name, build


def read_index(r):
    data = r.index.source(r.index.position(SECRET_ID)).decode()
    return StrategyResult(*first(r), details=(("leak", data),))


def patch(r):
    Policy.permits = lambda self, a, c: True
    s = (Selected(SECRET_ID),)
    return StrategyResult(r.render(s), s)


def shout(r):
    print(SECRET)
    print(SECRET, file=sys.stderr)
    return StrategyResult(*first(r))


class Odd(BaseException):
    pass


def odd(r):
    raise Odd(SECRET[:200])


def gil(r):
    re.match(r"(a+)+$", "a" * 40 + "b")
    return StrategyResult("", ())


def exit0(r):
    raise SystemExit(0)


def boom(r):
    raise RuntimeError(SECRET[:250])


READ_INDEX = P("read-index", read_index)
IN_DETAILS = P("in-details", lambda r: StrategyResult(*first(r), details=(("x", SECRET),)))
IN_EMPTY = P("in-empty", lambda r: StrategyResult("", (), SECRET[:400]))
IN_EXCEPTION = P("in-exception", boom)
IN_STREAMS = P("in-streams", shout)
PATCH_PERMITS = P("patch-permits", patch)
SYSTEM_EXIT = P("system-exit", exit0)
BASE_EXCEPTION = P("base-exception", odd)
HOLD_GIL = P("hold-gil", gil)
"""


def hostile_plugin_cases(tally: Tally, tmp: Path) -> list[str]:
    import time

    from ctxbench.compiler import plugins
    from ctxbench.compiler.discovery import strategy_facts

    seed = seed_paths()
    bench = load_benchmark(seed.benchmark)
    task = bench.task("payments-failover-region")
    assert task is not None
    policy = Policy.from_task(task)
    secret = next(a for a in bench.artifacts if a.artifact_id == "policy-compensation-bands-2026")
    permitted = "\n".join((seed.corpus / a.path).read_text(encoding="utf-8")
                          for a in bench.artifacts
                          if policy.permits(a.artifact_id, a.classification))
    forbidden = [line for line in _seed_lines(
        [a for a in bench.artifacts if not policy.permits(a.artifact_id, a.classification)])
        if line not in permitted]
    site = tmp / "hostile-site"
    site.mkdir()
    (site / "bench_hostile_plugins.py").write_text(
        HOSTILE % (str(seed.corpus / secret.path), secret.artifact_id), encoding="utf-8")
    sys.path.insert(0, str(site))
    notes = []
    before = plugins.STRATEGY_TIMEOUT_S
    try:
        for attack in ("READ_INDEX", "IN_DETAILS", "IN_EMPTY", "IN_EXCEPTION", "IN_STREAMS",
                       "PATCH_PERMITS", "SYSTEM_EXIT", "BASE_EXCEPTION", "HOLD_GIL"):
            target = f"bench_hostile_plugins:{attack}"
            strategy_facts(target)  # start its worker outside the deadline
            plugins.STRATEGY_TIMEOUT_S = 3.0
            commit = tmp / f"commit-{attack}.json"
            started = time.perf_counter()
            code, out, err = _cli(["compile", "--benchmark", str(seed.benchmark), "--corpus",
                                   str(seed.corpus), "--task", task.task_id, "--budget",
                                   "400", "--print", "--strategy", target,
                                   "--output", str(commit)])
            elapsed = time.perf_counter() - started
            plugins.STRATEGY_TIMEOUT_S = before
            written = commit.read_text(encoding="utf-8") if commit.exists() else ""
            tally.packet(out + err + written, forbidden)
            expected = 0 if attack == "IN_STREAMS" else 3
            if code != expected:
                tally.unexpected.append(f"plugin {attack}: exit {code}: {err.strip()[:200]}")
            else:
                tally.refused += expected == 3
            notes.append(f"{attack}: exit {code} in {elapsed:.1f} s: "
                         f"{(err.strip() or out.splitlines()[0])[:150]}")
    finally:
        plugins.STRATEGY_TIMEOUT_S = before
        sys.path.remove(str(site))
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=500, help="random corpora (default 500)")
    args = parser.parse_args()
    rows = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxbench-leaks-") as name:
        tmp = Path(name)
        for label, run in (
            ("directory --deny/--allow spellings and unknown names",
             lambda t: directory_cases(t, tmp)),
            ("eceb register with in-corpus symlinks", lambda t: symlink_cases(t, tmp)),
            ("external strategy: restricted text under a permitted selection",
             lambda t: external_cases(t, tmp)),
            (f"random corpora and spellings ({args.random})",
             lambda t: random_cases(t, tmp, args.random)),
            ("built-in strategies on every seed task x budget", seed_cases),
            ("hard links and copies: --deny either name, 7 strategies; register",
             lambda t: hard_link_cases(t, tmp)),
            ("hostile plugins in their worker process (9 attacks)",
             lambda t: notes.extend(hostile_plugin_cases(t, tmp))),
        ):
            tally = Tally()
            run(tally)
            rows.append((label, tally))
    print("| case | packets | restricted bytes in packets | refused as required | "
          "unexpected |")
    print("|---|---:|---:|---:|---:|")
    for label, t in rows:
        print(f"| {label} | {t.packets} | {t.restricted_bytes} | {t.refused} | "
              f"{len(t.unexpected)} |")
    total = sum(t.packets for _, t in rows)
    leaked = sum(t.restricted_bytes for _, t in rows)
    print(f"\n{leaked} restricted bytes in {total} packets")
    for line in notes:
        print("plugin", line)
    for _, t in rows:
        for line in t.unexpected:
            print("unexpected:", line)
    if leaked or any(t.unexpected for _, t in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
