"""``ctxbench view DIR``: a local, read-only server of the run pages under a directory.

It listens on 127.0.0.1 only (``http.server.ThreadingHTTPServer``) and answers GET and
HEAD, nothing else:

* ``/`` lists every run directory under DIR (up to :data:`MAX_DEPTH` levels down, at most
  :data:`MAX_RUNS`), with its model, trials recorded and planned, and whether it is going
  on (its ``run.lock`` is present: a run removes it when it ends);
* ``/run/REL/`` is the page ``ctxbench report DIR/REL --html`` would write, rendered on
  each request from the files as they are; while the run is going on, the page reloads
  itself every :data:`REFRESH_S` seconds (a ``<meta http-equiv="refresh">``, which works
  with script off);
* ``/run/REL/FILE`` is a raw file in a run directory (the page's links: trials, manifest, reports,
  packets), sent as ``text/plain`` or ``application/json`` with ``nosniff`` and a
  ``default-src 'none'`` policy, so nothing stored in a run is ever run as a page.

Nothing is written: pages are rendered into memory. A path with ``..``, a NUL, a
symlink or anything else resolving outside DIR, or a request whose ``Host`` is not this
server's loopback address (DNS rebinding), is refused (404 / 403) before any file is read.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ctxbench.core import CtxbenchError, InputError, load_json_document
from ctxbench.render.html.report import render_html
from ctxbench.render.html.sources import REPORT_FILES

__all__ = ["MAX_DEPTH", "MAX_RUNS", "REFRESH_S", "find_runs", "make_server"]

MAX_DEPTH = 4
MAX_RUNS = 1000
REFRESH_S = 5
_TYPES = {".json": "application/json", ".jsonl": "text/plain", ".md": "text/plain",
          ".txt": "text/plain", ".toml": "text/plain", ".torn": "text/plain"}
_LOCK = "run.lock"


def _is_run(path: Path) -> bool:
    return (path / "manifest.json").is_file() or any((path / n).is_file() for n in REPORT_FILES)


def find_runs(root: Path) -> list[Path]:
    """Run directories under ``root`` (itself included), sorted, no symlinked folders."""
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> Iterator[Path]:
        if _is_run(folder):
            yield folder
        if depth >= MAX_DEPTH:
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".") \
                    and entry.name != "packets":
                yield from walk(Path(entry.path), depth + 1)

    for run in walk(root, 0):
        found.append(run)
        if len(found) >= MAX_RUNS:
            break
    return found


def _inside(root: Path, rel: str) -> Path | None:
    """``root/rel`` resolved, or None if ``rel`` is not a plain path inside ``root``."""
    parts = rel.split("/")
    if "\0" in rel or "\\" in rel or any(p in ("..", ".") for p in parts):
        return None
    target = (root / rel).resolve()
    return target if target == root or root in target.parents else None


def _in_run(root: Path, target: Path) -> bool:
    """True when a folder holding ``target`` (up to ``root``) is a run directory."""
    folder = target.parent
    while folder == root or root in folder.parents:
        if _is_run(folder):
            return True
        folder = folder.parent
    return False


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return 0


def _index(root: Path) -> str:
    rows = []
    for run in find_runs(root):
        rel = run.relative_to(root).as_posix()
        href = "/run/" + "".join(quote(p) + "/" for p in rel.split("/") if p and p != ".")
        model = planned = ""
        if (run / "manifest.json").is_file():
            try:
                manifest = load_json_document(run / "manifest.json")
                model = str(manifest.get("provider", {}).get("model", ""))
                planned = str(manifest.get("trials_planned", ""))
            except (CtxbenchError, AttributeError):
                model = "(manifest.json unreadable)"
        state = "going on" if (run / _LOCK).exists() else "finished"
        rows.append(f'<tr><td><a href="{html.escape(href)}">{html.escape(rel or ".")}</a>'
                    f"</td><td>{html.escape(model)}</td><td class=\"n\">"
                    f"{_lines(run / 'trials.jsonl'):,}</td><td class=\"n\">"
                    f"{html.escape(planned)}</td><td>{state}</td></tr>")
    body = "".join(rows) or '<tr><td colspan="5">No run directory here.</td></tr>'
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\"><title>ctxbench view</title><style>"
            "body{font:15px/1.5 system-ui,'DejaVu Sans',sans-serif;margin:0 auto;"
            "max-width:1240px;padding:18px 20px}table{border-collapse:collapse}"
            "th,td{border:1px solid #d0d0d0;padding:.25em .55em;text-align:left}"
            "td.n{text-align:right}.wrap{overflow-x:auto}"
            "@media (max-width:700px){body{padding:10px;font-size:14px}"
            "th,td{padding:.2em .3em}}"
            "@media (prefers-color-scheme:dark){body{background:#151515;color:#e8e8e8}"
            "a{color:#56B4E9}}</style></head><body><h1>ctxbench view</h1>"
            f"<p>Runs under <code>{html.escape(str(root))}</code> (read-only; the pages are "
            "rendered from the files on each request).</p><div class=\"wrap\"><table><thead>"
            "<tr><th>run</th><th>model</th><th>trials recorded</th><th>trials planned</th>"
            f"<th>state</th></tr></thead><tbody>{body}</tbody></table></div></body></html>\n")


def _run_page(root: Path, run: Path) -> str:
    page = render_html([run], run / "index.html")
    if (run / _LOCK).exists():
        page = page.replace("<head>", f'<head><meta http-equiv="refresh" content="{REFRESH_S}">',
                            1)
    return page


class _Handler(BaseHTTPRequestHandler):
    server_version = "ctxbench-view"
    root: Path
    hosts: frozenset[str]

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, status: HTTPStatus, body: bytes, kind: str, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        if kind != "text/html":
            self.send_header("Content-Security-Policy", "default-src 'none'")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _fail(self, status: HTTPStatus, message: str, head: bool) -> None:
        self._send(status, f"{status.value} {status.phrase}: {message}\n".encode(),
                   "text/plain", head)

    def _answer(self, head: bool) -> None:
        if self.headers.get("Host", "") not in self.hosts:
            self._fail(HTTPStatus.FORBIDDEN, "this server answers its loopback address only",
                       head)
            return
        path = unquote(urlsplit(self.path).path, errors="strict")
        if path == "/":
            self._send(HTTPStatus.OK, _index(self.root).encode(), "text/html", head)
            return
        if not path.startswith("/run/"):
            self._fail(HTTPStatus.NOT_FOUND, "no such page", head)
            return
        target = _inside(self.root, path[len("/run/"):].rstrip("/"))
        if target is None:
            self._fail(HTTPStatus.NOT_FOUND, "no such run or file under the viewed directory",
                       head)
            return
        try:
            if path.endswith("/") and target.is_dir() and _is_run(target):
                self._send(HTTPStatus.OK, _run_page(self.root, target).encode(), "text/html",
                           head)
            elif not path.endswith("/") and target.is_file() and target.suffix in _TYPES \
                    and _in_run(self.root, target):
                self._send(HTTPStatus.OK, target.read_bytes(), _TYPES[target.suffix], head)
            else:
                self._fail(HTTPStatus.NOT_FOUND, "no such run or file under the viewed "
                           "directory", head)
        except CtxbenchError as exc:  # a damaged report or trial log: its one located line
            self._fail(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc), head)
        except OSError as exc:
            self._fail(HTTPStatus.NOT_FOUND, exc.strerror or type(exc).__name__, head)

    def do_GET(self) -> None:
        try:
            self._answer(head=False)
        except UnicodeDecodeError:
            self._fail(HTTPStatus.NOT_FOUND, "no such page", False)

    def do_HEAD(self) -> None:
        try:
            self._answer(head=True)
        except UnicodeDecodeError:
            self._fail(HTTPStatus.NOT_FOUND, "no such page", True)


def make_server(root: Path, port: int = 8765) -> ThreadingHTTPServer:
    """A server of ``root``'s runs on 127.0.0.1:``port`` (0: any free port); not started."""
    resolved = root.resolve()
    if not resolved.is_dir():
        raise InputError(f"{root}: expected a directory of runs")
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    bound = server.server_address[1]
    handler = type("Handler", (_Handler,), {
        "root": resolved,
        "hosts": frozenset({f"127.0.0.1:{bound}", f"localhost:{bound}"})})
    server.RequestHandlerClass = handler
    return server
