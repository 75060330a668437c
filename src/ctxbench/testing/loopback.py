"""A minimal OpenAI-compatible Chat Completions server on loopback, for tests and benchmarks.

It answers instantly (or after ``delay_s``) with the first words of the question, reports
OpenAI-shaped ``usage`` (word counts) and an ``x-request-id`` header, and logs every
request it saw. ``failures_per_seed`` makes the first N requests carrying each ``seed``
fail with ``fail_status`` (to exercise retries). Standard library only; never use it as a
model.

    with LoopbackServer() as server:
        print(server.base_url)        # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

__all__ = ["LoopbackServer", "SeenRequest"]


@dataclass(frozen=True, slots=True)
class SeenRequest:
    """One request as received: its ``seed`` (the trial's request seed) and HTTP status."""

    index: int
    seed: int | None
    status: int


@dataclass(slots=True)
class _State:
    requests: list[SeenRequest] = field(default_factory=list)
    by_seed: Counter[int | None] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    answered: int = 0


class LoopbackServer:
    """Run the server in a background thread; ``requests`` lists what it has seen."""

    def __init__(self, *, port: int = 0, delay_s: float = 0.0, failures_per_seed: int = 0,
                 fail_status: int = 429, hold_after: int | None = None) -> None:
        self.port = port
        self.hold_after = hold_after
        self._released = threading.Event()
        self.delay_s = delay_s
        self.failures_per_seed = failures_per_seed
        self.fail_status = fail_status
        self._state = _State()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    def release(self) -> None:
        """Answer the requests held back by ``hold_after``, and every later one at once."""
        self._released.set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[SeenRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def _respond(self, body: bytes) -> tuple[int, bytes, str]:
        try:
            request = json.loads(body)
        except ValueError:
            return 400, b'{"error":{"message":"invalid JSON"}}', "bad"
        seed = request.get("seed") if isinstance(request.get("seed"), int) else None
        with self._state.lock:
            index = len(self._state.requests)
            self._state.by_seed[seed] += 1
            failing = self._state.by_seed[seed] <= self.failures_per_seed
            status = self.fail_status if failing else 200
            self._state.requests.append(SeenRequest(index, seed, status))
        request_id = f"loopback-{index:08d}"
        if failing:
            return status, b'{"error":{"message":"injected failure"}}', request_id
        messages = request.get("messages") or [{}]
        user = str(messages[-1].get("content", ""))
        question = user.rpartition("Question: ")[2]
        answer = " ".join(question.split()[:8]) or "ok"
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
        completion = len(answer.split())
        cached = prompt_words // 2
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{request_id}", "object": "chat.completion", "created": 0,
            "model": request.get("model", "loopback"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": completion,
                      "total_tokens": prompt_words + completion,
                      "prompt_tokens_details": {"cached_tokens": cached},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        }
        return 200, json.dumps(payload).encode("utf-8"), request_id

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                if self.hold_after is not None and not self._released.is_set():
                    with self._state.lock:
                        held = self._state.answered >= self.hold_after
                        self._state.answered += 1
                    if held:
                        await asyncio.to_thread(self._released.wait)
                status, data, request_id = self._respond(body)
                reason = "OK" if status == 200 else "Error"
                writer.write(
                    f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(data)}\r\nx-request-id: {request_id}\r\n"
                    "connection: keep-alive\r\n\r\n".encode("ascii") + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            with contextlib.suppress(ConnectionError, RuntimeError):
                writer.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        loop.run_forever()
        self._server.close()
        loop.run_until_complete(self._server.wait_closed())
        loop.close()

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._run, name="loopback-openai", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._released.set()
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
