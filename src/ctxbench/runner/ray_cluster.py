"""Which Ray cluster a run uses, and noticing when that cluster is gone.

Cluster selection is explicit. ``[execution].address``:

* left out, or ``"local"``: a private cluster started for this run and stopped after it,
  whatever ``RAY_ADDRESS`` says and whichever ``ray start`` cluster runs on the machine
  (``RAY_ADDRESS`` is cleared for the start, so nothing it names is attached to);
* ``"auto"``: the cluster Ray finds (``RAY_ADDRESS``, else the ``ray start`` cluster of
  this machine), as Ray documents it;
* ``"HOST:PORT"`` (a GCS address) or ``"ray://HOST:10001"`` (Ray Client, which needs
  ``ray[client]``, part of ``ctxbench[ray]``): that cluster.

A process that already called ``ray.init`` keeps its own cluster (a library caller's
choice). While trials run, :class:`GcsWatch` connects to the cluster's GCS once a second;
when it cannot for :data:`GCS_LOST_S` seconds the cluster is declared lost and the run
stops (exit 3, resumable) rather than waiting for Ray's own minute-long reconnect timeout.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import time
from typing import Any

from ctxbench.core import InputError, RuntimeFailure
from ctxbench.runner.execution import ExecutionSpec

__all__ = ["GCS_LOST_S", "ClusterLost", "GcsWatch", "connect", "last_line"]

#: Seconds without a GCS connection after which the cluster counts as lost.
GCS_LOST_S = 10.0
_PROBE_EVERY_S = 1.0
_AUTH_HINT = ("if the cluster uses token authentication, set RAY_AUTH_MODE=token and "
              "RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) in this environment")


class ClusterLost(RuntimeFailure):
    """The Ray cluster stopped answering: the trials in flight are not recorded."""


def connect(ray: Any, ex: ExecutionSpec, *, install_hint: str) -> bool:
    """Start or join the cluster ``ex`` names; True when this run started it (and owns it)."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "logging_level": "ERROR"}
    address = ex.address or "local"
    shown = "a private local cluster" if address == "local" else address
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise InputError(f'[execution].address: "{address}" needs Ray Client '
                         f"(ray[client]), which is not installed; install it with: "
                         f"{install_hint}")
    kwargs["address"] = address
    if address == "local":
        kwargs["num_cpus"] = ex.local_num_cpus or os.cpu_count() or 1
    saved = os.environ.pop("RAY_ADDRESS", None) if address == "local" else None
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError,
            ray.exceptions.RayError) as exc:  # RayError: AuthenticationError among others
        hint = "" if address == "local" or os.environ.get("RAY_AUTH_MODE") else \
            f"; {_AUTH_HINT}"
        raise RuntimeFailure(f"[execution]: cannot reach the Ray cluster ({shown}): "
                             f"{last_line(exc)}{hint}") from exc
    finally:
        if saved is not None:
            os.environ["RAY_ADDRESS"] = saved
    return True


def last_line(exc: BaseException) -> str:
    """The last line of an exception's text (Ray's own carry tracebacks), bounded."""
    lines = str(exc).strip().splitlines()
    return lines[-1][:300] if lines else type(exc).__name__


def _gcs_endpoint(ray: Any) -> tuple[str, int] | None:
    try:
        address = str(ray.get_runtime_context().gcs_address)
    except Exception:  # Ray Client and older versions have none to give
        return None
    host, sep, port = address.rpartition(":")
    return (host.strip("[]"), int(port)) if sep and port.isdigit() else None


class GcsWatch:
    """A task that probes the GCS; :attr:`lost` completes when the cluster is gone.

    Off under Ray Client (``ray://``: the GCS address Ray reports is the cluster's own,
    which the driver may not reach), and armed only after one probe has succeeded, so a
    GCS this machine cannot reach directly never reads as a dead cluster.
    """

    def __init__(self, ray: Any, *, client: bool = False) -> None:
        self._endpoint = None if client else _gcs_endpoint(ray)
        self._task: asyncio.Task[None] | None = None
        self.lost: asyncio.Future[ClusterLost] | None = None

    def start(self) -> None:
        """Begin probing (inside the running loop; idempotent; no-op under Ray Client)."""
        if self._task is not None or self._endpoint is None:
            return
        self.lost = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._watch())

    def error(self) -> ClusterLost | None:
        """The loss, once declared."""
        if self.lost is not None and self.lost.done():
            return self.lost.result()
        return None

    def reachable(self) -> bool:
        """One probe now (blocking, at most a second)."""
        if self._endpoint is None:
            return True
        try:
            with socket.create_connection(self._endpoint, timeout=_PROBE_EVERY_S):
                return True
        except OSError:
            return False

    async def _watch(self) -> None:
        assert self.lost is not None and self._endpoint is not None
        last_seen: float | None = None
        while True:
            if await asyncio.to_thread(self.reachable):
                last_seen = time.monotonic()
            elif last_seen is not None and time.monotonic() - last_seen >= GCS_LOST_S:
                host, port = self._endpoint
                self.lost.set_result(ClusterLost(
                    f"the Ray cluster stopped answering: no connection to its GCS at "
                    f"{host}:{port} for {GCS_LOST_S:g} s; the trials in flight are not "
                    "recorded and run again on resume"))
                return
            await asyncio.sleep(_PROBE_EVERY_S)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
