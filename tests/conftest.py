"""Settings shared by every test: hypothesis without per-example deadlines.

The test machines are shared and loaded, so a wall-clock deadline per example would
make property tests flaky without testing anything about ctxbench.
"""

from hypothesis import settings

settings.register_profile("ctxbench", deadline=None)
settings.load_profile("ctxbench")
