"""Plausible model outputs for BFCL tasks, by mutation of the ground truth (fixed seed).

Used by tests/workloads/test_bfcl_agreement.py, which scores each output with ctxbench's
checker and with BFCL's own. An output is the text a prompting model answers; it is built
from the ground truth (each parameter's allowed values) and the task's schemas, then
changed in one way of :data:`KINDS`. Every task yields the ground truth, one output with
other allowed values, and ``per_task`` outputs of kinds drawn with
``random.Random(f"{seed}:{task_id}")``, so a task's outputs do not depend on which other
tasks are drawn.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from ctxbench.workloads import ToolTask

# An argument is (name, source text); name None is a positional argument.
Arg = tuple[str | None, str]
Call = tuple[str, list[Arg]]

KINDS = ("int_float", "bool_int", "type_change", "string_case_space", "missing_arg",
         "extra_arg", "schema_param", "positional", "computed", "unary", "wrong_function",
         "call_order", "arg_order", "list_order", "nested", "tuple_value", "call_count",
         "syntax", "variable", "none_value", "empty_value")
RELEVANCE_KINDS = ("schema_call", "positional", "computed", "unary", "empty", "prose",
                   "syntax", "nested_call", "expansion", "duplicate_keyword")
_WORDS = ("New York", "san francisco", "John's", "2024-03-15", "mean", "A-B_C")


def _pick(rng: random.Random, allowed: list[Any], first: bool) -> tuple[bool, Any]:
    """(given, value) for one parameter's allowed values."""
    values = [a for a in allowed if a != ""]
    if not values:
        return False, None
    if first:
        return True, values[0]
    if "" in allowed and rng.random() < 0.3:
        return False, None
    return True, rng.choice(values)


def _resolve(rng: random.Random, value: Any, first: bool) -> Any:
    """A dict among the allowed values maps keys to allowed values: choose one each."""
    if isinstance(value, dict):
        out = {}
        for key, options in value.items():
            given, chosen = _pick(rng, options, first) if isinstance(options, list) \
                else (True, options)
            if given:
                out[key] = _resolve(rng, chosen, first)
        return out
    if isinstance(value, list):
        return [_resolve(rng, v, first) for v in value]
    return value


def truth_calls(task: ToolTask, rng: random.Random, first: bool = True
                ) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for entry in task.ground_truth:
        (name, params), = entry.items()
        args = {}
        for param, allowed in params.items():
            given, value = _pick(rng, allowed, first)
            if given:
                args[param] = _resolve(rng, value, first)
        calls.append((name, args))
    return calls


def _text(calls: list[Call]) -> str:
    return "[" + ", ".join(f"{name}(" + ", ".join(t if k is None else f"{k}={t}"
                                                   for k, t in args) + ")"
                           for name, args in calls) + "]"


def _as_calls(calls: list[tuple[str, dict[str, Any]]]) -> list[Call]:
    return [(name, [(k, repr(v)) for k, v in args.items()]) for name, args in calls]


