"""ctxbench's BFCL decoder and checker agree with BFCL's own, run from the installed wheel.

Every task of every supported category yields its ground truth, other allowed values and
mutated outputs (tests/workloads/bfcl_outputs.py, a fixed seed): type changes, int/float
and bool/int swaps, missing, extra and schema-only arguments, positional and computed
arguments, unary operators, wrong functions, call, argument and list order, string case
and spacing, nested structures, tuples, variables, and syntax BFCL decodes or refuses.
Each is judged by BFCL's ``_evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry``
(tests/workloads/bfcl_reference.py) and by :func:`ctxbench.workloads.score_tool_answer`.
Figures: benchmarks/RESULTS.md, "BFCL checker agreement". The decoder alone is compared
with BFCL's, value for value, on hand-written answers and on generated call texts
(hypothesis, derandomized).
"""

from __future__ import annotations

from collections import Counter

import pytest
from bfcl_outputs import KINDS, RELEVANCE_KINDS
from bfcl_reference import Reference, compare, load_reference, table
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.workloads import CallParseError, parse_calls
from ctxbench.workloads.bfcl import BFCL_CATEGORIES
from ctxbench.workloads.calls import EXPANSION

SEED = 20261201
PER_TASK = 6


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return load_reference(tmp_path_factory.mktemp("bfcl-project"))


def test_every_output_is_judged_as_bfcl_judges_it(reference: Reference) -> None:
    outcomes = list(compare(reference, BFCL_CATEGORIES, PER_TASK, SEED))
    rows, differ = table(outcomes)
    assert not differ, "\n".join(f"{o.task_id} {o.kind}: BFCL {o.bfcl}, ctxbench "
                                 f"{o.ctxbench}: {o.text[:160]}" for o in differ[:20])
    per_category = Counter(o.category for o in outcomes)
    assert set(per_category) == set(BFCL_CATEGORIES)
    assert len(outcomes) >= 20_000
    # Not a trivial agreement: both verdicts are common, and no answer makes BFCL raise.
    valid = sum(o.ctxbench for o in outcomes)
    assert 0.3 < valid / len(outcomes) < 0.6
    assert all(o.bfcl is not None for o in outcomes)
    kinds = Counter(o.kind for o in outcomes)
    assert set(kinds) == {"truth", "truth_alt", *KINDS, *RELEVANCE_KINDS}
    assert rows[-1].startswith(f"| all | {len(outcomes)} |")


def test_the_reference_is_bfcl_itself(reference: Reference) -> None:
    """The stubs stay out of sys.modules, and BFCL's decoder really evaluates arithmetic."""
    import sys

    assert "bfcl_eval.constants.model_config" not in sys.modules
    assert reference.ast_entry.__module__ == "bfcl_eval.eval_checker.eval_runner"
    decoded = reference.handler.decode_ast("[f('x', n=1+1)]", reference.return_format,
                                           False)
    assert decoded == [{"f": {"n": 2}}]


