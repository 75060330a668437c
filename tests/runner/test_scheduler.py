"""Planning: fixed task order, seeded condition order, replicates, rate limiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from ctxbench.runner.ratelimit import RateLimiter
from ctxbench.runner.scheduler import plan_trials
from ctxbench.runner.spec import load_spec
from ctxbench.runner.workload import load_workload

CONDITIONS = ('[[conditions]]\nstrategy = "full_permitted_context"\n\n'
              '[[conditions]]\nstrategy = "compiled"\nbudgets = [200, 400]\n\n'
              '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = [200]\n')


def test_plan_order_is_fixed_and_recorded(make_spec: Callable[..., Path]) -> None:
    spec = load_spec(make_spec(replicates=2, conditions=CONDITIONS))
    plan = plan_trials(spec, load_workload(spec.workload))
    assert len(plan) == 2 * 4 * 2
    assert [p.task.task_id for p in plan] == ["q1"] * 8 + ["q2"] * 8
    first = plan[:8]
    # each condition's replicates run back to back, in the seeded condition order
    assert [p.replicate for p in first] == [0, 1] * 4
    assert [p.condition_order for p in first] == [0, 0, 1, 1, 2, 2, 3, 3]
    names = [p.condition for p in first[::2]]
    assert sorted(names) == ["compiled@200", "compiled@400", "full_permitted_context",
                             "naive_top_k@200"]
    again = plan_trials(spec, load_workload(spec.workload))
    assert [p.key for p in again] == [p.key for p in plan]


def test_condition_order_depends_on_seed_and_task(make_spec: Callable[..., Path]) -> None:
    orders = set()
    for seed in range(8):
        spec = load_spec(make_spec(conditions=CONDITIONS, top=""))
        spec = spec.__class__(**{**{f: getattr(spec, f) for f in spec.__slots__},
                                 "seed": seed})
        plan = plan_trials(spec, load_workload(spec.workload))
        orders.add(tuple(p.condition for p in plan[::2][:4]))
    assert len(orders) > 1


def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter(requests_per_minute=2)
    delays = []

    async def go() -> None:
        loop = asyncio.get_running_loop()
        await limiter.acquire()
        await limiter.acquire()
        delays.append(limiter._delay(loop.time() * 0 + __import__("time").monotonic(), 0))

    asyncio.run(go())
    assert 59.0 < delays[0] <= 60.0
    unlimited = RateLimiter()
    asyncio.run(unlimited.acquire(10**9))


def test_token_limit_waits_for_the_window() -> None:
    limiter = RateLimiter(tokens_per_minute=1000)
    limiter._events.append((100.0, 800))
    assert limiter._delay(110.0, 100) == 0.0
    assert limiter._delay(110.0, 300) == 50.0
