"""Settings shared by every test: hypothesis derandomized, without per-example deadlines.

``make test`` must give the same verdict on every machine, so property tests draw their
examples from a seed fixed by each test's own source (``derandomize=True``) and read no
example database. The open-ended random search is a separate run: ``make fuzz`` sets
``CTXBENCH_HYPOTHESIS=fuzz`` (fresh random examples, the local database keeps what it
finds); every counterexample found there is added to its test as an ``@example``.

The test machines are shared and loaded, so a wall-clock deadline per example would
make property tests flaky without testing anything about ctxbench.
"""

import os

from hypothesis import settings

settings.register_profile("ctxbench", deadline=None, derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("fuzz", deadline=None, derandomize=False, print_blob=True,
                          max_examples=int(os.environ.get("CTXBENCH_FUZZ_EXAMPLES", "1000")))
settings.load_profile(os.environ.get("CTXBENCH_HYPOTHESIS", "ctxbench"))


def pytest_configure(config: object) -> None:
    """Keep the compiler's on-disk index cache out of the user's home during tests."""
    import tempfile

    if "CTXBENCH_CACHE_DIR" not in os.environ:
        os.environ["CTXBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="ctxbench-test-cache-")
