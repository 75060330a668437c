"""Named random streams: deterministic per (seed, names), independent across names."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import blake3_hex, derive_rng, derive_seed


def test_derive_seed_is_blake3_of_canonical_seed_and_names() -> None:
    assert derive_seed(7, "bootstrap", "raw") == int(blake3_hex(b'[7,"bootstrap","raw"]'), 16)
    assert derive_seed(0) == int(blake3_hex(b"[0]"), 16)
    assert 0 <= derive_seed(1, "x") < 2**256


def test_same_seed_and_names_give_the_same_stream() -> None:
    a = derive_rng(20240601, "cef", "bootstrap").random(8)
    b = derive_rng(20240601, "cef", "bootstrap").random(8)
    assert np.array_equal(a, b)


def test_different_names_or_seeds_give_different_streams() -> None:
    base = derive_rng(1, "a").random(4)
    assert not np.array_equal(base, derive_rng(1, "b").random(4))
    assert not np.array_equal(base, derive_rng(2, "a").random(4))
    assert not np.array_equal(base, derive_rng(1, "a", "b").random(4))
    # Names are list items, not concatenated text.
    assert derive_seed(1, "a", "b") != derive_seed(1, "ab")
    assert derive_seed(1, "a,b") != derive_seed(1, "a", "b")


def test_adding_a_stream_does_not_change_another() -> None:
    before = derive_rng(5, "condition", "raw").random(3)
    derive_rng(5, "condition", "compiled@800").random(100)
    after = derive_rng(5, "condition", "raw").random(3)
    assert np.array_equal(before, after)


def test_generator_is_pcg64() -> None:
    rng = derive_rng(3, "x")
    assert isinstance(rng.bit_generator, np.random.PCG64)
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(derive_seed(3, "x"))))
    assert np.array_equal(rng.integers(0, 1000, 16), expected.integers(0, 1000, 16))


_names = st.lists(st.text(max_size=8), max_size=4)
_seeds = st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)


@given(_seeds, _names)
def test_same_inputs_give_the_same_first_draws(seed: int, names: list[str]) -> None:
    assert np.array_equal(derive_rng(seed, *names).random(4), derive_rng(seed, *names).random(4))


@given(_seeds, _names, _names)
def test_different_names_give_different_seeds(seed: int, a: list[str], b: list[str]) -> None:
    if a != b:
        assert derive_seed(seed, *a) != derive_seed(seed, *b)
