"""The ACEBench decoders (acebench-scoring §3.1) and the bounded evaluator behind them."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from memory_cost import cost
from pytest_tooleval.suites.acebench.decode import (
    MAX_SIZE,
    DecodeError,
    decode_fixed,
    decode_official,
    fold_constant,
)
from pytest_tooleval.suites.acebench.scoring import score_normal

# (raw model output, official decoding)
OFFICIAL_DECODINGS = [
    # whitespace is deleted everywhere first, inside strings too; every unary operator negates
    ("[f(a='x y', b=-3, c=+2)]", [{"f": {"a": "xy", "b": -3, "c": -2}}]),
    ("[f(a=~5, b=not(True), c=-1.5)]", [{"f": {"a": -5, "b": -1, "c": -1.5}}]),
    # ... but inside a binary operation Python's own meaning applies, as upstream eval()s it
    ("[f(a=+2*1, b=-3+2)]", [{"f": {"a": 2, "b": -1}}]),
    (
        "[f(a='New'+'York', b=2*3, c='ab'*2, d=[1]+[2], e=2**10, g=7/2)]",
        [{"f": {"a": "NewYork", "b": 6, "c": "abab", "d": [1, 2], "e": 1024, "g": 3.5}}],
    ),
    (
        "[f(a=(1,)+(2,), b={'k':1}|{'j':2}, c='%s-%d'%('x',3))]",
        [{"f": {"a": (1, 2), "b": {"k": 1, "j": 2}, "c": "x-3"}}],
    ),
    # a tuple or set display at the top level is accepted like a list
    ("(f(a=1), g(b=2))", [{"f": {"a": 1}}, {"g": {"b": 2}}]),
    ("f(a=1), g(b=2)", [{"f": {"a": 1}}, {"g": {"b": 2}}]),
    ("{f(a=1)}", [{"f": {"a": 1}}]),
    ("[]", []),
    ("()", []),
    # names become strings; not True loses its space and becomes one name
    (
        "[f(city=Paris, flag=true, x=null, y=not True)]",
        [{"f": {"city": "Paris", "flag": "true", "x": "null", "y": "notTrue"}}],
    ),
    # positional arguments are dropped, **kw lands under None, a repeated keyword keeps the last value
    ("[f('x', a=1)]", [{"f": {"a": 1}}]),
    ("[f(True)]", [{"f": {}}]),
    ("[f(**{'a': 1})]", [{"f": {None: {"a": 1}}}]),
    ("[f(a=1, a=2)]", [{"f": {"a": 2}}]),
    # dotted names are joined; a base that is not a name is dropped
    ("[a.b.c(x=1)]", [{"a.b.c": {"x": 1}}]),
    ("[f()(x=1)]", [{"": {"x": 1}}]),
    # calls as values, ellipsis, subscripts as source text, tuples, dicts, implicit concatenation
    (
        "[f(a=g(), b=h(k=1), c=..., d=x[0], e=x[a,b], g=x[1:2])]",
        [{"f": {"a": {"g": {}}, "b": {"h": {"k": 1}}, "c": "...", "d": "x[0]", "e": "x[(a, b)]", "g": "x[1:2]"}}],
    ),
    (
        "[f(a=(1, 'b'), b={'k': [1, {'j': None}]}, c='It''s')]",
        [{"f": {"a": (1, "b"), "b": {"k": [1, {"j": None}]}, "c": "Its"}}],
    ),
    ("[f(a='\\d')]", [{"f": {"a": "\\d"}}]),  # an invalid escape only warns, even under -W error
    ("[f(a=[i for i in x])]", [{"f": {"a": ["iforiinx"]}}]),  # without spaces, one name
    ("[f(a={1: 'x', True: 'y'})]", [{"f": {"a": {1: "y"}}}]),  # Python dict semantics for equal keys
]

OFFICIAL_FORMAT_ERRORS = [
    "f(a=1)",  # a bare call has no element list
    "[f(a=1)][g()]",  # a subscript
    "{}",
    "Sure! [f(a=1)]",
    "```python\n[f(a=1)]\n```",
    "[f(a=True), 'text']",
    '["Missing necessary parameters (a) for the api (F)"]',
    "[f(a=lambda: 1)]",
    "[f(a={1, 2})]",
    "[f(a=x.y)]",
    "[f(a=-x)]",
    "[f(a=--1)]",
    "[f(a=-'text')]",
    "[f(a=-None)]",
    "[f(a=f'{x}')]",
    "[f(a=1<2)]",
    "[f(a=(1)and(2))]",
    "[f(a=1 if c else 2)]",
    "[f(a=[(i)for(i)in(x)])]",
    "[f(a={**b})]",
    "[f(a={[1]: 2})]",
    "[f(a=[*b])]",
    "[f(a=1/0)]",
    "[f(a=x+1)]",  # names inside arithmetic
    "[f(a=len('ab')+1)]",  # upstream would resolve builtins here; we never call anything
    "[f(a='ab'.upper()+'c')]",
    "[f(a='x' is 'x')]",
    "[f(a='\x00')]",
    "",
    "   ",
]


@pytest.mark.parametrize(("output", "expected"), OFFICIAL_DECODINGS)
def test_official_decoding(output: str, expected: list[Any]) -> None:
    assert decode_official(output) == expected


@pytest.mark.parametrize("output", OFFICIAL_FORMAT_ERRORS)
def test_official_format_errors(output: str) -> None:
    with pytest.raises(DecodeError):
        decode_official(output)


def test_official_decoding_keeps_python_types() -> None:
    # str() of a value decides nested comparisons (§4.5), so a tuple must stay a tuple and 3.0 a float.
    (call,) = decode_official("[f(a=(1, 2), b=3.0, c=True)]")
    assert [type(value) for value in call["f"].values()] == [tuple, float, bool]


FIXED_DECODINGS = [
    ("[f(a='x y', c=+2)]", [{"f": {"a": "x y", "c": 2}}]),
    ("[f(a=~5, b=not True, c=-3)]", [{"f": {"a": -6, "b": False, "c": -3}}]),
    ("\n  [f(a={'k': ['HTC Vive']})]\n", [{"f": {"a": {"k": ["HTC Vive"]}}}]),
    ("[f(city=Paris, x=g(), y=x[0])]", [{"f": {"city": "Paris", "x": {"g": {}}, "y": "x[0]"}}]),
    ("(f(a=1), g(b=2))", [{"f": {"a": 1}}, {"g": {"b": 2}}]),
    ("[f(a='x\u3000y',\xa0b=1)]", [{"f": {"a": "x y", "b": 1}}]),  # exotic spaces read as spaces
    ("[f(a='x\xa0y')]", [{"f": {"a": "x\xa0y"}}]),  # ... but only when they would not parse
]


@pytest.mark.parametrize(("output", "expected"), FIXED_DECODINGS)
def test_fixed_decoding(output: str, expected: list[Any]) -> None:
    assert decode_fixed(output) == expected


@pytest.mark.parametrize("output", ["Sure! [f(a=1)]", "f(a=1)", "[f(a=-x)]", "[f(a=lambda: 1)]", "[f(a=x.y)]"])
def test_fixed_decoding_keeps_the_contract(output: str) -> None:
    with pytest.raises(DecodeError):
        decode_fixed(output)


# --- the bounded evaluator ---------------------------------------------------------------------------


def _fold(source: str) -> object:
    return fold_constant(ast.parse(source, mode="eval").body)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("'New' + 'York'", "NewYork"),
        ("7 // 2 + 7 % 2", 4),
        ("2 ** -1", 0.5),
        ("[1, *'ab'] * 2", [1, "a", "b", 1, "a", "b"]),
        ("(1, 2)[0] + [5, 6, 7][1:][0]", 7),
        ("{'a': 1, **{'b': 2}} | {'c': 3}", {"a": 1, "b": 2, "c": 3}),
        ("(1 < 2 < 3) + (0 or 5) + (0 and 9)", 6),
        ("('x' if 1 in [1] else 'y') + 'z'", "xz"),
        ("'a' * True + 'b' * -3", "a"),
        ("1e308 * 10", float("inf")),
        ("2 ** 9999 // 2 ** 9998", 2),
    ],
)
def test_fold_constant_follows_python(source: str, value: object) -> None:
    assert _fold(source) == value


@pytest.mark.parametrize(
    "source",
    [
        "'x' * 10 ** 10",
        "'x' * (MAX + 1)".replace("MAX", str(MAX_SIZE)),
        "[[1] * 1000] * 1000",
        "2 ** 10 ** 9",
        "10 ** 4000 * 10 ** 4000",
        "1 << 10 ** 9",
        "'%999999999d' % 1",
        "'%*d' % (5, 1)",
        "b'%99999999s' % b'x'",
        "1 / 0",
        "[] @ []",
        "x + 1",
        "print('hi') + 1",
        "().__class__ + 1",
        "[i for i in 'ab'] + []",
    ],
)
def test_fold_constant_refuses(source: str) -> None:
    with pytest.raises(DecodeError):
        _fold(source)


HOSTILE_OUTPUTS = {
    "huge repetition": "[f(a='x'*10**10)]",
    "huge power": "[f(a=9**9**9**9)]",
    "huge shift": "[f(a=1<<10**12)]",
    "nested brackets": "[" * 10_000 + "]" * 10_000,
    "nested brackets in a value": "[f(a=" + "[" * 10_000 + "]" * 10_000 + ")]",
    "nested calls in a value": "[f(a=" + "g(" * 5_000 + ")" * 5_000 + ")]",
    "unary chain": "[f(a=" + "-" * 99_000 + "1)]",
    "long sum": "[f(a=" + "+".join(["1"] * 49_000) + ")]",
    "deep sum": "[f(a=" + "+".join(["1"] * 300) + ")]",
    "long concatenation of lists": "[f(a=" + "+".join(["[1]*50000"] * 150) + ")]",
    "deep attribute chain": "[f(a=" + "x." * 49_000 + "y)]",
    "huge literal": "[f(a=" + "9" * 5_000 + ")]",
    "very long output": "[" + "f(a=1)," * 200_000 + "]",
    "very long string": "[f(a='" + "x" * 10_000_000 + "')]",
    "many comparisons of big lists": "[f(a=" + "+".join(["([1]*40000==[1]*40000)"] * 150) + ")]",
}


@pytest.mark.parametrize("output", HOSTILE_OUTPUTS.values(), ids=HOSTILE_OUTPUTS.keys())
def test_hostile_output_is_a_quick_format_error(output: str) -> None:
    parameters = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
    functions = [{"name": "f", "parameters": parameters}]
    with cost() as peak:
        verdict = score_normal(functions, {"f": {"a": "x"}}, output)
    assert (verdict.valid, verdict.error_type, verdict.fixed) == (False, "wrong_output_format", False)
    # refused before anything big is built: the most is the tree of the longest source parsed (100,000
    # characters, some 25 MiB); folding the concatenation of lists would hold 180 MiB, parsing the longest
    # output 880 MiB
    assert peak[0] < 64 * 2**20, f"held {peak[0] / 2**20:.0f} MiB"


def test_a_long_but_reasonable_sum_still_folds() -> None:
    (call,) = decode_official("[f(a=" + "+".join(["'ab'"] * 150) + ")]")
    assert call["f"]["a"] == "ab" * 150
