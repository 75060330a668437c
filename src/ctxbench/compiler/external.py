"""Benchmark any other context system as a strategy: a Python callable or a subprocess.

Protocol (one request, one response, both JSON objects)::

    request  = {"query": str, "budget": int | null, "tokenizer": str,
                "policy": {"allowed_classifications": [...], "denied_artifacts": [...]},
                "candidates": [{"artifact_id", "path", "kind", "classification",
                                "source_blake3", "start", "end", "score", "text"}, ...]}
    response = {"context": str, "selected": [{"artifact_id": str,
                                              "ranges": [[start, end], ...]}, ...]}

``candidates`` are the permitted chunks, best BM25 match first; denied or disallowed
artifacts are never offered. ``ranges`` may be omitted to mean the whole artifact. A
subprocess reads the request on stdin and writes the response on stdout.

ctxbench trusts none of the system's numbers: it counts the context's tokens itself,
hashes the exact context and takes source digests from its own corpus. Policy is
fail-closed: an unknown, denied or disallowed artifact in ``selected``, or a context that
is not made byte for byte of the selected ranges' text plus framing
(:func:`ctxbench.compiler.commit.external_context_problem`), is refused with a
RuntimeFailure and no packet is built, so such text never reaches a model. An exceeded
budget is not a policy breach: it is returned in ``violations``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ctxbench.compiler.commit import EXTERNAL_TEMPLATE, external_context_problem
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.packet import CompiledContext, finish_packet
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import Excerpt, merge_ranges
from ctxbench.core import InputError, RuntimeFailure

__all__ = [
    "CANDIDATE_LIMIT",
    "PIPE_GRACE_S",
    "RESPONSE_LIMIT",
    "ExternalStrategy",
    "compile_external",
    "load_external_strategy",
]

CANDIDATE_LIMIT = 200
#: After a command exits, how long the pipe may take to drain before the children that
#: hold it are killed (seconds).
PIPE_GRACE_S = 1.0
#: The largest response read from a command-line system (64 MiB); more is refused.
RESPONSE_LIMIT = 64 << 20
_CALLABLE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
ExternalStrategy = Callable[[dict[str, Any]], Any]


class _Subprocess:
    """Run a command per request: JSON on stdin, JSON on stdout, non-zero exit = failure.

    The answer is what the command wrote to stdout by the time it exited: a child it left
    behind that still holds stdout open does not make the answer wait for that child, nor
    throw it away. After the exit the pipe gets :data:`PIPE_GRACE_S` to drain, then the
    command's process group is killed. Bounded: stdout beyond :data:`RESPONSE_LIMIT`
    bytes or a command still running after ``timeout_s`` is killed (with its children);
    only the last 4 KiB of stderr are kept.
    """

    def __init__(self, argv: list[str], timeout_s: float) -> None:
        self.argv = argv
        self.timeout_s = timeout_s

    def __call__(self, request: dict[str, Any]) -> Any:
        name = self.argv[0][:200]
        try:
            # Its own session, so a deadline or an oversized answer ends the command's
            # children too.
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        except OSError as exc:
            raise RuntimeFailure(f"external strategy {name}: {exc.strerror or exc}") from exc
        stdout = _Collected(RESPONSE_LIMIT + 1, on_full=lambda: _kill(process))
        stderr: list[bytes] = []
        threads = [threading.Thread(target=_feed, args=(process, json.dumps(request)),
                                    daemon=True),
                   threading.Thread(target=stdout.read_all, args=(process.stdout,),
                                    daemon=True),
                   threading.Thread(target=_drain, args=(process, stderr), daemon=True)]
        deadline = time.monotonic() + self.timeout_s
        for thread in threads:
            thread.start()
        try:
            code: int | None = process.wait(self.timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            # What the command wrote before it exited is in the pipe; a child still
            # holding the pipe gets a bounded grace period, then is killed with the rest
            # of the group (which ends the read).
            threads[1].join(max(0.0, min(PIPE_GRACE_S, deadline - time.monotonic())))
            _kill(process)
            process.wait()
            threads[1].join(1.0)
            threads[2].join(1.0)
        out = stdout.data()
        if len(out) > RESPONSE_LIMIT:
            raise RuntimeFailure(f"external strategy {name}: expected a response of at "
                                 f"most {RESPONSE_LIMIT} bytes, got more")
        if code is None:
            raise RuntimeFailure(f"external strategy {name}: no answer within "
                                 f"{self.timeout_s:g} s (the command had not exited; "
                                 f"{len(out)} bytes on stdout)")
        if code != 0:
            tail = b"".join(stderr).decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise RuntimeFailure(f"external strategy {name}: exited {code}: {tail[0][:300]}")
        if not out.strip():
            raise RuntimeFailure(f"external strategy {name}: exited 0 without writing a "
                                 "response on stdout")
        try:
            return json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RuntimeFailure(
                f"external strategy {name}: stdout is not one JSON object: "
                f"{str(exc)[:200]}") from exc


class _Collected:
    """Bytes read from a pipe by a thread, up to ``limit`` (then ``on_full`` is called)."""

    def __init__(self, limit: int, *, on_full: Callable[[], None]) -> None:
        self._limit = limit
        self._on_full = on_full
        self._chunks: list[bytes] = []
        self._size = 0
        self._lock = threading.Lock()

    def read_all(self, pipe: IO[bytes] | None) -> None:
        assert pipe is not None
        fd = pipe.fileno()
        with contextlib.suppress(OSError):
            while chunk := os.read(fd, 65536):
                with self._lock:
                    chunk = chunk[: self._limit - self._size]
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    full = self._size >= self._limit
                if full:
                    self._on_full()
                    return

    def data(self) -> bytes:
        with self._lock:
            return b"".join(self._chunks)


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)


def _feed(process: subprocess.Popen[bytes], text: str) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.write(text.encode("utf-8"))
    with contextlib.suppress(OSError):
        process.stdin.close()


def _drain(process: subprocess.Popen[bytes], keep: list[bytes]) -> None:
    assert process.stderr is not None
    while chunk := process.stderr.read(65536):
        keep.append(chunk)
        while len(keep) > 1 and sum(map(len, keep)) > 4096 + 65536:
            keep.pop(0)


def load_external_strategy(spec: str, *, timeout_s: float = 120.0) -> ExternalStrategy:
    """``module:function`` imports a callable; anything else is a command line to run."""
    if _CALLABLE.fullmatch(spec):
        module_name, attr = spec.split(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise InputError(f"external strategy: cannot load {spec}: {exc}") from exc
        if not callable(target):
            raise InputError(f"external strategy: {spec} is not callable")
        return target  # type: ignore[no-any-return]
    argv = shlex.split(spec)
    if not argv:
        raise InputError("external strategy: expected module:function or a command line")
    return _Subprocess(argv, timeout_s)


def _candidates(index: ContextIndex, policy: Policy, query: str) -> list[dict[str, Any]]:
    view = index.view(policy)
    scores = view.scores(index.query_ids(query))
    order = np.lexsort((view.chunk_ids, -scores))[:CANDIDATE_LIMIT]
    out = []
    for row in order:
        chunk = index.chunks[int(view.chunk_ids[row])]
        position = int(index.chunk_artifact[view.chunk_ids[row]])
        artifact = index.artifact_at(position)
        text = index.source(position)[chunk.start:chunk.end].decode("utf-8", "replace")
        out.append({
            "artifact_id": artifact.artifact_id, "path": artifact.path, "kind": artifact.kind,
            "classification": artifact.classification, "source_blake3": artifact.blake3,
            "start": chunk.start, "end": chunk.end, "score": round(float(scores[row]), 6),
            "text": text,
        })
    return out


def _bad(message: str) -> RuntimeFailure:
    return RuntimeFailure(f"external strategy response: {message}")


def compile_external(
    index: ContextIndex,
    *,
    query: str,
    budget: int | None,
    policy: Policy,
    system: ExternalStrategy,
    name: str = "external",
) -> CompiledContext:
    """Ask ``system`` for a packet, then recount, rehash and policy-check what it returned."""
    request = {
        "query": query, "budget": budget, "tokenizer": index.tokenizer.id,
        "policy": policy.to_json(), "candidates": _candidates(index, policy, query),
    }
    response = system(request)
    if not isinstance(response, dict) or set(response) != {"context", "selected"}:
        raise _bad("expected an object with exactly context and selected")
    context, selected = response["context"], response["selected"]
    if not isinstance(context, str) or not isinstance(selected, list):
        raise _bad("context must be a string and selected an array")
    breaches: list[str] = []
    excerpts: list[Excerpt] = []
    for n, item in enumerate(selected):
        if not isinstance(item, dict) or not isinstance(item.get("artifact_id"), str):
            raise _bad(f"selected/{n}: expected an object with a string artifact_id")
        position = index.position(item["artifact_id"])
        if position is None:
            breaches.append(f"selected/{n}: unknown artifact {item['artifact_id'][:80]!r}")
            continue
        artifact = index.artifact_at(position)
        if not index.permits(position, policy):
            # Never read: a denied or disallowed artifact's bytes are not even compared.
            breaches.append(f"selected/{n}: artifact {artifact.artifact_id!r} is denied or "
                            f"disallowed")
            continue
        ranges = _ranges(item.get("ranges"), len(index.source(position)), n)
        excerpts.append(Excerpt(artifact.artifact_id, artifact.path, artifact.classification,
                                artifact.blake3, ranges))
    excerpts = _merged(excerpts)
    if not breaches:
        problem = external_context_problem(context, [
            (e, index.source(_position(index, e.artifact_id))) for e in excerpts])
        if problem is not None:
            breaches.append(f"context: {problem}")
    if breaches:
        shown = "; ".join(breaches[:5]) + (f"; ... and {len(breaches) - 5} more"
                                            if len(breaches) > 5 else "")
        raise _bad(f"refused, no packet was built (policy is fail-closed): {shown}")
    count = index.count(context)
    violations: list[str] = []
    if budget is not None and count > budget:
        violations.append(f"{count} tokens exceed the budget {budget}")
    return finish_packet(
        index, query=query, budget=budget, policy=policy, strategy=name, text=context,
        token_count=count, excerpts=tuple(excerpts),
        empty_reason=None if context else "the system returned none",
        template=EXTERNAL_TEMPLATE, violations=tuple(violations),
    )


def _position(index: ContextIndex, artifact_id: str) -> int:
    position = index.position(artifact_id)
    assert position is not None  # excerpts hold only artifacts found in the index
    return position


def _merged(excerpts: list[Excerpt]) -> list[Excerpt]:
    """One excerpt per artifact (first-mention order), its ranges merged."""
    order: dict[str, Excerpt] = {}
    for excerpt in excerpts:
        seen = order.get(excerpt.artifact_id)
        ranges = excerpt.ranges if seen is None else merge_ranges((*seen.ranges, *excerpt.ranges))
        order[excerpt.artifact_id] = Excerpt(excerpt.artifact_id, excerpt.path,
                                             excerpt.classification, excerpt.source_blake3, ranges)
    return list(order.values())


def _ranges(value: Any, size: int, n: int) -> tuple[tuple[int, int], ...]:
    """Validated ranges within an artifact of ``size`` bytes (None: the whole artifact)."""
    if value is None:
        if size == 0:
            raise _bad(f"selected/{n}: the artifact is empty; there is nothing to select")
        return ((0, size),)
    if not isinstance(value, list) or not value:
        raise _bad(f"selected/{n}/ranges: expected a non-empty array of [start, end]")
    out = []
    for pair in value:
        ok = (isinstance(pair, list) and len(pair) == 2
              and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
              and 0 <= pair[0] < pair[1] <= size)
        if not ok:
            raise _bad(f"selected/{n}/ranges: {str(pair)[:80]} is not a range within the "
                       f"artifact")
        out.append((pair[0], pair[1]))
    return merge_ranges(out)
