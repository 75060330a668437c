"""A hostile OpenAI-compatible server on loopback: one misbehaviour per ``mode``.

It speaks raw HTTP/1.1 over asyncio streams (so it can drip, truncate and reset), runs in
a background thread, and logs every request it received with its arrival time.

Modes: ok, slow_drip, huge_body, deep_nesting, gzip_bomb, header_echo, retry_after,
retry_after_date, error_5xx_usage, zero_usage, absurd_usage, negative_usage,
float_usage, truncated_body, connection_reset, wrong_content_type, non_json,
lone_surrogate.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import socket
import struct
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

MODES = ("slow_drip", "huge_body", "deep_nesting", "gzip_bomb", "header_echo",
         "retry_after", "retry_after_date", "error_5xx_usage", "zero_usage", "absurd_usage",
         "negative_usage", "float_usage", "truncated_body", "connection_reset",
         "wrong_content_type", "non_json", "lone_surrogate")

HUGE_BODY_BYTES = 300 * 10**6
_BOMB_MEMBER_ZEROS = 8 << 20
_BOMB_MEMBERS = 128  # 1 GiB of zeros in about 1 MB


def _bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = packer.compress(b"\0" * _BOMB_MEMBER_ZEROS) + packer.flush()
    return member * _BOMB_MEMBERS


@dataclass(frozen=True, slots=True)
class Seen:
    seed: int | None
    at: float
    headers: dict[str, str]


@dataclass(slots=True)
class _State:
    seen: list[Seen] = field(default_factory=list)
    by_seed: Counter[int | None] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def completion(content: str, usage: Any) -> bytes:
    return json.dumps({"id": "chatcmpl-hostile", "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": content},
                                    "finish_reason": "stop"}],
                       "usage": usage}).encode("utf-8")


GOOD_USAGE = {"prompt_tokens": 40, "completion_tokens": 3}


class HostileServer:
    """``with HostileServer("slow_drip") as server: server.base_url``."""

    def __init__(self, mode: str, *, shape: str = "openai") -> None:
        if mode not in MODES and mode != "ok":
            raise ValueError(mode)
        self.mode = mode
        self.shape = shape
        self.port = 0
        self._state = _State()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._bomb = _bomb() if mode == "gzip_bomb" else b""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def seen(self) -> list[Seen]:
        with self._state.lock:
            return list(self._state.seen)

    async def _send(self, writer: asyncio.StreamWriter, status: int, body: bytes, *,
                    content_type: str = "application/json",
                    extra: dict[str, str] | None = None, length: int | None = None) -> None:
        head = [f"HTTP/1.1 {status} X", f"content-type: {content_type}",
                f"content-length: {len(body) if length is None else length}",
                "connection: close"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()

    async def _respond(self, writer: asyncio.StreamWriter, headers: dict[str, str],
                       request: dict[str, Any], count: int) -> None:
        mode = self.mode
        ok = completion("The signing key was rotated by Alice.", GOOD_USAGE)
        if mode == "ok":
            await self._send(writer, 200, ok)
        elif mode == "slow_drip":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         + f"content-length: {len(ok)}\r\n\r\n".encode())
            for byte in ok:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.2)
        elif mode == "huge_body":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         + f"content-length: {HUGE_BODY_BYTES}\r\n\r\n".encode()
                         + b'{"pad": "')
            chunk = b"a" * (1 << 20)
            for _ in range(HUGE_BODY_BYTES // len(chunk)):
                writer.write(chunk)
                await writer.drain()
        elif mode == "deep_nesting":
            deep = "[" * 1000 + "]" * 1000
            body = ('{"choices": [{"message": {"content": "x"}}], "usage": '
                    '{"prompt_tokens": 4, "completion_tokens": 1, "extra": ' + deep + "}}")
            await self._send(writer, 200, body.encode() + b" " * 100_000)
        elif mode == "gzip_bomb":
            await self._send(writer, 200, self._bomb, extra={"content-encoding": "gzip"})
        elif mode == "header_echo" and self.shape == "anthropic":
            body = json.dumps({"id": headers.get("x-api-key", "none"), "type": "message",
                               "content": [{"type": "text", "text": json.dumps(headers)}],
                               "usage": {"input_tokens": 40, "output_tokens": 3,
                                         "echo": headers}})
            await self._send(writer, 200, body.encode(),
                             extra={"request-id": "req-" + headers.get("x-api-key", "")})
        elif mode == "header_echo":
            echoed = json.dumps(headers)
            await self._send(writer, 200, completion(echoed, {**GOOD_USAGE, "echo": headers}),
                             extra={"x-request-id": headers.get("authorization", "none")})
        elif mode in ("retry_after", "retry_after_date"):
            if count == 1:
                after = ("1" if mode == "retry_after" else
                         email.utils.formatdate(time.time() + 2, usegmt=True))
                await self._send(writer, 429, b'{"error": {"message": "slow down"}}',
                                 extra={"retry-after": after})
            else:
                await self._send(writer, 200, ok)
        elif mode == "error_5xx_usage":
            await self._send(writer, 500, json.dumps(
                {"error": {"message": "overloaded"},
                 "usage": {"prompt_tokens": 100, "completion_tokens": 5}}).encode())
        elif mode in ("zero_usage", "absurd_usage", "negative_usage", "float_usage"):
            usage = {"zero_usage": {"prompt_tokens": 0, "completion_tokens": 0},
                     "absurd_usage": {"prompt_tokens": 10**30, "completion_tokens": 1},
                     "negative_usage": {"prompt_tokens": 40, "completion_tokens": -5},
                     "float_usage": {"prompt_tokens": 1e30, "completion_tokens": 2.5}}[mode]
            await self._send(writer, 200, completion("Alice", usage))
        elif mode == "truncated_body":
            await self._send(writer, 200, ok[:40], length=len(ok))
        elif mode == "connection_reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif mode == "wrong_content_type":
            await self._send(writer, 200, b"<html><body>Alice</body></html>",
                             content_type="text/html")
        elif mode == "lone_surrogate":
            await self._send(writer, 200, completion("Alice \ud800", GOOD_USAGE))
        elif mode == "non_json":
            await self._send(writer, 200, b'{"choices": [ this is not json')

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            headers: dict[str, str] = {}
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name:
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            request = json.loads(body)
            seed = request.get("seed") if isinstance(request.get("seed"), int) else None
            with self._state.lock:
                self._state.by_seed[seed] += 1
                count = self._state.by_seed[seed]
                self._state.seen.append(Seen(seed, time.monotonic(), headers))
            await self._respond(writer, headers, request, count)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Shutting down while a slow mode still writes: end quietly (a cancelled
            # handler task makes asyncio's stream callback log an error).
            pass
        finally:
            with contextlib.suppress(ConnectionError, RuntimeError, OSError):
                writer.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        loop.run_forever()
        server.close()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait_for(server.wait_closed(), 2))
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()

        async def drain() -> None:
            await asyncio.gather(*pending, return_exceptions=True)

        loop.run_until_complete(drain())
        loop.close()

    def __enter__(self) -> HostileServer:
        self._thread = threading.Thread(target=self._run, name="hostile-http", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
