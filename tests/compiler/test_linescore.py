"""Line priors for paraphrased questions: bound names, literal values, the echo of a name."""

from __future__ import annotations

from ctxbench.compiler.evidence import QueryMatcher, chunk_lines
from ctxbench.compiler.linescore import (
    ECHO_SHARE,
    VALUE_SHARE,
    binds_literal,
    bound_names,
    rescore,
)


def test_bound_names_of_assignments_defaults_keys_and_definitions() -> None:
    assert bound_names(b"MAX_URL_LENGTH = 65536\n") == (b"MAX_URL_LENGTH",)
    assert bound_names(b"        lifespan: float = 300,\n") == (b"lifespan",)
    assert bound_names(b"    self.days = days + weeks * 7\n") == (b"days",)
    assert bound_names(b"    'size_limit': 2**30,  # 1gb\n") == (b"size_limit",)
    assert bound_names(b'    "truncate.leeway": 5,\n') == (b"truncate.leeway",)
    assert bound_names(b"def easter(year, method=EASTER_WESTERN):\n") == (b"easter", b"method")
    assert bound_names(b"    def __init__(self, cache=False):\n") == (b"__init__", b"cache")
    # A comparison binds nothing; names under three characters are left out.
    assert bound_names(b"    if size == limit:\n") == ()
    assert bound_names(b"    i = 0\n") == ()


def test_binds_literal_wants_a_value_not_an_expression() -> None:
    for line in (b"TIMEOUT = 30\n", b"TZFILES = [\"/etc/localtime\", \"localtime\"]\n",
                 b"    cache_size: int = 400,\n",
                 b"    'eviction_policy': 'least-recently-stored',\n",
                 b"    trim_blocks: bool = False,\n", b"    default=None,\n",
                 b"    \"json.dumps_kwargs\": {\"sort_keys\": True},\n"):
        assert binds_literal(line), line
    for line in (b"    leeway = env.policies[\"truncate.leeway\"]\n", b"    return size\n",
                 b"    # the default is 5\n", b"    trim_blocks: bool = TRIM_BLOCKS,\n",
                 b"    if count == 3:\n"):
        assert not binds_literal(line), line


DATA = (b"class KeyClient:\n"
        b'    """Remote key set; the lifespan says how long a downloaded set is trusted."""\n'
        b"    def __init__(\n"
        b"        self,\n"
        b"        lifespan: float = 300,\n"
        b"        headers=None,\n"
        b"    ):\n"
        b"        self.lifespan = lifespan\n")
WEIGHTS = {"long": 2.0, "downloaded": 3.0, "trusted": 4.0, "set": 1.0}
QUERY = "how long is a downloaded set trusted"


def test_a_binding_line_gains_the_echo_of_the_line_that_explains_its_name() -> None:
    lines = chunk_lines(DATA, 0, len(DATA))
    matcher = QueryMatcher(QUERY, WEIGHTS)
    plain = matcher.line_weights(DATA, lines)  # gate 0: the query's own weights
    assert plain[1] == 10.0 and plain[4] == 0.0 and plain[5] == 0.0
    matcher.gate = 1.0
    weights = matcher.line_weights(DATA, lines)
    assert weights[1] == plain[1]  # the docstring binds nothing
    # `lifespan: float = 300,` is named in the docstring and binds a literal
    assert weights[4] == ECHO_SHARE * 10.0 + VALUE_SHARE * 10.0
    # `headers=None,` binds a literal; no weighted line mentions `headers`
    assert weights[5] == VALUE_SHARE * 10.0
    # `self.lifespan = lifespan` echoes the docstring but binds no literal
    assert weights[7] == ECHO_SHARE * 10.0
    # half the gate, half of each prior
    assert rescore(DATA, lines, plain, 0.5)[4] == 0.5 * (ECHO_SHARE + VALUE_SHARE) * 10.0


def test_a_chunk_without_query_words_and_a_closed_gate_are_left_alone() -> None:
    lines = chunk_lines(DATA, 0, len(DATA))
    zeros = [0.0] * len(lines)
    assert rescore(DATA, lines, zeros, 1.0) == zeros
    weights = [1.0] * len(lines)
    assert rescore(DATA, lines, weights, 0.0) == weights