DECODED_ALIKE = [
    "[f('x')]", "[f(1, a=2)]", "[f(n=1+1, x=2*1.5, s='a' + 'b', l=[1] * 2, d=7 // 2)]",
    "[f(a=+5, b=-2.5, c=not 1, d=~3, e=-True)]", "[f(a=1, a=2)]", "[f(**kw)]",
    "[f(x=g(**kw))]", "[f()(a=1), x[0].g(b=2)]", "[f(a=b'x', c=1j, s=data['k'][0])]",
    "[f(n=(1 + 2) * -1)]", "The answer is 42.", "[1, f(a=1)]", "[f(a=math.pi)]",
    "[f(a={1, 2})]", "[f(a=lambda x: x)]", "[f(a=-'x')]", "[f(a=-(1 + 1))]", "[f(a=1 / 0)]",
    "[f(a='x' + 1)]", "[f(a=x + 1)]", "[f(a='%s-%03d' % ('a', 7))]", "[f(a=b'%d' % 3)]",
    "[f(a='%(x)s' % {'x': 1})]", "[f(a='%(x)s' % {})]", "[f(a='%s %s' % (1,))]",
    "[f(a='%*d' % (3, 1))]", "[f(a={1: 2, True: 3})]", "[f(a=f'{1!r:>{3}}' + 'x')]",
    "[f(a={(1, [2]): 3})]", "[f(a=[...] + [1])]", "[f(a=x[1:2], b=x[1, 2])]",
    "(f(a=1), g(b=2))", "{f(a=1)}", "[f(a=f'{1}')]", "[f(a=-None)]", "[f(a=0x10 + 1)]",
    "[f(a=(1, 2) + (3,))]", "[f(a={'a': 1} | {'b': 2})]", "[f(a=[1, 2][0])]", "[f(a=-1j)]",
    "[f(a=--1)]", "[f(a=1 if x else 2)]", "[f(a=True ** 100000, b=2 ** 64)]", "`f(a=1)`",
    "'[f(a=1)]'", "\n[f(a=1)]\n", "f(a=1), g(b=2)", "[]", "[f(a=...)]", "[f(a=None)]",
    "[f(a=(1 < 2 < 3) + 1, b=(0 or 'x') + '', c=(1 if 0 else 2.5) * 2, d=(2 in [1]) - 1)]",
    "[f(a=(1 and []) + [3], b=('a' < 1) + 1)]",
]
# Departures (docs/workloads.md): BFCL's decoder evaluates these with eval.
DEPARTURES = ["[f(a=len('ab') + 1)]", "[f(a=abs(-2) * 3)]", "[f(a=(None is None) + 0)]",
              "[f(a=(-1 * ([], lambda: 1)))]"]


def _bfcl_form(text: str) -> object:
    try:
        calls = parse_calls(text)
    except CallParseError:
        return "fails"
    return [{c.name: {None if k == EXPANSION else k: v for k, v in c.arguments.items()}}
            for c in calls]


@pytest.mark.parametrize("text", DECODED_ALIKE + DEPARTURES)
def test_decoding_is_bfcls(reference: Reference, text: str) -> None:
    try:
        expected: object = reference.handler.decode_ast(text, reference.return_format, False)
    except Exception:  # BFCL's decoder failing is its verdict "no call"
        expected = "fails"
    if text in DEPARTURES:
        assert expected != "fails" and _bfcl_form(text) == "fails"
    else:
        assert _bfcl_form(text) == expected


_atom = st.sampled_from(["1", "0", "-2", "2.5", "1e309", "True", "None", "'a'", "'%s'",
                         "'%(k)s'", "'%d %s'", "'%*d'", "{'k': 'v'}",
                         "b'x'", "1j", "...", "x", "data['k']", "f()", "g(1)", "[]", "()",
                         "{}", "[1, 'b']", "(1,)", "{'k': 1}", "{1, 2}", "math.pi",
                         "f'{1}'", "lambda: 1", "g(y=1)", "g(**kw)", "1 > 0"])


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "|", "&",
                                               "^", "<<", ">>", "@"]), inner)
    return (binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})") |
            st.tuples(st.sampled_from(["-", "+", "~", "not "]), inner).map("".join) |
            st.lists(inner, max_size=3).map(lambda v: "[" + ", ".join(v) + "]") |
            st.lists(inner, max_size=3).map(lambda v: "(" + "".join(a + ", " for a in v) + ")") |
            st.lists(st.tuples(inner, inner), max_size=2).map(
                lambda v: "{" + ", ".join(f"{k}: {w}" for k, w in v) + "}"))


_value = st.recursive(_atom, _combine, max_leaves=6)
_argument = st.tuples(st.sampled_from(["", "a=", "b=", "a=", "**"]), _value).map("".join)


@settings(derandomize=True, max_examples=400)
@given(st.lists(st.tuples(st.sampled_from(["f", "mod.g", "f()"]),
                          st.lists(_argument, max_size=3)), max_size=2),
       st.sampled_from(["[{}]", "{}", "```\n[{}]\n```", "'[{}]'", "({})"]))
def test_decoding_is_bfcls_on_generated_calls(reference: Reference,
                                              calls: list[tuple[str, list[str]]],
                                              frame: str) -> None:
    text = frame.format(", ".join(f"{name}({', '.join(args)})" for name, args in calls))
    try:
        expected = repr(reference.handler.decode_ast(text, reference.return_format, False))
    except Exception:  # BFCL's decoder failing is its verdict "no call"
        expected = "'fails'"
    assert repr(_bfcl_form(text)) == expected, text
