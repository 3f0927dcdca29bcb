"""The official agent executors' decoding, quirks included (acebench-agent §4, §5.2)."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.acebench.agent.decode import (
    AgentDecodeError,
    DecodeMode,
    decode_calls,
    decode_message,
    routes_to_execution,
)

STEP, TURN, ROUTE = DecodeMode.STEP, DecodeMode.TURN, DecodeMode.ROUTE


@pytest.mark.parametrize(
    ("message", "calls"),
    [
        ("[turn_on_wifi()]", ["turn_on_wifi()"]),
        ("turn_on_wifi()", ["turn_on_wifi()"]),  # brackets are added
        (" [turn_on_wifi()]", ["turn_on_wifi()"]),  # one leading space is dropped
        ("[f(a=1), g(b='x')]", ["f(a=1)", "g(b='x')"]),
        ("[f(1, 2, a=3)]", ["f(a=3)"]),  # positional arguments are dropped
        ("[Travel.reserve_flight(a=1)]", ["Travel.reserve_flight(a=1)"]),
        ("[f(n=+4)]", ["f(n=-4)"]),  # every unary operator negates
        ("[f(n=not True)]", ["f(n=-1)"]),
        ("[f(n=99.0*2)]", ["f(n=198.0)"]),  # binary operations are folded
        ("[f(s='a'+'b')]", ["f(s='ab')"]),
        ("[f(s=g(1))]", ["f(s='g(1)')"]),  # a nested call without keywords becomes its source
        ("[f(s=name)]", ["f(s='name')"]),  # a bare identifier becomes its name
        ("[f(s=x[0])]", ["f(s='x[0]')"]),
        ("[f(s=...)]", ["f(s='...')"]),
        ("[f(t=(1, 2))]", ["f(t=(1, 2))"]),
        ("[f(d={'a': 1})]", None),  # a dict argument is rebuilt as a call a(...) and fails
        ("[f(d={'a': {'b': 2}})]", ["f(d=a(b=2))"]),
        ("[f(items=[{'a': 1}])]", ["f(items=[{'a': 1}])"]),  # inside a list it stays a dict
        ("[f(d=g(k=1))]", ["f(d=g(k=1))"]),
        ("[f(**kw)]", ["f(None='kw')"]),  # rebuilt into a string the executor cannot parse
        ("[x]", []),  # not a call: zero calls
        ("[turn_on_wifi]", []),
        ("[f(s=f'x')]", None),  # f-strings, sets, comparisons, lambdas: decode failures
        ("[f(s={1, 2})]", None),
        ("[f(s=1 < 2)]", None),
        ("[f(s=lambda: 1)]", None),
        ("[turn_on_wifi()]\n", None),  # a trailing newline breaks the bracket handling
        ("  [turn_on_wifi()]", None),  # two leading spaces
        ("```\n[turn_on_wifi()]\n```", None),
        ("I will call [turn_on_wifi()]", None),
        ("", None),
    ],
)
def test_decode_step(message: str, calls: list[str] | None) -> None:
    if calls is None:
        with pytest.raises(AgentDecodeError):
            decode_message(message, STEP)
    else:
        assert decode_message(message, STEP) == calls


def test_trailing_string_element_loses_its_quote_and_fails() -> None:
    with pytest.raises(AgentDecodeError):
        decode_message("[f(a=1), 'x']", TURN)


def test_non_call_elements_step_fails_turn_skips_route_fails() -> None:
    message = "[f(a=1), 2, g()]"
    with pytest.raises(AgentDecodeError, match="Element is not a function call"):
        decode_message(message, STEP)
    assert decode_message(message, TURN) == ["f(a=1)", "g()"]
    with pytest.raises(AgentDecodeError, match="'bool' object is not iterable"):
        decode_message(message, ROUTE)


def test_decode_error_keeps_upstreams_exception() -> None:
    with pytest.raises(AgentDecodeError) as info:
        decode_message("I will now call: [f()]", TURN)
    assert info.value.label == "SyntaxError: invalid syntax (<unknown>, line 1)"
    with pytest.raises(AgentDecodeError) as info:
        decode_message("[f(a=-x)]", TURN)
    assert info.value.label == "AttributeError: 'Name' object has no attribute 'value'"
    with pytest.raises(AgentDecodeError) as info:
        decode_message("[f(a=f'x')]", TURN)
    assert info.value.label == "Exception: Unsupported AST type: <class 'ast.JoinedStr'>"


def test_decoded_values_keep_python_types() -> None:
    [call] = decode_calls("[f(a=1, b=2.5, c=True, d=None, e=[1, 'x'], g=(1,))]", STEP)
    assert call.arguments == {"a": 1, "b": 2.5, "c": True, "d": None, "e": [1, "x"], "g": (1,)}
    assert call.name == "f"


@pytest.mark.parametrize(
    ("message", "to_execution"),
    [
        ("[turn_on_wifi()]", True),
        ("[x]", True),  # decodes to zero calls: still routed to the executor
        ("turn_on_wifi()", False),  # no [...] span
        ("[turn_on_wifi()]\n", False),
        ("Which message should I delete? [1] or [2]", False),
        ("[turn_on_wifi(), 'done']", False),
        ("[\nturn_on_wifi()\n]", False),  # the span must be on one line
        ("finish conversation", False),
    ],
)
def test_multi_turn_routing(message: str, to_execution: bool) -> None:
    assert routes_to_execution(message) is to_execution