def _swap_number(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else round(value)
    if isinstance(value, list):
        return [_swap_number(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: _swap_number(v, rng) for k, v in value.items()}
    return value


def _bool_int(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value != 0
    if isinstance(value, list):
        return [_bool_int(v) for v in value]
    return value


def _restring(value: Any, rng: random.Random) -> Any:
    if isinstance(value, str):
        return rng.choice([value.upper(), value.lower(), value.title(), f" {value} ",
                           value.replace(" ", "_"), value.replace(" ", ""),
                           value.replace(" ", "-") + ".", f"'{value}'", value + "s"])
    if isinstance(value, list):
        return [_restring(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: _restring(v, rng) for k, v in value.items()}
    return value


def _retype(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.choice([str(value), str(value).lower(), int(value)])
    if isinstance(value, int | float):
        return rng.choice([str(value), [value], True])
    if isinstance(value, str):
        return rng.choice([[value], 1, {"value": value}])
    if isinstance(value, list):
        return rng.choice([tuple(value), ", ".join(map(str, value)), value[:1] or [1],
                           value[0] if value else None])
    if isinstance(value, dict):
        return rng.choice([list(value.items()), list(value), str(value)])
    return rng.choice(["None", 0])


def _nested(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        choice = rng.randrange(4)
        if choice == 0:
            return {k: v for k, v in value.items() if k != key}
        if choice == 1:
            return {**value, "zz_extra": 1}
        if choice == 2:
            return {k: _swap_number(_restring(v, rng), rng) for k, v in value.items()}
        return [value]
    if isinstance(value, list) and value:
        choice = rng.randrange(5)
        if choice == 0:
            return [value]
        if choice == 1:
            return [_nested(v, rng) for v in value]
        if choice == 2:
            return value + value[:1]
        if choice == 3:
            return [tuple(v) if isinstance(v, list) else (v,) for v in value]
        return [str(v) for v in value]
    return _retype(value, rng)


def _computed(value: Any, rng: random.Random) -> str:
    if isinstance(value, bool):
        return rng.choice([f"{value} + 0", f"not {value}", f"{value} * 1"])
    if isinstance(value, int):
        return rng.choice([f"{value - 1} + 1", f"{value} * 1", f"{value * 2} // 2",
                           f"{value * 2} / 2", f"{value} ** 1", f"({value} + 0) * 1.0",
                           f"{value} % 1000007", f"{value} - -0", f"1 << {value % 8}"])
    if isinstance(value, float):
        return rng.choice([f"{value} + 0", f"{value * 2} / 2", f"{value} * 1",
                           f"{value} - 0.0", f"{value!r} + 1e-9"])
    if isinstance(value, str):
        cut = len(value) // 2
        return rng.choice([f"{value[:cut]!r} + {value[cut:]!r}", f"{value!r} * 1",
                           f"{value!r} + ''"])
    if isinstance(value, list):
        cut = len(value) // 2
        return rng.choice([f"{value[:cut]!r} + {value[cut:]!r}", f"{value!r} * 1",
                           f"{value!r} * 2"])
    if isinstance(value, dict):
        return f"{value!r} | {{}}"
    return f"{value!r} + 1"


def _unary(value: Any, rng: random.Random) -> str:
    if isinstance(value, bool | int | float) and not isinstance(value, bool):
        return rng.choice([f"+{value!r}", f"-{value!r}", f"~{value!r}", f"not {value!r}",
                           f"-(-{value!r})", f"- {abs(value)!r}"])
    return rng.choice([f"-{value!r}", f"not {value!r}", f"+{value!r}"])


_SYNTAX = ("backticks", "no_brackets", "quoted", "trailing_text", "attribute", "subscript",
           "lambda", "set", "fstring", "compare", "expansion", "duplicate", "bytes",
           "complex", "ellipsis", "starred", "nested_call", "tuple_list", "name_call")


def _syntax(calls: list[Call], rng: random.Random, kind: str) -> str:
    name, args = calls[0]
    key = args[0][0] if args and args[0][0] is not None else "zz_x"
    replace = {"attribute": "math.pi", "subscript": "data['sales'][0]", "lambda": "lambda x: x",
               "set": "{1, 2}", "fstring": "f'{1}'", "compare": "3 > 2", "bytes": "b'abc'",
               "complex": "1+2j", "ellipsis": "...", "nested_call": "get_value(key='x')",
               "name_call": "round(2.5)"}
    if kind in replace:
        calls = [(name, [(key, replace[kind])] + [a for a in args if a[0] != key]),
                 *calls[1:]]
    elif kind == "expansion":
        calls = [(name, [*args, (None, "**{'x': 1}")]), *calls[1:]]
    elif kind == "duplicate":
        calls = [(name, [*args, *args[:1]] if args else [("x", "1"), ("x", "2")]),
                 *calls[1:]]
    elif kind == "starred":
        return _text(calls)[:-1] + ", *rest]"
    elif kind == "tuple_list":
        return "(" + _text(calls)[1:-1] + ",)"
    text = _text(calls)
    if kind == "backticks":
        return f"```\n{text}\n```"
    if kind == "no_brackets":
        return text[1:-1]
    if kind == "quoted":
        return f"'{text}'"
    if kind == "trailing_text":
        return text + " I called the function."
    return text


def _schema_arg(task: ToolTask, name: str, taken: set[str], rng: random.Random) -> Arg | None:
    schema = next((s for s in task.schemas if s.name == name), None)
    free = [p for p in (schema.properties if schema else {}) if p not in taken]
    if not free:
        return None
    param = rng.choice(free)
    kind = str(((schema.properties if schema else {}).get(param) or {}).get("type"))
    sample = {"string": "'x'", "integer": "1", "float": "1.5", "boolean": "True",
              "array": "['x']", "tuple": "[1]", "dict": "{}"}.get(kind, "'x'")
    return param, sample


def mutate(task: ToolTask, kind: str, rng: random.Random) -> str:
    """One output of ``kind`` for an AST task."""
    raw = truth_calls(task, rng, first=rng.random() < 0.5)
    index = rng.randrange(len(raw))
    name, args = raw[index]
    keys = list(args)
    if kind in ("int_float", "bool_int", "list_order", "nested"):
        # Element types matter most inside lists (BFCL checks items one level deep).
        keys = [k for k in keys if isinstance(args[k], list | dict)] or keys
    key = rng.choice(keys) if keys else None
    changers = {"int_float": _swap_number, "type_change": _retype,
                "string_case_space": _restring, "nested": _nested}
    if kind in changers and key is not None:
        args[key] = changers[kind](args[key], rng)
    elif kind == "bool_int" and key is not None:
        args[key] = _bool_int(args[key])
    elif kind == "missing_arg" and key is not None:
        del args[key]
    elif kind == "extra_arg":
        args["zz_unknown"] = rng.choice([1, "x", True, None])
    elif kind == "list_order" and key is not None and isinstance(args[key], list):
        args[key] = args[key][::-1]
    elif kind == "tuple_value" and key is not None:
        value = args[key]
        args[key] = tuple(value) if isinstance(value, list) else (value,)
    elif kind == "variable" and key is not None:
        args[key] = rng.choice(["x", "my_data", "data['sales']"])
    elif kind == "none_value" and key is not None:
        args[key] = None
    elif kind == "empty_value" and key is not None:
        args[key] = rng.choice(["", [], {}, 0])
    elif kind == "wrong_function":
        others = [s.name for s in task.schemas if s.name != name]
        raw[index] = (rng.choice(others) if others and rng.random() < 0.6 else
                      rng.choice([name + "_v2", name.split(".")[-1], name.upper()]), args)
    elif kind == "call_count":
        if len(raw) > 1 and rng.random() < 0.5:
            raw.pop(index)
        else:
            raw.insert(index, (name, dict(args)))
    calls = _as_calls(raw)
    index = min(index, len(calls) - 1)
    call_name, call_args = calls[index]
    if kind == "arg_order":
        rng.shuffle(call_args)
    elif kind == "call_order":
        rng.shuffle(calls)
    elif kind == "schema_param":
        extra = _schema_arg(task, call_name, set(args), rng)
        if extra is not None:
            call_args.append(extra)
    elif kind in ("positional", "computed", "unary") and call_args:
        at = rng.randrange(len(call_args))
        param, _ = call_args[at]
        value = args.get(param) if param is not None else None
        if kind == "positional":
            moved = call_args[:at + 1] if rng.random() < 0.5 else [call_args[at]]
            rest = [a for a in call_args if a not in moved]
            call_args[:] = [(None, t) for _, t in moved] + rest
        else:
            maker = _computed if kind == "computed" else _unary
            call_args[at] = (param, maker(value, rng))
    elif kind == "syntax":
        return _syntax(calls, rng, rng.choice(_SYNTAX))
    return _text(calls)


def relevance_output(task: ToolTask, kind: str, rng: random.Random) -> str:
    """One output of ``kind`` for a relevance or irrelevance task."""
    if not task.schemas or kind == "empty":
        return rng.choice(["[]", "", "None of the functions applies.", "```\n[]\n```"])
    schema = rng.choice(task.schemas)
    args: list[Arg] = []
    for param in schema.required:
        arg = _schema_arg(task, schema.name, {a for a, _ in args if a} | set(
            p for p in schema.properties if p != param), rng)
        if arg is not None:
            args.append(arg)
    if kind == "prose":
        return rng.choice([f"I would call {schema.name}, but the question needs more.",
                           "The answer is 42.", f"{schema.name}", "[" + schema.name + "]"])
    if kind == "positional":
        return f"[{schema.name}({rng.choice(_WORDS)!r})]"
    if kind in ("computed", "unary"):
        value = "1+1" if kind == "computed" else rng.choice(["-1", "+2", "not 1", "-'x'"])
        return f"[{schema.name}(n={value})]"
    if kind == "syntax":
        return _syntax([(schema.name, args)], rng, rng.choice(_SYNTAX))
    if kind == "nested_call":
        return f"[{schema.name}(x=other(y=1))]"
    if kind == "expansion":
        return f"[{schema.name}(**{{'x': 1}})]"
    if kind == "duplicate_keyword":
        return f"[{schema.name}(x=1, x=2)]"
    return _text([(schema.name, args)])


def outputs(task: ToolTask, per_task: int, seed: int) -> Iterator[tuple[str, str]]:
    """(kind, text) for one task: the ground truth, other allowed values, and mutations."""
    rng = random.Random(f"{seed}:{task.task_id}")
    if not task.ground_truth:
        for kind in rng.choices(RELEVANCE_KINDS, k=per_task):
            yield kind, relevance_output(task, kind, rng)
        return
    yield "truth", _text(_as_calls(truth_calls(task, rng)))
    yield "truth_alt", _text(_as_calls(truth_calls(task, rng, first=False)))
    for kind in rng.choices(KINDS, k=per_task):
        yield kind, mutate(task, kind, rng)
