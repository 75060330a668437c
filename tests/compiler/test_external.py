"""External systems: ctxbench recounts, rehashes and policy-checks what they return."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from compiler_corpus import marker, write_corpus
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxbench.compiler import (
    ContextIndex,
    Policy,
    compile_external,
    get_tokenizer,
    load_external_strategy,
    verify_commit,
)
from ctxbench.compiler.commit import commit_id
from ctxbench.core import InputError, IntegrityError, RuntimeFailure, blake3_hex

HERE = Path(__file__).parent
POLICY = Policy(("public", "internal"), ("a04",))
QUERY = "token refresh rotation"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus")
    write_corpus(path, 20)
    return path


@pytest.fixture(scope="module")
def index(root: Path) -> ContextIndex:
    return ContextIndex.build(write_corpus(root, 20), get_tokenizer())


def test_callable_and_subprocess_give_the_same_commit(
    index: ContextIndex, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    by_call = compile_external(index, query=QUERY, budget=500, policy=POLICY,
                               system=load_external_strategy("external_system:first_two"))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'external_system.py'))}"
    by_process = compile_external(index, query=QUERY, budget=500, policy=POLICY,
                                  system=load_external_strategy(command))
    assert by_call.commit_id == by_process.commit_id
    assert by_call.violations == ()
    assert by_call.token_count == get_tokenizer().count(by_call.text)
    assert by_call.commit["template"] == "external"
    verify_commit(by_call.commit, root, context_text=by_call.text)
    with pytest.raises(IntegrityError, match="supply its context text"):
        verify_commit(by_call.commit, root)
    with pytest.raises(IntegrityError, match="does not match rendered_blake3"):
        verify_commit(by_call.commit, root, context_text=by_call.text + " ")


def test_policy_breaches_are_refused_and_no_packet_is_built(
    index: ContextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    with pytest.raises(RuntimeFailure, match=re.escape(
            "external strategy response: refused, no packet was built (policy is fail-closed): "
            "selected/0: artifact 'a03' is denied or disallowed; selected/1: unknown artifact "
            "'nope'")):
        compile_external(index, query=QUERY, budget=20, policy=POLICY,
                         system=load_external_strategy("external_system:cheater"))


def test_an_exceeded_budget_is_a_recorded_violation(
    index: ContextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    packet = compile_external(index, query=QUERY, budget=5, policy=POLICY,
                              system=load_external_strategy("external_system:first_two"))
    assert packet.violations == (f"{packet.token_count} tokens exceed the budget 5",)
    assert packet.token_count > 5


def _source(index: ContextIndex, artifact_id: str) -> bytes:
    position = index.position(artifact_id)
    assert position is not None
    return index.source(position)


def _smuggle(index: ContextIndex, extra: str, *, where: str = "end") -> dict[str, Any]:
    """A permitted selection whose context also carries ``extra``."""
    text = _source(index, "a00").decode("utf-8")
    context = {"end": text + extra, "start": extra + text,
               "inside": text[:10] + extra + text[10:]}[where]
    return {"context": context, "selected": [{"artifact_id": "a00"}]}


@pytest.mark.parametrize("where", ["end", "start", "inside"])
def test_restricted_text_under_a_permitted_selection_is_refused(
    index: ContextIndex, where: str
) -> None:
    # a03 is restricted and a04 is denied: neither may reach a packet under a00's name.
    for forbidden in ("a03", "a04"):
        secret = _source(index, forbidden).decode("utf-8")
        response = _smuggle(index, secret, where=where)
        with pytest.raises(RuntimeFailure, match=r"context: character \d+ of the context "
                           r"starts text that is neither a whole line of a selected range "
                           r"nor framing"):
            compile_external(index, query=QUERY, budget=None, policy=POLICY,
                             system=_answering(response))
        assert marker(int(forbidden[1:])) in secret


def test_external_framing_is_accepted_and_nothing_else(index: ContextIndex) -> None:
    a00, a01 = _source(index, "a00"), _source(index, "a01")
    header = ("[excerpt artifact=a01 path=" + index.artifact_at(_position(index, "a01")).path
              + f" classification=internal bytes=0-{len(a01)}]\n")
    response = {"context": f"\n{header}{a01.decode()}\n[...]\n  \t{a00.decode()}\r\n",
                "selected": [{"artifact_id": "a00"}, {"artifact_id": "a01"}]}
    packet = compile_external(index, query=QUERY, budget=None, policy=POLICY,
                              system=lambda request: response)
    assert packet.text == response["context"]
    assert [e.artifact_id for e in packet.selected] == ["a00", "a01"]
    # Whole lines in another order, some twice, the last newline dropped: still only
    # permitted lines, so accepted.
    lines = a00.decode().splitlines(keepends=True)
    shuffled = "".join(reversed(lines)) + lines[0].rstrip("\n")
    packet = compile_external(index, query=QUERY, budget=None, policy=POLICY,
                              system=lambda request: {"context": shuffled,
                                                      "selected": [{"artifact_id": "a00"}]})
    assert packet.text == shuffled
    # A fragment of a line is refused, and so is a selection that was not sent.
    for context, message in (
        (lines[0] + lines[1] + lines[2][:5],
         f"character {len(lines[0]) + len(lines[1])} of the context starts text that is "
         f"neither"),
        (a00.decode().replace("\n", " ", 1), "character 0 of the context"),
        ("", "12 distinct line(s) of the selected ranges do not appear"),
        (lines[0], "11 distinct line(s) of the selected ranges do not appear"),
    ):
        response = {"context": context, "selected": [{"artifact_id": "a00"}]}
        with pytest.raises(RuntimeFailure, match=re.escape(message)):
            compile_external(index, query=QUERY, budget=None, policy=POLICY,
                             system=_answering(response))
    assert len(set(lines)) == 12


def test_ranges_must_be_line_aligned_so_characters_cannot_spell_a_secret(
    index: ContextIndex,
) -> None:
    # Single permitted characters re-joined could spell any text: refused.
    a00 = _source(index, "a00")
    ranges = [[n, n + 1] for n in (2, 3)]
    response = {"context": a00[2:4].decode(),
                "selected": [{"artifact_id": "a00", "ranges": ranges}]}
    with pytest.raises(RuntimeFailure, match=re.escape(
            "context: excerpt a00: byte range 2-4 does not start and end at line boundaries")):
        compile_external(index, query=QUERY, budget=None, policy=POLICY,
                         system=lambda request: response)


def test_verify_rechecks_the_external_context_byte_for_byte(
    index: ContextIndex, root: Path
) -> None:
    text = _source(index, "a00").decode()
    packet = compile_external(index, query=QUERY, budget=None, policy=POLICY,
                              system=lambda request: {"context": text,
                                                      "selected": [{"artifact_id": "a00"}]})
    verify_commit(packet.commit, root, context_text=packet.text)
    secret = _source(index, "a03").decode()
    # A commit re-hashed around smuggled text (its digest matches) still fails verification.
    forged = dict(packet.commit)
    forged["rendered_blake3"] = blake3_hex((text + secret).encode())
    forged["commit_id"] = commit_id(forged)
    with pytest.raises(IntegrityError, match="the context is not composed of the selected "
                       f"bytes: character {len(text)} of the context starts text"):
        verify_commit(forged, root, context_text=text + secret)


def _position(index: ContextIndex, artifact_id: str) -> int:
    position = index.position(artifact_id)
    assert position is not None
    return position


@pytest.mark.parametrize(("response", "message"), [
    ([], "expected an object with exactly context and selected"),
    ({"context": 1, "selected": []}, "context must be a string and selected an array"),
    ({"context": "", "selected": [3]}, "selected/0: expected an object with a string"),
    ({"context": "", "selected": [{"artifact_id": "a00", "ranges": [[5, 2]]}]},
     r"selected/0/ranges: \[5, 2\] is not a range within the artifact"),
    ({"context": "", "selected": [{"artifact_id": "a00", "ranges": []}]},
     "selected/0/ranges: expected a non-empty array"),
])
def test_malformed_responses_are_refused(
    index: ContextIndex, response: object, message: str
) -> None:
    with pytest.raises(RuntimeFailure, match=message):
        compile_external(index, query=QUERY, budget=100, policy=POLICY,
                         system=lambda request: response)


def test_failing_subprocess_and_bad_specs() -> None:
    failing = load_external_strategy(f"{shlex.quote(sys.executable)} -c 'import sys; "
                                     "sys.stderr.write(\"boom\\n\"); sys.exit(3)'")
    with pytest.raises(RuntimeFailure, match="exited 3: boom"):
        failing({"query": ""})
    garbage = load_external_strategy(shlex.join([sys.executable, "-c", "print('{oops')"]))
    with pytest.raises(RuntimeFailure, match="stdout is not one JSON object"):
        garbage({})
    with pytest.raises(InputError, match="cannot load no_such_module:fn"):
        load_external_strategy("no_such_module:fn")
    with pytest.raises(InputError, match="expected module:function or a command line"):
        load_external_strategy("   ")


@pytest.mark.timeout(60)
def test_a_command_line_system_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxbench.compiler.external as external

    monkeypatch.setattr(external, "RESPONSE_LIMIT", 1000)
    flood = load_external_strategy(shlex.join(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 5000)"]))
    with pytest.raises(RuntimeFailure, match="expected a response of at most 1000 bytes"):
        flood({"query": ""})
    slow = load_external_strategy(shlex.join([sys.executable, "-c", "import time; "
                                              "time.sleep(30)"]), timeout_s=0.5)
    with pytest.raises(RuntimeFailure, match=r"no answer within 0\.5 s"):
        slow({"query": ""})
    # A child that keeps stdout open after the command is killed does not hold the read.
    forked = load_external_strategy("sh -c 'sleep 60 & sleep 60'", timeout_s=0.5)
    with pytest.raises(RuntimeFailure, match=r"external strategy sh: no answer within 0\.5 s"):
        forked({"query": ""})
    deep = load_external_strategy(shlex.join(
        [sys.executable, "-c", "import sys; sys.stdout.write('[' * 500 + ']' * 500)"]))
    monkeypatch.setattr(external, "RESPONSE_LIMIT", 1 << 20)
    nested = load_external_strategy(shlex.join(
        [sys.executable, "-c", "import sys; sys.stdout.write('[' * 100000 + ']' * 100000)"]))
    with pytest.raises(RuntimeFailure, match="stdout is not one JSON object"):
        nested({"query": ""})
    shallow = deep({"query": ""})
    for _ in range(499):
        assert isinstance(shallow, list) and len(shallow) == 1
        shallow = shallow[0]
    assert shallow == []
    missing = load_external_strategy("/no/such/command --flag")
    with pytest.raises(RuntimeFailure, match="external strategy /no/such/command: No such file"):
        missing({})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_forbidden_line_is_ever_accepted(index: ContextIndex, data: st.DataObject) -> None:
    # Contexts mixing lines of permitted a00/a01 and of restricted a03 / denied a04, in any
    # order, with framing: accepted exactly when every line is permitted and all are sent.
    permitted = {aid: _source(index, aid).decode().splitlines(keepends=True)
                 for aid in ("a00", "a01")}
    allowed_lines = {line for lines in permitted.values() for line in lines}
    forbidden = [line for aid in ("a03", "a04")
                 for line in _source(index, aid).decode().splitlines(keepends=True)
                 if line not in allowed_lines]
    chosen = data.draw(st.lists(st.sampled_from(sorted(allowed_lines)), max_size=30))
    if data.draw(st.booleans()):
        chosen += sorted(allowed_lines)
    leaked = data.draw(st.lists(st.sampled_from(forbidden), max_size=2))
    framing = data.draw(st.lists(st.sampled_from(["", "\n", "  ", "[...]\n"]),
                                 min_size=len(chosen) + len(leaked),
                                 max_size=len(chosen) + len(leaked)))
    pieces = data.draw(st.permutations(chosen + leaked))
    context = "".join(f + p for f, p in zip(framing, pieces, strict=True))
    response = {"context": context,
                "selected": [{"artifact_id": "a00"}, {"artifact_id": "a01"}]}
    complete = set(chosen) >= allowed_lines
    try:
        packet = compile_external(index, query=QUERY, budget=None, policy=POLICY,
                                  system=lambda request: response)
    except RuntimeFailure as exc:
        assert leaked or not complete, exc
        event("refused")
        return
    event("accepted")
    assert not leaked and complete
    for line in forbidden:
        assert line not in packet.text or any(line in ok for ok in allowed_lines)


def _answering(response: object) -> Callable[[dict[str, Any]], object]:
    return lambda request: response


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text("utf-8")
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


@pytest.mark.timeout(60)
def test_a_child_that_keeps_stdout_open_does_not_lose_the_answer(tmp_path: Path) -> None:
    # The command answers and exits; the child it forked sleeps with stdout still open.
    answer = json.dumps({"context": "", "selected": []})
    pidfile = tmp_path / "child.pid"
    script = (f"sleep 50 & echo $! > {shlex.quote(str(pidfile))}; "
              f"printf %s {shlex.quote(answer)}")
    system = load_external_strategy(shlex.join(["sh", "-c", script]), timeout_s=20)
    assert system({"query": ""}) == {"context": "", "selected": []}
    # The child holding the pipe was ended with the command's process group.
    child = int(pidfile.read_text("utf-8"))
    deadline = time.monotonic() + 10
    while not _gone(child):
        assert time.monotonic() < deadline, "the child holding stdout was left running"
        time.sleep(0.05)
    silent = load_external_strategy(shlex.join(["sh", "-c", "sleep 50 & exit 0"]),
                                    timeout_s=20)
    with pytest.raises(RuntimeFailure, match="external strategy sh: exited 0 without writing "
                       "a response on stdout"):
        silent({"query": ""})
