"""Settings shared by every test: hypothesis without per-example deadlines, a private cache.

The test machines are shared and loaded, so a wall-clock deadline per example would
make property tests flaky without testing anything about ctxbench.
"""

from hypothesis import settings

settings.register_profile("ctxbench", deadline=None)
settings.load_profile("ctxbench")


def pytest_configure(config: object) -> None:
    """Keep the compiler's on-disk index cache out of the user's home during tests."""
    import os
    import tempfile

    if "CTXBENCH_CACHE_DIR" not in os.environ:
        os.environ["CTXBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="ctxbench-test-cache-")
