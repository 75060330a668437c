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


def test_a_member_in_a_compression_method_zipfile_lacks_is_a_located_error(
        tmp_path: object) -> None:
    # zipfile answers NotImplementedError for a method it does not implement (99: AES).
    import struct
    import zipfile
    from pathlib import Path

    from ctxbench.core.errors import InputError
    from ctxbench.core.foreignfile import check_zip_file

    path = Path(str(tmp_path)) / "log.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("header.json", b'{"a": 1}')
    data = bytearray(path.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<H", data, local + 8, 99)
    struct.pack_into("<H", data, central + 10, 99)
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"log\.eval: expected a zip archive, got one that "
                       r"cannot be read \(NotImplementedError: "):
        check_zip_file(path, "log.eval", json_suffix=".json")


def test_an_encrypted_member_is_a_located_error(tmp_path: object) -> None:
    # zipfile answers RuntimeError ("password required") for a member flagged encrypted.
    import struct
    import zipfile
    from pathlib import Path

    from ctxbench.core.errors import InputError
    from ctxbench.core.foreignfile import check_zip_file

    path = Path(str(tmp_path)) / "log.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("header.json", b'{"a": 1}')
    data = bytearray(path.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<H", data, local + 6, 0x1)  # general purpose flags: encrypted
    struct.pack_into("<H", data, central + 8, 0x1)
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"log\.eval: expected a zip archive, got one that "
                       r"cannot be read \(RuntimeError: .*encrypted"):
        check_zip_file(path, "log.eval", json_suffix=".json")
