"""BFCL decoder agreement: parse_calls beside BFCL's own decoder on random call texts.

    .venv/bin/python -W ignore benchmarks/bfcl_decoder_agreement.py [N]

N (default 30,000) call texts of one or two arguments (keyword, positional or ``**``),
each an expression up to four levels deep over constants, containers, names, calls,
subscripts, f-strings, comparisons and ``and``/``or``/``if`` under arithmetic and unary
operators, drawn with ``random.Random(7)``. Each is decoded by BFCL's
``default_decode_ast_prompting`` from the installed wheel
(tests/workloads/bfcl_reference.py) and by ctxbench's ``parse_calls``; prints how many
BFCL decodes, how many differ and the first differences (an exception of parse_calls
other than ``CallParseError`` stops the script). ``is`` is left out: it is a documented
departure (docs/workloads.md).
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "workloads"))

from bfcl_reference import load_reference

from ctxbench.workloads.calls import EXPANSION, CallParseError, parse_calls

ATOMS = ["1", "0", "-2", "2.5", "1e309", "-0.0", "3", "7", "0x1f", "True", "None", "'a'",
         "'%s'", "'%(k)s'", "'%d %s'", "'%*d'", "'%c'", "'%x'", "'%.3f'", "'%5s'", "'%%'",
         "b'%s'", "b'x'", "1j", "...", "x", "data['k']", "f()", "g(1)", "g(y=1)", "g(**kw)",
         "[]", "()", "{}", "[1, 'b']", "(1,)", "{'k': 1}", "{'k': 'v'}", "{1, 2}", "math.pi",
         "f'{1}'", "f'{2.5:.1f}'", "f'{1!r:>{3}}'", "f'{[1]}'", "lambda: 1", "1 > 0", "-1",
         "+1", "not 0", "~1", "(1 < 2 < 3)", "(0 or 'a')", "(1 and [])", "(1 if 0 else 2.5)",
         "(2 in [1, 2])"]
OPS = ["+", "-", "*", "/", "//", "%", "**", "|", "&", "^", "<<", ">>", "@"]


def expression(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.3:
        return rng.choice(ATOMS)
    roll = rng.random()
    if roll < 0.5:
        return f"({expression(rng, depth - 1)} {rng.choice(OPS)} {expression(rng, depth - 1)})"
    if roll < 0.6:
        return rng.choice(["-", "+", "~", "not "]) + expression(rng, depth - 1)
    items = [expression(rng, depth - 1) for _ in range(rng.randrange(3))]
    if roll < 0.75:
        return "[" + ", ".join(items) + "]"
    if roll < 0.85:
        return "(" + "".join(item + ", " for item in items) + ")"
    return "{" + ", ".join(f"{item}: {expression(rng, depth - 1)}" for item in items) + "}"


def ours(text: str) -> str:
    try:
        calls = parse_calls(text)
    except CallParseError:
        return "fails"
    return repr([{c.name: {None if k == EXPANSION else k: v for k, v in c.arguments.items()}}
                 for c in calls])


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as scratch:
        reference = load_reference(Path(scratch))
    decoded = differ = 0
    for _ in range(count):
        text = "[f(" + ", ".join(rng.choice(["a=", "b=", "", "**"]) + expression(rng, 4)
                                 for _ in range(rng.randrange(1, 3))) + ")]"
        try:
            theirs = repr(reference.handler.decode_ast(text, reference.return_format, False))
        except Exception:  # BFCL's decoder failing is its verdict "no call"
            theirs = "fails"
        decoded += theirs != "fails"
        if ours(text) != theirs:
            differ += 1
            if differ <= 10:
                print(f"differ: {text} | BFCL {theirs[:80]} | ctxbench {ours(text)[:80]}")
    print(f"{count} call texts, {decoded} decoded by BFCL, {differ} decoded differently")


if __name__ == "__main__":
    main()
