"""ctxbench.core: errors, strict JSON(L), canonical JSON, digests, atomic writes, usage, money.

This layer imports nothing else of ctxbench. Its names are imported from their modules
on first use, so importing one module (the error tree, as every CLI start does) does not
import the rest (numpy for ``derive_rng``, blake3, rfc8785).
"""

from typing import TYPE_CHECKING

from ctxbench.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from ctxbench.core.applog import (
        AppendOnlyLog,
        torn_tail,
    )
    from ctxbench.core.atomic import (
        atomic_write_bytes,
        atomic_write_json,
        atomic_write_text,
        report_json_bytes,
    )
    from ctxbench.core.canonical import (
        canonical_json,
    )
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
        SettingError,
        describe_value,
        pointer_join,
    )
    from ctxbench.core.fields import (
        MISSING,
        Fields,
    )
    from ctxbench.core.jsonl import (
        JsonLine,
        TornLineError,
        iter_jsonl,
        load_json_document,
        read_jsonl,
    )
    from ctxbench.core.money import (
        micro_to_usd,
        usd_to_micro,
    )
    from ctxbench.core.rng import (
        derive_rng,
        derive_seed,
    )
    from ctxbench.core.textfile import (
        read_utf8,
    )
    from ctxbench.core.tomlfile import (
        load_toml,
    )
    from ctxbench.core.usage import (
        TokenUsage,
    )

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
    "SettingError",
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

_WHERE = {
    "BLAKE3_EMPTY": "ctxbench.core.digests",
    "MISSING": "ctxbench.core.fields",
    "AppendOnlyLog": "ctxbench.core.applog",
    "CtxbenchError": "ctxbench.core.errors",
    "FieldError": "ctxbench.core.errors",
    "Fields": "ctxbench.core.fields",
    "InputError": "ctxbench.core.errors",
    "InputErrors": "ctxbench.core.errors",
    "IntegrityError": "ctxbench.core.errors",
    "JsonLine": "ctxbench.core.jsonl",
    "PointerError": "ctxbench.core.errors",
    "ProviderError": "ctxbench.core.errors",
    "RuntimeFailure": "ctxbench.core.errors",
    "SettingError": "ctxbench.core.errors",
    "TokenUsage": "ctxbench.core.usage",
    "TornLineError": "ctxbench.core.jsonl",
    "atomic_write_bytes": "ctxbench.core.atomic",
    "atomic_write_json": "ctxbench.core.atomic",
    "atomic_write_text": "ctxbench.core.atomic",
    "blake3_file": "ctxbench.core.digests",
    "blake3_hex": "ctxbench.core.digests",
    "blake3_json": "ctxbench.core.digests",
    "canonical_json": "ctxbench.core.canonical",
    "derive_rng": "ctxbench.core.rng",
    "derive_seed": "ctxbench.core.rng",
    "describe_value": "ctxbench.core.errors",
    "is_hex64": "ctxbench.core.digests",
    "iter_jsonl": "ctxbench.core.jsonl",
    "load_json_document": "ctxbench.core.jsonl",
    "load_toml": "ctxbench.core.tomlfile",
    "micro_to_usd": "ctxbench.core.money",
    "pointer_join": "ctxbench.core.errors",
    "read_jsonl": "ctxbench.core.jsonl",
    "read_utf8": "ctxbench.core.textfile",
    "report_json_bytes": "ctxbench.core.atomic",
    "sha256_file": "ctxbench.core.digests",
    "sha256_hex": "ctxbench.core.digests",
    "torn_tail": "ctxbench.core.applog",
    "usd_to_micro": "ctxbench.core.money",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
