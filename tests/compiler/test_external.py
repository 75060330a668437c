"""External systems: ctxbench recounts, rehashes and policy-checks what they return."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from compiler_corpus import write_corpus

from ctxbench.compiler import (
    ContextIndex,
    Policy,
    compile_external,
    get_tokenizer,
    load_external_strategy,
    verify_commit,
)
from ctxbench.core import InputError, IntegrityError, RuntimeFailure

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


def test_violations_are_recorded_never_trusted(
    index: ContextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    packet = compile_external(index, query=QUERY, budget=20, policy=POLICY,
                              system=load_external_strategy("external_system:cheater"))
    assert packet.violations == (
        "artifact 'a03' is denied or disallowed",
        "unknown artifact 'nope'",
        f"{packet.token_count} tokens exceed the budget 20",
    )


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
