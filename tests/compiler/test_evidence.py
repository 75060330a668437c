"""Evidence windows: line weights, definitions of query identifiers, growth after the match."""

from __future__ import annotations

from ctxbench.compiler.evidence import DEFINITION_BONUS, QueryMatcher, Window, chunk_lines

WEIGHTS = {"default": 1.0, "protocol": 2.0, "interval": 1.5, "index": 0.5}


def test_lines_and_weights() -> None:
    data = b"import io\n# the default protocol\nDEFAULT_PROTOCOL = 4\nx = 1"
    lines = chunk_lines(data, 0, len(data))
    assert [data[a:b] for a, b in lines] == [b"import io\n", b"# the default protocol\n",
                                            b"DEFAULT_PROTOCOL = 4\n", b"x = 1"]
    weights = QueryMatcher("what is the default pickle protocol?", WEIGHTS).line_weights(
        data, lines)
    assert weights[0] == 0.0 and weights[3] == 0.0
    assert weights[1] == 3.0
    # The definition of an identifier made of query terms gains the bonus.
    assert weights[2] == 3.0 + DEFINITION_BONUS * 3.0


def test_class_definition_wins_and_the_window_grows_into_its_docstring() -> None:
    data = (b"def helper(index):\n    return index\n\n\nclass IntervalIndex:\n"
            b'    """Cache searches over disjoint intervals."""\n\n    def find(self):\n'
            b"        pass\n")
    lines = chunk_lines(data, 0, len(data))
    weights = QueryMatcher("what does the interval index class do", WEIGHTS).line_weights(
        data, lines)
    window = Window.around_best(lines, weights)
    assert data[slice(*window.span())] == b"class IntervalIndex:\n"
    span = window.grow(1)
    assert span is not None and b"Cache searches" in data[slice(*span)]
    while window.grow(100) is not None:
        pass
    assert window.whole() and window.span() == (0, len(data))
