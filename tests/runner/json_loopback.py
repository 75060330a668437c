"""The scaffolding of the loopback JSON servers the runner's tests talk to.

A subclass implements :meth:`JsonLoopback.respond` (status, reply and extra headers of
one POST, given its path, body and its number among the bodies received); the base
keeps every body (``bodies``), records problems a subclass notices (``problems``), and
serves on 127.0.0.1 on a free port while the ``with`` block lasts.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class JsonLoopback:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                with server.lock:
                    server.bodies.append(body)
                    number = len(server.bodies)
                status, reply, headers = server.respond(self.path, body, number)
                data = json.dumps(reply).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def respond(self, path: str, body: dict[str, Any],
                number: int) -> tuple[int, dict[str, Any], dict[str, str]]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
