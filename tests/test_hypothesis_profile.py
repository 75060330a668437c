"""`make test` cannot fail at random: property tests are derandomized unless fuzzing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).resolve().parent


def test_default_profile_is_derandomized_without_a_database() -> None:
    if os.environ.get("CTXBENCH_HYPOTHESIS", "ctxbench") != "ctxbench":
        return  # `make fuzz` runs this file too, on purpose with random examples
    current = settings()
    assert current.derandomize is True
    assert current.database is None
    assert current.deadline is None


def test_fuzz_profile_searches_at_random() -> None:
    fuzz = settings.get_profile("fuzz")
    assert fuzz.derandomize is False
    assert fuzz.deadline is None


def test_a_property_test_draws_the_same_examples_in_every_process(tmp_path: Path) -> None:
    # The same property test run twice in fresh processes sees the same examples.
    (tmp_path / "conftest.py").write_text((TESTS / "conftest.py").read_text("utf-8"), "utf-8")
    (tmp_path / "test_draws.py").write_text(
        "import os\nfrom hypothesis import given, strategies as st\n\n"
        "@given(st.text())\ndef test_draws(text: str) -> None:\n"
        "    with open(os.environ['DRAWS'], 'a', encoding='utf-8') as out:\n"
        "        out.write(repr(text) + '\\n')\n", "utf-8")
    seen = []
    for run in range(2):
        draws = tmp_path / f"draws{run}.txt"
        env = {**os.environ, "DRAWS": str(draws), "CTXBENCH_HYPOTHESIS": "ctxbench"}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(tmp_path / "test_draws.py")], env=env, check=True,
                       cwd=tmp_path, capture_output=True)
        seen.append(draws.read_text("utf-8"))
    assert seen[0] == seen[1] and seen[0].count("\n") >= 50
