"""Nesting depth of JSON text as the foreign-file checks measure it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core.foreignfile import json_depth


@pytest.mark.parametrize(("text", "depth"), [
    ("1", 0), ('"[[{"', 0), ("[]", 1), ('{"a": [1, {"b": "]]]"}]}', 3),
    ('["\\"[", [[]]]', 3), ("[" * 70 + "]" * 70, 70),
])
def test_depth_of_examples(text: str, depth: int) -> None:
    assert json_depth(text.encode()) == depth


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                     lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                     max_leaves=30)


@given(_JSON)
def test_depth_equals_the_parsed_values(value: object) -> None:
    assert json_depth(json.dumps(value).encode()) == _depth(value)
    assert json_depth(json.dumps(value, ensure_ascii=False).encode()) == _depth(value)
