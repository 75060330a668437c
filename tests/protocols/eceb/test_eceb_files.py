"""Hostile corpora: every OS and resource error is one located line, exit 2, no hang.

The command-line cases run ``python -m ctxbench`` in a subprocess with a wall-clock
limit, so a hang (a FIFO opened for reading) fails the test instead of stalling it, and
stderr can be checked for a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler import Corpus
from ctxbench.core import InputError, IntegrityError
from ctxbench.protocols.eceb import load_benchmark, register_directory, verify_corpus
from ctxbench.protocols.eceb.files import (
    MAX_TEXT_FILE_BYTES,
    file_kind,
    hash_regular_file,
    open_regular,
    os_error,
    read_regular_file,
)

RULES = 'benchmark_id = "t"\n[[rule]]\nglob = "**"\nkind = "runbook"\nclassification = "public"\n'
pytestmark = pytest.mark.timeout(180)
ROOT_UID = hasattr(os, "geteuid") and os.geteuid() == 0


def _cli(*args: str, timeout: float = 60, preexec: object = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "ctxbench", *args], capture_output=True, text=True,
        timeout=timeout, check=False, preexec_fn=preexec,  # type: ignore[arg-type]
    )
    return done.returncode, done.stdout, done.stderr


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ctxbench: error: ")
    return lines[0]


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    (corpus / "docs").mkdir(parents=True)
    (corpus / "docs" / "a.md").write_text("alpha refresh token\n")
    (corpus / "docs" / "b.md").write_text("beta rotation key\n")
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    return corpus, rules


def _registered(tmp_path: Path) -> tuple[Path, Path]:
    corpus, rules = _corpus(tmp_path)
    bench = tmp_path / "bench.json"
    code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules),
                        "--output", str(bench))
    assert code == 0, err
    return corpus, bench


@pytest.mark.timeout(120)
def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    corpus, bench = _registered(tmp_path)
    rules = tmp_path / "rules.toml"
    os.unlink(corpus / "docs" / "a.md")
    os.mkfifo(corpus / "docs" / "a.md")
    # register: refused by name (it used to be registered as an empty file)
    code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules),
                        "--output", str(tmp_path / "again.json"))
    assert code == 2
    assert _one_line(err) == (f"ctxbench: error: {corpus}/docs/a.md: expected a regular "
                              f"file, got a FIFO")
    assert not (tmp_path / "again.json").exists()
    # root and evaluate re-hash the registered files: a problem per artifact, no hang
    code, _, err = _cli("eceb", "root", str(bench), "--corpus", str(corpus))
    assert code == 2
    assert _one_line(err).endswith("(1 artifact(s)): artifact a (docs/a.md): not a regular "
                                   "file (a FIFO)")
    # compile from the registry: located, exit 2, no hang
    doc = json.loads(bench.read_text())
    doc["tasks"] = [{"task_id": "t", "query": "alpha", "required_artifacts": ["b"],
                     "allowed_classifications": ["public"], "denied_artifacts": [],
                     "budget_ladder": [256], "minimum_quality_milli": 700,
                     "maximum_quality_regression_milli": 100, "answer_terms": ["beta"],
                     "required_repetitions": 1}]
    bench.write_text(json.dumps(doc))
    code, _, err = _cli("compile", "--benchmark", str(bench), "--corpus", str(corpus),
                        "--task", "t", "--budget", "100")
    assert code == 2
    line = _one_line(err)
    assert "docs/a.md" in line and "a FIFO" in line, line
    # a plain directory skips it without opening it
    code, out, err = _cli("compile", "--corpus", str(corpus), "--query", "beta",
                          "--budget", "100")
    assert code == 0, err
    assert "docs/b.md" in out and "docs/a.md" not in out


def test_a_symlink_loop_and_links_are_refused(tmp_path: Path) -> None:
    corpus, rules = _corpus(tmp_path)
    os.symlink("loop2", corpus / "loop1")
    os.symlink("loop1", corpus / "loop2")
    code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules),
                        "--output", str(tmp_path / "b.json"))
    assert code == 2
    assert _one_line(err) == (f"ctxbench: error: {corpus}/loop1: expected a regular file or "
                              "directory, got a symbolic link (links are refused: a link would "
                              "give one file's bytes a second path, and so possibly another "
                              "classification)")
    # A registry naming a path through the loop: one problem for that artifact.
    corpus2, bench = _registered(tmp_path / "second")
    os.symlink("loop2", corpus2 / "loop1")
    os.symlink("loop1", corpus2 / "loop2")
    benchmark = load_benchmark(bench)
    doc = json.loads(bench.read_text())
    doc["corpus"]["artifacts"][0]["path"] = "loop1/a.md"
    from ctxbench.protocols.eceb import corpus_root, parse_benchmark
    from ctxbench.protocols.eceb.records import Artifact
    records = doc["corpus"]["artifacts"]
    doc["corpus"]["root"] = corpus_root(Artifact(**r) for r in records)
    looped = parse_benchmark(doc, path="b.json")
    problems = verify_corpus(looped, corpus2).problems
    assert [(p.artifact_id, p.problem) for p in problems] == [("a", "symlink")]
    assert verify_corpus(benchmark, corpus2).ok


def test_not_a_directory_and_names_too_long(tmp_path: Path) -> None:
    corpus, rules = _corpus(tmp_path)
    file_corpus = corpus / "docs" / "a.md"
    with pytest.raises(InputError, match=r"a\.md: expected a corpus directory, got a "
                       r"regular file$"):
        register_directory(file_corpus, rules)
    with pytest.raises(InputError, match=r"^corpus: .*a\.md: expected a directory, got a "
                       r"regular file$"):
        Corpus.from_directory(file_corpus)
    long = tmp_path / ("n" * 300)
    code, _, err = _cli("compile", "--corpus", str(long), "--query", "x", "--budget", "9")
    assert code == 2
    assert _one_line(err).endswith(": File name too long (ENAMETOOLONG)")
    code, _, err = _cli("eceb", "register", str(long), "--map", str(rules),
                        "--output", str(tmp_path / "x.json"))
    assert code == 2
    assert _one_line(err).endswith(": File name too long (ENAMETOOLONG)")
    code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules),
                        "--output", str(file_corpus / "out.json"))
    assert code == 2
    # the output's parent is a file: the parent cannot be created
    assert _one_line(err) == f"ctxbench: error: {file_corpus}: File exists (EEXIST)"
    assert file_corpus.read_text() == "alpha refresh token\n"


def test_a_full_disk_leaves_no_partial_file(tmp_path: Path) -> None:
    corpus, rules = _corpus(tmp_path)
    out = tmp_path / "out"
    out.mkdir()

    def tiny_files() -> None:  # the file-size limit stands in for a full disk
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules), "--output",
                        str(out / "bench.json"), preexec=tiny_files)
    assert code == 2
    assert _one_line(err) == f"ctxbench: error: {out}/bench.json: File too large (EFBIG)"
    assert list(out.iterdir()) == []


def test_enospc_during_an_atomic_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    corpus, rules = _corpus(tmp_path)
    out = tmp_path / "out"
    out.mkdir()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    code = run_guarded(cli, ["eceb", "register", str(corpus), "--map", str(rules),
                             "--output", str(out / "bench.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert _one_line(err) == (f"ctxbench: error: {out}/bench.json: No space left on device "
                              f"(ENOSPC)")
    assert list(out.iterdir()) == []


def test_permission_denied_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, _ = _corpus(tmp_path)
    target = corpus / "docs" / "a.md"
    real_open = os.open

    def denied(path: object, flags: int, *args: object) -> int:
        if os.fspath(path) == str(target):  # type: ignore[call-overload]
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(InputError, match=r"^x\.md: cannot be read: Permission denied "
                       r"\(EACCES\)$"):
        read_regular_file(target, "x.md")
    with pytest.raises(InputError, match=r"a\.md: cannot be read: Permission denied"):
        Corpus.from_directory(corpus)


@pytest.mark.skipif(ROOT_UID, reason="root reads files whatever their mode")
def test_an_unreadable_directory_is_not_skipped(tmp_path: Path) -> None:
    corpus, rules = _corpus(tmp_path)
    (corpus / "docs").chmod(0)
    try:
        code, _, err = _cli("eceb", "register", str(corpus), "--map", str(rules),
                            "--output", str(tmp_path / "b.json"))
    finally:
        (corpus / "docs").chmod(0o755)
    assert code == 2
    assert _one_line(err).endswith("Permission denied (EACCES)")


@pytest.mark.timeout(120)
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
def test_huge_files_are_capped_for_text_and_streamed_for_hashing(tmp_path: Path) -> None:
    corpus, rules = _corpus(tmp_path)
    huge = corpus / "docs" / "huge.md"
    with open(huge, "wb") as handle:  # sparse: 200 MB that costs no disk
        handle.truncate(200 << 20)
    code, _, err = _cli("compile", "--corpus", str(corpus), "--query", "alpha",
                        "--budget", "50")
    assert code == 2
    assert _one_line(err) == (f"ctxbench: error: {huge}: expected a file of at most "
                              f"{MAX_TEXT_FILE_BYTES} bytes, got {200 << 20} bytes (larger "
                              f"files are refused, not truncated)")
    bench = tmp_path / "bench.json"
    # VmHWM, not ru_maxrss: the latter carries the forking parent's peak across exec.
    probe = ("import re, sys; from ctxbench.cli.main import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
             "    status = open('/proc/self/status').read()\n"
             "    print(e.code, re.search(r'VmHWM:\\s+(\\d+)', status).group(1))\n")
    done = subprocess.run([sys.executable, "-c", probe, "eceb", "register", str(corpus),
                           "--map", str(rules), "--output", str(bench)],
                          capture_output=True, text=True, timeout=120, check=False)
    code_text, maxrss_kib = done.stdout.split()[-2:]
    assert code_text == "0", done.stderr
    assert int(maxrss_kib) < 200 * 1024  # hashing streamed: far below the file's 200 MiB
    code, _, err = _cli("compile", "--benchmark", str(bench), "--corpus", str(corpus),
                        "--query", "alpha", "--budget", "50")
    assert code == 2  # --query does not select a task; the benchmark needs --task
    assert "Traceback" not in err
    with pytest.raises(IntegrityError, match=r"docs/huge\.md: artifact huge: expected a file "
                       rf"of at most {MAX_TEXT_FILE_BYTES} bytes, got {200 << 20} bytes"):
        Corpus.from_benchmark(load_benchmark(bench), corpus).read(
            next(a for a in Corpus.from_benchmark(load_benchmark(bench), corpus).artifacts
                 if a.artifact_id == "huge"))


def test_file_helpers(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    assert read_regular_file(tmp_path / "f", "f") == b"abc"
    assert hash_regular_file(tmp_path / "f", "f")[1] == 3
    with pytest.raises(InputError, match=r"^f: expected a file of at most 2 bytes, got 3"):
        read_regular_file(tmp_path / "f", "f", limit=2)
    with pytest.raises(InputError, match=r"^d: expected a regular file, got a directory$"):
        open_regular(tmp_path, "d")
    with pytest.raises(InputError, match=r"^m: cannot be read: No such file or directory "
                       r"\(ENOENT\)$"):
        open_regular(tmp_path / "missing", "m")
    os.symlink(tmp_path / "f", tmp_path / "link")
    with pytest.raises(InputError, match=r"^l: expected a regular file, got a symbolic link$"):
        open_regular(tmp_path / "link", "l")
    assert file_kind(os.stat(tmp_path).st_mode) == "a directory"
    assert str(os_error(OSError(errno.ELOOP, "Too many levels of symbolic links"), "p")) == (
        "p: cannot be read: Too many levels of symbolic links (ELOOP)")
    assert len(str(os_error(OSError(errno.EIO, "I/O error"), "x" * 5000))) < 260


def test_directory_totals_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxbench.compiler.corpus as corpus_module

    for n in range(3):
        (tmp_path / f"f{n}.md").write_text("x" * 100)
    monkeypatch.setattr(corpus_module, "MAX_DIRECTORY_BYTES", 250)
    with pytest.raises(InputError, match=r"expected at most 250 bytes of files in all, got "
                       r"more \(at f2\.md\)"):
        Corpus.from_directory(tmp_path)
    monkeypatch.setattr(corpus_module, "MAX_DIRECTORY_BYTES", 300)
    monkeypatch.setattr(corpus_module, "MAX_DIRECTORY_FILES", 2)
    with pytest.raises(InputError, match="expected at most 2 files, got more"):
        Corpus.from_directory(tmp_path)
    monkeypatch.setattr(corpus_module, "MAX_DIRECTORY_FILES", 3)
    assert len(Corpus.from_directory(tmp_path).artifacts) == 3
