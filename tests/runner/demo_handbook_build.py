"""Builds the demo handbook's benchmark.json (the workload of ``ctxbench demo``).

The corpus files under ``src/ctxbench/data/demo-handbook/corpus`` are hand-written; this
module registers them with ``register-rules.toml`` and adds the hand-authored tasks of
:data:`TASKS`. ``test_demo_handbook.py`` checks that the shipped file equals what this
builds; run pytest with ``CTXBENCH_UPDATE_GOLDEN=1`` to rewrite it after a change.

The first :data:`DEV_TASKS` tasks are the development subset: the demo's prompt and
settings were chosen by looking at the embedded model's answers on them only; the other
tasks were not looked at while choosing (docs/runner.md reports the baseline on both).
"""

from __future__ import annotations

from typing import Any

from ctxbench.protocols.eceb import register_directory
from ctxbench.runner.demo import handbook_paths

ALLOWED = ("public", "internal")
LADDER = (192, 288, 384)
DEV_TASKS = 5

# Each question is asked by a member of one department, who may read the documents of
# that department only: the others' documents are the task's denied artifacts. The full
# permitted context of a task is therefore 2-4 short documents (~200-400 tokens).
DEPARTMENTS: dict[str, tuple[str, ...]] = {
    "people": ("policy-travel", "policy-remote-work"),
    "operations": ("runbook-tracking-service", "runbook-payments-oncall",
                   "runbook-database-backups"),
    "office": ("chat-2026-03-02-platform", "chat-2026-02-20-office"),
    "engineering": ("infra-limits", "infra-regions", "issue-1301-label-printer",
                    "issue-1317-eta-emails"),
}

# (task_id, query, answer terms, required artifacts)
TASKS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("meal-allowance", "Up to how many euros per day are meals reimbursed while travelling?",
     ("45 euros",), ("policy-travel",)),
    ("tracking-port", "Which port does the tracking service listen on?", ("8443",),
     ("runbook-tracking-service",)),
    ("oncall-handover", "On which day does the payments on-call rotation change?",
     ("Monday",), ("runbook-payments-oncall",)),
    ("backup-bucket", "In which bucket are the database backups stored?",
     ("fh-backups-eu",), ("runbook-database-backups",)),
    ("event-bus", "Which event bus did the platform team pick?", ("NATS JetStream",),
     ("chat-2026-03-02-platform",)),
    ("remote-days", "How many days per week may staff work from home?", ("3 days",),
     ("policy-remote-work",)),
    ("core-hours", "What are the core hours?", ("10:00", "15:00"), ("policy-remote-work",)),
    ("tracking-owner", "Which team owns the tracking service?", ("routing",),
     ("runbook-tracking-service",)),
    ("escalation-time", "After how many minutes does an unacknowledged payments page "
     "escalate?", ("15 minutes",), ("runbook-payments-oncall",)),
    ("backup-frequency", "How often is the orders database backed up?", ("6 hours",),
     ("runbook-database-backups",)),
    ("migration-start", "When does the event bus migration start?", ("April 14",),
     ("chat-2026-03-02-platform",)),
    ("migration-lead", "Who leads the event bus migration?", ("Priya Natarajan",),
     ("chat-2026-03-02-platform",)),
    ("office-address", "Where does the Rotterdam office move to?", ("Wilhelminakade 91",),
     ("chat-2026-02-20-office",)),
    ("office-desks", "How many desks does the new Rotterdam office have?", ("40",),
     ("chat-2026-02-20-office",)),
    ("printer-fix", "Which firmware version fixed the label printer?", ("4.5",),
     ("issue-1301-label-printer",)),
    ("eta-email-fix", "Which pull request fixed the duplicate ETA emails?", ("#482",),
     ("issue-1317-eta-emails",)),
    ("api-rate-limit", "How many requests per minute does the public shipments API allow?",
     ("600 requests",), ("infra-limits",)),
    ("page-size", "How many items does a page of shipments hold at most?", ("200",),
     ("infra-limits",)),
    ("failover-region", "Which region do payments fail over to?", ("eu-central-1",),
     ("infra-regions",)),
    ("staging-region", "In which region does the staging cluster run?", ("eu-north-1",),
     ("infra-regions",)),
    ("key-expiry", "After how many days do API keys expire?", ("90 days",),
     ("infra-limits",)),
    ("hotel-booking", "Through which portal are hotels booked?", ("TripDesk",),
     ("policy-travel",)),
    ("expense-deadline", "Within how many days must expense claims be filed?", ("30 days",),
     ("policy-travel",)),
    ("restore-test", "When is a restore of the database tested?", ("first Friday",),
     ("runbook-database-backups",)),
)


def build_benchmark() -> dict[str, Any]:
    """The registry of the handbook corpus with :data:`TASKS`."""
    paths = handbook_paths()
    doc = register_directory(paths.corpus, paths.root / "register-rules.toml")
    doc["tasks"] = [
        {"task_id": task_id, "query": query, "required_artifacts": list(required),
         "allowed_classifications": list(ALLOWED),
         "denied_artifacts": _others(required),
         "budget_ladder": list(LADDER), "minimum_quality_milli": 700,
         "maximum_quality_regression_milli": 100, "answer_terms": list(terms),
         "required_repetitions": 3}
        for task_id, query, terms, required in TASKS]
    return doc


def _others(required: tuple[str, ...]) -> list[str]:
    """The documents of every department but the one holding ``required``."""
    home = [name for name, members in DEPARTMENTS.items() if set(required) <= set(members)]
    assert len(home) == 1, required
    return sorted(a for name, members in DEPARTMENTS.items() if name != home[0]
                  for a in members)
