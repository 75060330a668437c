"""Token usage as providers report it, normalised into one breakdown."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TokenUsage"]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Provider-reported token counts, split so that no token is counted twice.

    ``uncached_input + cached_input + cache_write`` is the whole prompt the provider
    processed (the context); ``output`` excludes ``reasoning``, which is billed as output
    unless a pricing snapshot says otherwise.
    """

    uncached_input: int = 0
    cached_input: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0

    def __post_init__(self) -> None:
        for name in ("uncached_input", "cached_input", "cache_write", "output", "reasoning"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TokenUsage.{name}: expected an integer >= 0, got {value!r}")

    @property
    def context_tokens(self) -> int:
        """Every input token the provider processed: uncached + cached + cache writes."""
        return self.uncached_input + self.cached_input + self.cache_write

    @property
    def total_output(self) -> int:
        """Output tokens including reasoning tokens."""
        return self.output + self.reasoning

    @property
    def total(self) -> int:
        return self.context_tokens + self.total_output

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.uncached_input + other.uncached_input,
            self.cached_input + other.cached_input,
            self.cache_write + other.cache_write,
            self.output + other.output,
            self.reasoning + other.reasoning,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "uncached_input_tokens": self.uncached_input,
            "cached_input_tokens": self.cached_input,
            "cache_write_tokens": self.cache_write,
            "output_tokens": self.output,
            "reasoning_tokens": self.reasoning,
        }
