"""The optional ``sequential`` table of a CEF preregistration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.prereg import load_preregistration, parse_preregistration
from ctxbench.schemas import validator

_SEQ = {"every": 60, "max_tasks": 300, "method": "pocock", "futility": True}


def _doc(**seq: object) -> dict[str, Any]:
    table = {k: v for k, v in {**_SEQ, **seq}.items() if v is not None}
    return {"protocol_version": "entroly-cef-1", "sequential": table}


def test_a_toml_table_is_read_digested_and_valid(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('protocol_version = "entroly-cef-1"\n\n[sequential]\nevery = 60\n'
                    'max_tasks = 290\nmethod = "obrien_fleming"\nfutility = false\n')
    prereg = load_preregistration(path)
    assert prereg.sequential is not None
    assert prereg.sequential.looks == (60, 120, 180, 240, 290)
    doc = {k: v for k, v in prereg.normalized().items() if v is not None}
    validator("ctxbench.cef-prereg.v1").validate(doc)
    (tmp_path / "p.json").write_text(json.dumps(doc))
    assert load_preregistration(tmp_path / "p.json").digest() == prereg.digest()
    # A changed design is a changed preregistration.
    other = parse_preregistration(_doc(every=None, looks=[60, 290], max_tasks=290,
                                       method="obrien_fleming", futility=False), path="p")
    assert other.digest() != prereg.digest()


def test_without_the_table_the_digest_is_as_before() -> None:
    prereg = parse_preregistration({"protocol_version": "entroly-cef-1"}, path="p.json")
    assert prereg.sequential is None and "sequential" not in prereg.normalized()
    golden = json.loads((Path(__file__).resolve().parents[2]
                         / "golden/cef-no-claim/report.json").read_text())
    if golden["preregistration"]["source"] == "protocol_defaults":
        assert golden["preregistration"]["digest_blake3"] == prereg.digest()


@pytest.mark.parametrize(("seq", "expected"), [
    ({"colour": "red"}, "p.json: /sequential/colour: expected no such field"),
    ({"method": "bayes"}, "/sequential/method: expected one of"),
    ({"futility": "yes"}, "/sequential/futility: expected a JSON boolean"),
    ({"every": None}, "/sequential/looks: expected exactly one of \"every\""),
    ({"looks": [60, 300]}, "/sequential/looks: expected exactly one of \"every\""),
    ({"every": None, "looks": [5, 300]}, "/sequential/looks[0]: expected at least 10 tasks"),
    ({"every": None, "looks": [60, 60, 300]}, "/sequential/looks[1]: expected more tasks"),
    ({"every": None, "looks": [60, 200]}, "/sequential/looks[1]: expected the last look at "
                                          "max_tasks (300)"),
    ({"every": None, "looks": [60, 1.5]}, "/sequential/looks[1]: expected an integer"),
    ({"every": 300}, "/sequential/max_tasks: expected a design of at least two looks"),
    ({"max_tasks": 5}, "/sequential/max_tasks: expected an integer in [10, "),
])
def test_every_key_is_checked(seq: dict[str, object], expected: str) -> None:
    with pytest.raises(InputError) as info:
        parse_preregistration(_doc(**seq), path="p.json")
    assert expected in str(info.value)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.integers(min_value=10, max_value=2000), min_size=2, max_size=8,
                unique=True))
def test_any_rising_list_reads_back_as_declared(values: list[int]) -> None:
    looks = sorted(values)
    prereg = parse_preregistration(_doc(every=None, looks=looks, max_tasks=looks[-1]),
                                   path="p.json")
    assert prereg.sequential is not None and list(prereg.sequential.looks) == looks
    again = parse_preregistration({"protocol_version": "entroly-cef-1",
                                   "sequential": prereg.sequential.as_dict()}, path="p")
    assert again.sequential == prereg.sequential
