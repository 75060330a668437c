"""ctxbench.core: errors, strict JSON(L), canonical JSON, digests, atomic writes, usage, money.

This layer imports nothing else of ctxbench. ``derive_rng``/``derive_seed`` (numpy) are
imported on first use, so importing the error tree (as every CLI start does) stays light.
"""

from typing import TYPE_CHECKING, Any

from ctxbench.core.applog import AppendOnlyLog, torn_tail
from ctxbench.core.atomic import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    report_json_bytes,
)
from ctxbench.core.canonical import canonical_json
from ctxbench.core.digests import (
    BLAKE3_EMPTY,
    blake3_file,
    blake3_hex,
    blake3_json,
    is_hex64,
    sha256_file,
    sha256_hex,
)
from ctxbench.core.errors import (
    CtxbenchError,
    FieldError,
    InputError,
    InputErrors,
    IntegrityError,
    PointerError,
    ProviderError,
    RuntimeFailure,
    describe_value,
    pointer_join,
)
from ctxbench.core.fields import MISSING, Fields
from ctxbench.core.jsonl import JsonLine, TornLineError, iter_jsonl, load_json_document, read_jsonl
from ctxbench.core.money import micro_to_usd, usd_to_micro
from ctxbench.core.textfile import read_utf8
from ctxbench.core.tomlfile import load_toml
from ctxbench.core.usage import TokenUsage

__all__ = [
    "BLAKE3_EMPTY",
    "MISSING",
    "AppendOnlyLog",
    "CtxbenchError",
    "FieldError",
    "Fields",
    "InputError",
    "InputErrors",
    "IntegrityError",
    "JsonLine",
    "PointerError",
    "ProviderError",
    "RuntimeFailure",
    "TokenUsage",
    "TornLineError",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "blake3_file",
    "blake3_hex",
    "blake3_json",
    "canonical_json",
    "derive_rng",
    "derive_seed",
    "describe_value",
    "is_hex64",
    "iter_jsonl",
    "load_json_document",
    "load_toml",
    "micro_to_usd",
    "pointer_join",
    "read_jsonl",
    "read_utf8",
    "report_json_bytes",
    "sha256_file",
    "sha256_hex",
    "torn_tail",
    "usd_to_micro",
]

if TYPE_CHECKING:
    from ctxbench.core.rng import derive_rng, derive_seed


def __getattr__(name: str) -> Any:
    if name in ("derive_rng", "derive_seed"):
        from ctxbench.core import rng

        return getattr(rng, name)
    raise AttributeError(f"module 'ctxbench.core' has no attribute {name!r}")
