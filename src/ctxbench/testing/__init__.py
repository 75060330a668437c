"""Helpers for tests of code that uses ctxbench: synthetic CEF trials and a loopback model.

    from ctxbench.testing import ConditionEffect, LoopbackServer, generate_records

    effect = ConditionEffect(context_ratio=0.6, commit=True)   # carries a commit id
    records = generate_records(conditions={"entroly": effect},
                               tasks=40, seed=7)     # "raw" and "entroly", paired per task
    with LoopbackServer() as server:         # an OpenAI-compatible endpoint on 127.0.0.1
        print(server.base_url)

Nothing here is a measurement. Synthetic records carry the usage and cost sources the
caller passes (``usage_source``, ``cost_source``; pass ``deterministic_fixture`` and
``zero_cost_fixture`` and any report of them is a conformance fixture); the loopback
server answers with the first words of the question and word-count usage.
Neither is used by the library itself; both ship so that a user's tests, like
ctxbench's own, need no network and no model.
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.testing.cef_trials import ConditionEffect, base_record, generate_records
    from ctxbench.testing.loopback import LoopbackServer, SeenRequest

__all__ = ["ConditionEffect", "LoopbackServer", "SeenRequest", "base_record",
           "generate_records"]

_WHERE = {
    "ConditionEffect": "cef_trials",
    "LoopbackServer": "loopback",
    "SeenRequest": "loopback",
    "base_record": "cef_trials",
    "generate_records": "cef_trials",
}

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
