"""TOML documents with located syntax errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.core import FieldError, InputError, load_toml


def _load(tmp_path: Path, data: bytes) -> dict[str, object]:
    path = tmp_path / "c.toml"
    path.write_bytes(data)
    return load_toml(path, display="c.toml")


def _message(tmp_path: Path, data: bytes) -> str:
    with pytest.raises(FieldError) as info:
        _load(tmp_path, data)
    return str(info.value)


def test_valid_toml(tmp_path: Path) -> None:
    assert _load(tmp_path, b'seed = 7\n[cef]\nmargin = 0.02\nname = "x"\n') == {
        "seed": 7, "cef": {"margin": 0.02, "name": "x"}
    }


def test_display_defaults_to_the_path(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"a = \n")
    with pytest.raises(FieldError, match=rf"^{path}:1: expected valid TOML"):
        load_toml(path)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a = 1\nb = \n", "c.toml:2: expected valid TOML, got Invalid value"),
        (b"a = 1\na = 2\n", "c.toml:2: expected valid TOML, got Cannot overwrite a value"),
        (b"[t]\nx = 1\n[t]\n", "c.toml:3: expected valid TOML, got Cannot declare ('t',) twice"),
        (b"x = 1 2\n", "c.toml:1: expected valid TOML, "
                       "got Expected newline or end of document after a statement"),
        # Truncated documents are located at their last line.
        (b'a = 1\nb = "x', "c.toml:2: expected valid TOML, "
                          "got Unterminated string (at end of document)"),
        (b"a = [1,", "c.toml:1: expected valid TOML, got Invalid value (at end of document)"),
    ],
)
def test_syntax_errors_are_located(tmp_path: Path, data: bytes, message: str) -> None:
    assert _message(tmp_path, data) == message


def test_invalid_utf8_is_located(tmp_path: Path) -> None:
    assert _message(tmp_path, b"a = 1\n\nc = \xff\n") == (
        "c.toml:3: expected UTF-8 text, got an invalid byte at offset 11"
    )


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^p\.toml: file not found$"):
        load_toml(tmp_path / "p.toml", display="p.toml")
    with pytest.raises(InputError, match=r"^d: expected a file, got a directory$"):
        load_toml(tmp_path, display="d")


def test_nesting_beyond_the_limit_is_located(tmp_path: Path) -> None:
    assert _message(tmp_path, b"x = 1\na = " + b"[" * 70 + b"]" * 70 + b"\n") == (
        "c.toml:2: expected TOML nested at most 64 deep, got deeper nesting"
    )
    assert _message(tmp_path, b"a = " + b"{b=" * 70 + b"1" + b"}" * 70 + b"\n") == (
        "c.toml:1: expected TOML nested at most 64 deep, got deeper nesting"
    )


def test_an_integer_over_4300_digits_is_located(tmp_path: Path) -> None:
    assert _message(tmp_path, b"x = 1\n\ny = " + b"9" * 5000 + b"\n") == (
        "c.toml:3: expected a number of at most 4300 digits, got a longer number"
    )


def test_a_file_over_the_size_limit_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxbench.core import tomlfile

    monkeypatch.setattr(tomlfile, "MAX_TOML_BYTES", 10)
    (tmp_path / "c.toml").write_bytes(b"a = 1\nb = 2\nc = 3\n")
    with pytest.raises(InputError) as info:
        load_toml(tmp_path / "c.toml", display="c.toml")
    assert str(info.value) == "c.toml: expected a file of at most 10 bytes, got 18 bytes"
