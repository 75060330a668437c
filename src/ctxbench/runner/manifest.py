"""The run manifest: what was run, with what, where — written before the first trial.

It holds the spec (its decoded TOML and the BLAKE3 of its bytes), the ctxbench version,
provider and model identities, the pricing snapshot digest, the prompt template digest,
Python and platform. It never holds an API key: only the NAME of its variable, nor an
absolute path: the spec's and the workload file's are relative to the run folder.
"""

from __future__ import annotations

import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxbench import __version__
from ctxbench.core import InputError, load_json_document
from ctxbench.core.atomic import path_from
from ctxbench.runner.prompt import PROMPT_TEMPLATE_DIGEST
from ctxbench.runner.spec import ExperimentSpec

__all__ = ["MANIFEST_SCHEMA", "build_manifest", "check_resumable"]

MANIFEST_SCHEMA = "ctxbench.run-manifest.v1"


def _jsonable(value: Any) -> Any:
    # TOML dates and times have no JSON form; keep them as their ISO text.
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def build_manifest(*, spec: ExperimentSpec, run_id: str, workload: dict[str, Any],
                   provider: dict[str, Any], pricing: dict[str, Any], tokenizer: str,
                   conditions: list[str], trials_planned: int, labels: list[str],
                   judge: dict[str, Any] | None = None,
                   execution: dict[str, Any] | None = None,
                   strategies: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest document (``ctxbench.run-manifest.v1``)."""
    manifest: dict[str, Any] = {
        "schema_version": MANIFEST_SCHEMA,
        "run_id": run_id,
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ctxbench_version": __version__,
        # Paths relative to the run folder (where the manifest is), never absolute.
        "spec": {"path": path_from(spec.output, spec.path), "blake3": spec.digest,
                 "document": _jsonable(spec.document)},
        "workload": _relative_source(workload, spec.output),
        "provider": provider,
        "pricing": pricing,
        "tokenizer": tokenizer,
        "prompt_template_blake3": PROMPT_TEMPLATE_DIGEST,
        "seed": spec.seed,
        "replicates": spec.replicates,
        "conditions": conditions,
        "trials_planned": trials_planned,
        "labels": labels,
        "judge": judge,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
    if execution is not None:
        manifest["execution"] = execution
    if strategies:
        manifest["strategies"] = strategies  # where each came from (docs/strategies.md)
    return manifest


def _relative_source(workload: dict[str, Any], out: Path) -> dict[str, Any]:
    """The workload record with a file ``source`` relative to the run folder (a name such
    as ``builtin:enterprise-seed`` or ``bfcl:live_multiple`` stays as it is); its
    ``version`` is the digest of what was read."""
    source = workload.get("source")
    if isinstance(source, str) and os.path.isabs(source):
        return {**workload, "source": path_from(out, source)}
    return workload


def check_resumable(path: Path, spec: ExperimentSpec) -> dict[str, Any]:
    """Load an existing manifest and refuse to resume when the spec has changed."""
    manifest = load_json_document(path)
    if not isinstance(manifest, dict) or manifest.get("schema_version") != MANIFEST_SCHEMA:
        raise InputError(f"{path}: expected a {MANIFEST_SCHEMA} manifest")
    recorded = manifest.get("spec", {}).get("blake3")
    if recorded != spec.digest:
        raise InputError(
            f"{spec.path}: the spec changed since this run started (BLAKE3 {recorded} in "
            f"{path}, now {spec.digest}); resuming would mix two experiments; start a new "
            "run with another output directory")
    return manifest
