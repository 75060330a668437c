"""A synthetic, real-shaped corpus with a unique marker word on every line of each file.

Every line of artifact ``n`` carries the word ``mk{n}q`` so any leaked fragment of a
denied or disallowed artifact is detectable in a packet's text.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact, get_tokenizer
from ctxbench.core import blake3_hex

CLASSES = ("public", "internal", "confidential", "restricted")
WORDS = (
    "token", "refresh", "interval", "rotation", "signing", "key", "webhook", "retry",
    "ledger", "invoice", "failover", "region", "replica", "backup", "restore", "latency",
    "budget", "deploy", "rollback",
)


def marker(n: int) -> str:
    return f"mk{n}q"


def _markdown(n: int) -> str:
    m = marker(n)
    w = WORDS
    return (
        f"# Runbook {m}\n\nIntro {m} {w[n % NW]} {w[(n + 3) % NW]}.\n\n"
        f"## Steps {m}\n\n1. {m} rotate the {w[(n + 1) % NW]} {w[(n + 5) % NW]}\n"
        f"2. {m} check {w[(n + 2) % NW]}\n\n"
        f"```bash\n# {m} not a heading\necho {m}\n```\n\n"
        f"### Details {m}\n\n{m} " + f" {m} ".join(w[(n + k) % NW] for k in range(12)) + "\n"
    )


def _python(n: int) -> str:
    m = marker(n)
    w = WORDS
    return (
        f'"""Module {m} for {w[n % NW]}."""  # {m}\n\nimport os  # {m}\n\n\n'
        f"@staticmethod  # {m}\ndef {w[n % NW]}_{w[(n + 1) % NW]}(x):  # {m}\n"
        f"    return x  # {m} {w[(n + 4) % NW]}\n\n\n"
        f"class {w[(n + 2) % NW].title()}Manager:  # {m}\n"
        f"    def refreshToken(self):  # {m} {w[(n + 6) % NW]}\n        return 1  # {m}\n"
    )


def _json(n: int) -> str:
    m = marker(n)
    value = {f"{w}_{m}": {"note": f"{m} {w} {WORDS[(i + n) % NW]}"}
             for i, w in enumerate(WORDS[n % 5: n % 5 + 4])}
    return json.dumps(value, indent=2) + "\n"


def _chat(n: int) -> str:
    m = marker(n)
    return "".join(
        f"2026-03-04T09:{i:02d}:00Z [user{i}] {m} {WORDS[(n + i) % NW]} {WORDS[(n * i) % NW]}\n"
        for i in range(6)
    )


def _yaml(n: int) -> str:
    m = marker(n)
    return f"# {m}\nservice_{m}:\n  name: {WORDS[n % NW]} # {m}\nreplicas_{m}: 3 # {m}\n"


NW = len(WORDS)

MAKERS = (("md", "runbook", _markdown), ("py", "code", _python), ("json", "api_spec", _json),
          ("log", "chat", _chat), ("yaml", "infrastructure", _yaml))


def write_corpus(root: Path, count: int = 20) -> Corpus:
    """Write ``count`` artifacts under ``root`` with rotating kinds and classifications."""
    artifacts = []
    for n in range(count):
        suffix, kind, make = MAKERS[n % len(MAKERS)]
        rel = f"{kind}/doc{n:02d}.{suffix}"
        data = make(n).encode("utf-8")
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        artifacts.append(CorpusArtifact(f"a{n:02d}", rel, kind, CLASSES[n % 4], blake3_hex(data)))
    return Corpus(root, tuple(artifacts), "test")


@cache
def shared_index(root: str) -> ContextIndex:
    return ContextIndex.build(write_corpus(Path(root)), get_tokenizer())
