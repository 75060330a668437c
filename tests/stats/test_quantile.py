"""percentiles() gives numpy.percentile's bits (linear method) without its np.unique."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.stats.quantile import percentiles

_percents = st.one_of(st.floats(0.0, 100.0),
                      st.sampled_from([0.0, 2.5, 5.0, 50.0, 95.0, 97.5, 100.0, 99.99999999]))


def _bits(values: list[float]) -> list[str]:
    return [v.hex() if v == v else "nan" for v in values]


@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1,
                       max_size=60),
       percents=st.lists(_percents, min_size=1, max_size=3))
def test_the_bits_of_numpy_percentile(values: list[float], percents: list[float]) -> None:
    array = np.array(values)
    with np.errstate(over="ignore", invalid="ignore"):
        one_by_one = [float(np.percentile(array, p)) for p in percents]
        together = [float(v) for v in np.percentile(array, percents)]
        mine = percentiles(array, percents)
    assert _bits(mine) == _bits(one_by_one) == _bits(together)


@pytest.mark.parametrize("n", [1, 2, 3, 1999, 2000, 2001])
def test_resample_sized_arrays_at_the_interval_ends(n: int) -> None:
    array = np.random.default_rng(n).standard_normal(n)
    for p in (0.0, 0.1, 2.5, 50.0, 95.0, 97.5, 99.9, 100.0):
        assert percentiles(array, [p]) == [float(np.percentile(array, p))]


def test_the_input_is_not_reordered() -> None:
    array = np.array([3.0, 1.0, 2.0])
    assert percentiles(array, [50.0]) == [2.0]
    assert array.tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(("values", "percents", "message"), [
    (np.array([]), [50.0], "expected a non-empty 1-D array"),
    (np.ones((2, 2)), [50.0], "expected a non-empty 1-D array"),
    (np.ones(3), [100.5], "expected numbers in [0, 100]"),
    (np.ones(3), [float("nan")], "expected numbers in [0, 100]"),
])
def test_bad_arguments(values: np.ndarray, percents: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        percentiles(values, percents)


def test_an_analysis_does_not_import_numpy_ma() -> None:
    code = ("import sys\n"
            "from ctxbench.protocols.cef.api import analyze_files, example_paths\n"
            "trials, _ = example_paths()\n"
            "analyze_files([trials], None, {'bootstrap_samples': 1000})\n"
            "print('numpy.ma' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
