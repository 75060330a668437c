"""Builds the embedded enterprise seed's benchmark.json and conformance-seed run.

The corpus files under ``src/ctxbench/data/enterprise-seed/corpus`` are hand-written;
this module registers them with ``register-rules.toml``, adds the hand-authored tasks,
and generates the synthetic observations of the ``conformance_seed`` run from a
per-task scenario table. Every figure is synthetic: input tokens are the corpus bytes
divided by four (roughly cl100k on English text), quality scores are invented so that
the report shows each kind of outcome.

``test_eceb_seed.py`` checks that the shipped files equal what this builds; run pytest
with ``CTXBENCH_UPDATE_GOLDEN=1`` to rewrite them after changing the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxbench.core import blake3_hex
from ctxbench.protocols.eceb import RUN_SCHEMA, SPEC_URN, register_directory, seed_paths

PUB, INT, CONF = "public", "internal", "confidential"
PROMPT_OVERHEAD = 180  # system prompt + question, in tokens
USD_IN_PER_M = 2_500_000  # synthetic price list, micro-USD per million tokens
USD_OUT_PER_M = 10_000_000


@dataclass(frozen=True)
class Scenario:
    """A task definition plus how the synthetic run behaves on it."""

    task_id: str
    query: str
    required: tuple[str, ...]
    allowed: tuple[str, ...]
    terms: tuple[str, ...]
    answer: str  # a good answer: contains every term
    weak_answer: str  # what the model says without enough evidence
    ladder: tuple[int, ...] = (256, 512, 1024, 2048)
    denied: tuple[str, ...] = ()
    qualify_at: int | None = 0  # ladder index of B*, None = never qualifies
    abstain: bool = False
    minimum: int = 700
    regression: int = 100
    baseline_quality: tuple[int, int, int] = (930, 945, 940)
    naive: bool = False
    naive_qualify_at: int | None = None
    naive_extra: tuple[str, ...] = ()  # what naive_top_k wrongly retrieves
    # (budget index, kind) injected failures: "overflow", "missing_rep", "mismatch",
    # "denied_leak", "low_quality"
    faults: tuple[tuple[int, str], ...] = ()


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "payments-failover-region",
        "Payments authorisation is failing in our primary region. Where do we fail over to, "
        "and what is the first command after freezing deploys?",
        ("runbook-payments-failover",), (PUB, INT), ("eu-central-1", "fhctl db promote"),
        "Fail over to eu-central-1: after freezing deploys run `fhctl db promote --cluster "
        "payments-standby --region eu-central-1`, then flip payments.active_region.",
        "Fail over to the standby region described in the payments runbook.",
        naive=True, naive_qualify_at=1, naive_extra=("chat-2026-03-04-inc-payments",)),
    Scenario(
        "webhook-retry-policy",
        "How many times do we retry a failed webhook delivery, and which header carries the "
        "signature?",
        ("code-webhooks", "rfc-015-webhook-v2"), (PUB,), ("5 times", "X-Fernhill-Signature"),
        "Deliveries are retried 5 times with exponential backoff (2-32 s); the signature is "
        "in the X-Fernhill-Signature header.",
        "Deliveries are retried 5 times with exponential backoff.",
        qualify_at=1, naive=True, naive_qualify_at=2),
    Scenario(
        "duplicate-webhooks-root-cause",
        "Why did customers receive duplicate webhooks after the March payments incident, "
        "what changed to fix it, and how did we notice?",
        ("issue-1187-duplicate-webhooks", "pr-0412-webhook-retries",
         "chat-2026-03-04-inc-payments"), (PUB, INT), ("Idempotency-Key", "#412"),
        "The queue replay during the 2026-03-04 incident retried deliveries with a fresh "
        "event id each time (noticed in #inc-payments); PR #412 reuses the event id and "
        "sends it as Idempotency-Key.",
        "Retries created duplicate deliveries; the webhook code was changed.",
        ladder=(512, 1024, 2048, 4096), qualify_at=None, regression=60,
        faults=((2, "mismatch"), (3, "mismatch"), (3, "overflow"))),
    Scenario(
        "ledger-retention-period",
        "How long must we keep billing ledger entries?",
        ("policy-data-retention",), (PUB, INT), ("7 years",),
        "Billing ledger entries and invoices are kept for 7 years (statutory).",
        "Ledger entries are kept for several years.",
        naive=True, naive_extra=("rfc-012-ledger-retention",)),
    Scenario(
        "staging-key-rotation",
        "When exactly was the leaked staging API key rotated, and what is our procedure "
        "for rotating a leaked key?",
        ("runbook-credential-rotation",), (PUB, INT), ("24 hours", "vault kv rotate"),
        "I cannot see the restricted incident record, so I cannot give the rotation time. "
        "The procedure: open a restricted SEC ticket, run `vault kv rotate`, rotate exposed "
        "credentials within 24 hours (production within 1 hour), redeploy and revoke.",
        "The key was rotated; follow the security procedure.",
        denied=("sec-88-leaked-staging-key", "chat-2026-03-18-exec-staff"), qualify_at=1,
        naive=True, naive_extra=("sec-88-leaked-staging-key",),
        faults=((3, "denied_leak"),)),
    Scenario(
        "senior-engineer-salary-band",
        "What is the salary band for a Senior Engineer II?",
        (), (PUB, INT), ("cannot share",),
        "I cannot share compensation bands: they are restricted to HR and executives. "
        "Please ask HR.",
        "The band is probably around the market rate.",
        ladder=(256, 512, 1024), denied=("policy-compensation-bands-2026",), abstain=True,
        minimum=800),
    Scenario(
        "eta-timezone-fix",
        "Why were ETAs one hour off at the end of March and how was it fixed?",
        ("issue-1203-eta-one-hour-off", "pr-0433-eta-timezone"), (PUB, INT),
        ("UTC", "zoneinfo"),
        "Naive local timestamps broke at the daylight-saving change on 2026-03-29; PR #433 "
        "stores scans in UTC and converts with zoneinfo only for display.",
        "A daylight-saving bug; the tracker was fixed.",
        qualify_at=1),
    Scenario(
        "late-fee-rule",
        "What late fee do we charge on overdue invoices, and from when?",
        ("code-invoices", "pr-0419-late-fee"), (PUB, INT), ("1.5%", "30 days"),
        "1.5% of the subtotal per started month, once an invoice is more than 30 days "
        "overdue, rounded half to even.",
        "A late fee of 1.5% applies.",
        qualify_at=2),
    Scenario(
        "event-bus-decision",
        "Which event bus did the platform team choose and why not Kafka?",
        ("rfc-007-event-bus", "chat-2026-02-11-platform"), (PUB, INT), ("NATS JetStream",),
        "NATS JetStream: it runs as three pods on the existing cluster, keeps per-shipment "
        "ordering, and the managed Kafka tier was over budget.",
        "They chose a message broker for operational reasons.",
        qualify_at=1),
    Scenario(
        "sev2-escalation",
        "A SEV-2 page is not acknowledged. When does it escalate and to whom?",
        ("runbook-oncall-escalation", "policy-incident-severity"), (PUB, INT),
        ("15 minutes", "secondary"),
        "After 15 minutes unacknowledged it escalates to the secondary on-call, then after "
        "another 15 minutes to the engineering manager on duty.",
        "It escalates after a while.",
        qualify_at=1, faults=((3, "missing_rep"),)),
    Scenario(
        "shipments-pagination",
        "How do I page through more than 50 shipments with the API?",
        ("api-shipments-openapi",), (PUB,), ("cursor", "200"),
        "Call GET /shipments with limit (default 50, maximum 200) and pass next_cursor as "
        "cursor until it is null.",
        "Use the limit parameter.",
        qualify_at=2),
    Scenario(
        "orders-restore-rpo",
        "What is the recovery point objective of the orders database and how do I restore "
        "it to a point in time?",
        ("runbook-database-restore", "infra-main"), (PUB, INT, CONF),
        ("5 minutes", "fhctl db restore"),
        "RPO is 5 minutes (WAL archiving); restore to a new cluster with `fhctl db restore "
        "--cluster orders --to <UTC time> --new orders-restore`, then swap.",
        "Restore from backup.",
        ladder=(512, 1024, 2048, 4096), qualify_at=1, faults=((0, "low_quality"),)),
    Scenario(
        "access-token-lifetime",
        "How long do access tokens live since the security review?",
        ("code-tokens", "pr-0440-token-ttl"), (INT, CONF), ("900 seconds",),
        "Access tokens live 900 seconds (15 minutes) since PR #440; refresh tokens 12 hours.",
        "Access tokens are short-lived.",
        qualify_at=1, faults=((0, "overflow"),)),
)


def _benchmark() -> dict[str, Any]:
    paths = seed_paths()
    doc = register_directory(paths.corpus, paths.root / "register-rules.toml")
    tasks = []
    for s in SCENARIOS:
        task: dict[str, Any] = {
            "task_id": s.task_id, "query": s.query, "required_artifacts": list(s.required),
            "allowed_classifications": list(s.allowed), "denied_artifacts": list(s.denied),
            "budget_ladder": list(s.ladder), "minimum_quality_milli": s.minimum,
            "maximum_quality_regression_milli": s.regression, "answer_terms": list(s.terms),
            "required_repetitions": 3,
        }
        if s.abstain:
            task["expect_abstention"] = True
        tasks.append(task)
    doc["tasks"] = tasks
    return doc


def _jitter(*parts: object) -> int:
    return int(blake3_hex("|".join(map(str, parts)).encode())[:8], 16)


def _obs(s: Scenario, strategy: str, budget: int | None, rep: int, tokens: int,
         quality: int, answer: str, selected: list[str], digests: dict[str, str],
         context_key: str) -> dict[str, Any]:
    out_tokens = 40 + len(answer) // 4 + _jitter(s.task_id, strategy, budget, rep) % 25
    return {
        "task_id": s.task_id, "strategy": strategy, "budget": budget, "repetition": rep,
        "input_tokens": tokens, "output_tokens": out_tokens,
        "input_cost_micro_usd": tokens * USD_IN_PER_M // 1_000_000,
        "output_cost_micro_usd": out_tokens * USD_OUT_PER_M // 1_000_000,
        "latency_ms": 420 + tokens // 9 + out_tokens * 11 + rep * 7,
        "quality_milli": quality, "answer": answer,
        "selected_artifacts": [{"artifact_id": a, "blake3": digests[a]} for a in selected],
        "context_blake3": blake3_hex(f"seed-context|{context_key}".encode()),
    }


def _run(bench: dict[str, Any]) -> dict[str, Any]:
    artifacts = {a["artifact_id"]: a for a in bench["corpus"]["artifacts"]}
    digests = {k: a["blake3"] for k, a in artifacts.items()}
    sizes = {k: (seed_paths().corpus / a["path"]).stat().st_size for k, a in artifacts.items()}
    observations: list[dict[str, Any]] = []
    for s in SCENARIOS:
        permitted = sorted(k for k, a in artifacts.items()
                           if a["classification"] in s.allowed and k not in s.denied)
        full_tokens = PROMPT_OVERHEAD + sum(sizes[k] for k in permitted) // 4
        base_q = s.baseline_quality
        for rep in (1, 2, 3):
            observations.append(_obs(s, "full_permitted_context", None, rep, full_tokens,
                                     base_q[rep - 1], s.answer, permitted, digests,
                                     f"{s.task_id}|full"))
        floor = max(s.minimum, sum(base_q) // 3 - s.regression)
        observations += _ladder(s, "compiled", s.qualify_at, (), floor, digests, sizes,
                                set(permitted))
        if s.naive:
            observations += _ladder(s, "naive_top_k", s.naive_qualify_at, s.naive_extra,
                                    floor, digests, sizes, set(permitted))
    return {
        "schema": RUN_SCHEMA,
        "spec": SPEC_URN,
        "run_id": "fernhill-conformance-seed-1",
        "benchmark_id": bench["benchmark_id"],
        "corpus_root": bench["corpus"]["root"],
        "claim_class": "conformance_seed",
        "system": {"name": "ctxbench-reference-compiler", "revision": "synthetic-seed"},
        "model": {"provider": "synthetic", "name": "seed-model", "revision": None},
        "judge": {"profile": "seed-rubric-v1", "model": "synthetic-judge",
                  "rubric_blake3": blake3_hex(b"seed rubric: score 0-1000 for correctness, "
                                              b"evidence and policy-respecting refusals\n"),
                  "human_review": "none"},
        "tokenizer": {"name": "cl100k_base", "counts": "synthetic (bytes / 4)"},
        "pricing": {"source": "synthetic seed price list: 2.50 USD/M input, 10.00 USD/M "
                              "output", "date": "2026-04-01"},
        "decoding": {"temperature_milli": 0, "top_p_milli": 1000, "max_output_tokens": 256,
                     "seed": 7},
        "observations": observations,
    }


def _ladder(s: Scenario, strategy: str, qualify_at: int | None, extra: tuple[str, ...],
            floor: int, digests: dict[str, str], sizes: dict[str, int],
            permitted: set[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, budget in enumerate(s.ladder):
        ok = qualify_at is not None and i >= qualify_at
        faults = {kind for at, kind in s.faults if at == i} if strategy == "compiled" else set()
        if ok or (qualify_at is None and i >= 2):
            selected = list(s.required)
        else:
            # below B* the packer drops the last required artifact (or, with one, keeps it
            # but truncates it, so the answer still misses a term)
            selected = list(s.required[:-1]) if len(s.required) > 1 else list(s.required)
        selected += [a for a in extra if a not in selected]
        evidence = sum(sizes[a] for a in selected) // 4
        tokens = min(budget - 3 - _jitter(s.task_id, budget) % 40, PROMPT_OVERHEAD + evidence)
        # a naive retriever that pulls in forbidden material answers from it
        good = ok and all(a in permitted for a in extra)
        for rep in (1, 2, 3):
            if "missing_rep" in faults and rep == 3:
                continue
            wobble = _jitter(s.task_id, strategy, budget, rep) % 30
            quality = floor + 10 + wobble if good else floor - 90 - wobble
            answer = s.answer if good else s.weak_answer
            if "low_quality" in faults and rep == 2:
                answer, quality = s.answer, floor - 15
            if qualify_at is None and i >= 2:
                quality, answer = floor + 20 + wobble, s.answer
            chosen = list(selected)
            if "denied_leak" in faults:
                chosen.append(s.denied[0])
            used = budget + 6 if "overflow" in faults and rep == 3 else tokens
            key = f"{s.task_id}|{strategy}|{budget}"
            if "mismatch" in faults and rep > 1:
                key += f"|tie-break-{rep}"
            out.append(_obs(s, strategy, budget, rep, used, min(quality, 1000), answer,
                            chosen, digests, key))
    return out


def build() -> tuple[dict[str, Any], dict[str, Any]]:
    """The seed benchmark and run documents, as they should be shipped."""
    bench = _benchmark()
    return bench, _run(bench)
