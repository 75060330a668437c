"""Where a run's trials execute: this machine's event loop (default) or a Ray cluster.

    [execution]
    backend = "ray"         # "local" (the default) or "ray"
    address = "auto"        # an existing cluster; "local" or left out: a private one
                            # started for this run (see ray_cluster.py)
    workers = 4             # provider workers (a model-holding provider loads once per worker)
    num_cpus = 1            # per worker, as Ray resources
    num_gpus = 0
    memory_mb = 0
    local_num_cpus = 2      # CPUs of the cluster started for the run (no ``address``)

Nothing imports Ray unless ``backend = "ray"`` is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.core import Fields

__all__ = ["BACKENDS", "MAX_WORKERS", "ExecutionSpec", "parse_execution"]

BACKENDS = ("local", "ray")
MAX_WORKERS = 1024
_RAY_ONLY = ("address", "workers", "num_cpus", "num_gpus", "memory_mb", "local_num_cpus")


@dataclass(frozen=True, slots=True)
class ExecutionSpec:
    """The execution backend and, for Ray, the cluster and each worker's resources."""

    backend: str = "local"
    address: str | None = None
    workers: int = 1
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory_mb: int = 0
    local_num_cpus: int | None = None


def parse_execution(t: Fields | None) -> ExecutionSpec:
    """Validate the ``[execution]`` table; Ray options under the local backend are errors."""
    if t is None:
        return ExecutionSpec()
    t.only({"backend", *_RAY_ONLY})
    backend = t.enum("backend", BACKENDS, optional=True) or "local"
    if backend == "local":
        for name in _RAY_ONLY:
            if t.has(name):
                t.fail(name, 'no Ray option when backend = "local" (set backend = "ray")',
                       t.raw(name))
        return ExecutionSpec()
    if t.has("address") and t.has("local_num_cpus") and t.raw("address") != "local":
        t.fail("local_num_cpus", 'no local_num_cpus with an address other than "local" '
               "(the cluster exists already)", t.raw("local_num_cpus"))
    num_cpus = t.number("num_cpus", minimum=0, maximum=1024, optional=True)
    num_gpus = t.number("num_gpus", minimum=0, maximum=64, optional=True)
    return ExecutionSpec(
        backend=backend,
        address=t.string("address", optional=True),
        workers=t.integer("workers", minimum=1, maximum=MAX_WORKERS, optional=True) or 1,
        num_cpus=1.0 if num_cpus is None else float(num_cpus),
        num_gpus=0.0 if num_gpus is None else float(num_gpus),
        memory_mb=t.integer("memory_mb", minimum=0, maximum=1 << 24, optional=True) or 0,
        local_num_cpus=t.integer("local_num_cpus", minimum=1, maximum=4096, optional=True),
    )
