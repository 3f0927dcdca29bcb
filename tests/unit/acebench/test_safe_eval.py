"""The one bounded evaluator, under each caller's limits: the normal decoder's and the agent's."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import pytest

from memory_cost import cost
from pytest_tooleval.safe_eval import (
    Limits,
    UnsupportedExpression,
    evaluate,
    undefined_name,
)
from pytest_tooleval.suites.acebench import decode as normal
from pytest_tooleval.suites.acebench.agent import decode as agent

DECODER = normal.LIMITS
AGENT = agent.LIMITS


REFUSAL_BYTES = 512 * 1024  # the most a refusal may hold: a refusal holds about 12 KB


def _eval(source: str, limits: Limits, **options: Any) -> Any:
    return evaluate(ast.parse(source, mode="eval").body, limits, **options)


def _agent(source: str) -> Any:
    """As the agent decoder calls it: every name undefined, other nodes refused in the agent's words."""
    return _eval(source, AGENT, names=undefined_name, fallback=agent.not_evaluated)


# --- each caller's limits apply ------------------------------------------------------------------------


def test_a_5000_bit_integer_folds_for_the_decoder_but_not_for_the_agent() -> None:
    assert _eval("2 ** 4999", DECODER) == 2**4999
    assert normal.fold_constant(ast.parse("2 ** 4999", mode="eval").body) == 2**4999
    with pytest.raises(UnsupportedExpression, match="larger than 4096 bits"):
        _agent("2 ** 4999")
    with pytest.raises(agent.AgentDecodeError) as raised:
        agent.decode_message("[f(a=2**4999)]", agent.DecodeMode.STEP)
    assert raised.value.label == "UnsupportedExpression: integer result larger than 4096 bits"


def test_the_same_size_limit_bounds_both() -> None:
    assert _eval("'x' * 100_000", DECODER) == _agent("'x' * 100_000") == "x" * 100_000
    for limits in (DECODER, AGENT):
        with pytest.raises(UnsupportedExpression, match="value larger than 100000"):
            _eval("'x' * 100_001", limits)


def test_containers_count_their_nested_elements() -> None:
    # A list of n references to one big list is n times its size: its repr would be that large.
    for limits in (DECODER, AGENT):
        with pytest.raises(UnsupportedExpression, match="value larger than"):
            _eval("[[0] * 1000] * 1000", limits)


def test_the_decoder_evaluates_what_upstreams_eval_meets_and_the_agent_only_arithmetic() -> None:
    rich = {
        "(1 < 2) + 1": 2,
        "('x' if 1 else 'y') + 'z'": "xz",
        "(1, 2)[0] + 1": 2,
        "[1, *'ab'] + []": [1, "a", "b"],
        "{**{'a': 1}} | {}": {"a": 1},
        "'%s!' % 'x'": "x!",
    }
    for source, value in rich.items():
        assert _eval(source, DECODER) == value
    with pytest.raises(UnsupportedExpression, match=r"^Compare is not evaluated$"):
        _agent("(1 < 2) + 1")
    with pytest.raises(UnsupportedExpression, match=r"^starred elements are not evaluated$"):
        _agent("[1, *'ab'] + []")
    with pytest.raises(UnsupportedExpression, match=r"^dict unpacking is not evaluated$"):
        _agent("{**{'a': 1}} | {}")
    with pytest.raises(UnsupportedExpression, match=r"^string formatting is not evaluated$"):
        _agent("'%s!' % 'x'")


def test_only_the_decoder_bounds_literals() -> None:
    # Agent dispatch re-reads the argument values decoding produced; upstream takes any literal there.
    big = "9" * 1300  # about 4,300 bits
    assert _agent(f"{big} * 0") == 0
    with pytest.raises(UnsupportedExpression, match="larger than 4096 bits"):
        _agent(f"{big} + 0")
    assert _eval(f"{big} * 0", DECODER) == 0
    with pytest.raises(UnsupportedExpression, match="larger than 10000 bits"):
        _eval(f"{'9' * 3500} * 0", DECODER)


def test_names_are_refused_unless_resolved() -> None:
    with pytest.raises(UnsupportedExpression, match="Name"):
        _eval("x + 1", DECODER)
    with pytest.raises(NameError, match="name 'x' is not defined"):
        _agent("x + 1")
    assert _eval("x + 1", AGENT, names={"x": 41}.__getitem__) == 42


def test_python_errors_propagate_and_each_caller_maps_them() -> None:
    with pytest.raises(ZeroDivisionError):
        _eval("1 / 0", DECODER)
    with pytest.raises(normal.DecodeError, match=r"^cannot evaluate expression: ZeroDivisionError: division by zero$"):
        normal.fold_constant(ast.parse("1 / 0", mode="eval").body)
    with pytest.raises(agent.AgentDecodeError) as raised:
        agent.decode_message("[f(a=1/0)]", agent.DecodeMode.STEP)
    assert raised.value.label == "ZeroDivisionError: division by zero"


def test_the_fallback_gets_the_node_and_an_evaluator_for_its_children() -> None:
    def call(node: ast.AST, child: Any) -> Any:
        assert isinstance(node, ast.Call)
        return [child(arg) for arg in node.args]

    assert _eval("f(1 + 1, 'a' * 2)", AGENT, fallback=call) == [2, "aa"]


def test_depth_and_work_limits() -> None:
    shallow = dataclasses.replace(DECODER, depth=2)  # the root at 0: "1 + 1 + 1" reaches 2
    assert _eval("1 + 1 + 1", shallow) == 3
    with pytest.raises(UnsupportedExpression, match="nested too deeply"):
        _eval("1 + 1 + 1 + 1", shallow)
    cheap = dataclasses.replace(DECODER, work=1_000)
    with pytest.raises(UnsupportedExpression, match="too expensive"):
        _eval("'x' * 600 + 'y' * 600", cheap)
    assert _eval("'x' * 600 + 'y' * 600", AGENT)  # the agent has no work budget


def test_limits_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DECODER.size = 10**12  # type: ignore[misc]


# --- hostile input ends as an error, quickly ------------------------------------------------------------


def _nested_lists(depth: int) -> ast.expr:
    node: ast.expr = ast.List(elts=[], ctx=ast.Load())
    for _ in range(depth):
        node = ast.List(elts=[node], ctx=ast.Load())
    return node


HOSTILE = {
    "huge repetition": "'x' * 10 ** 10",
    "huge power": "10 ** 10 ** 10",
    "huge shift": "1 << 10 ** 12",
    "square of a big list": "[[0] * 100_000] * 100_000",
    "huge power of a big base": "(10 ** 1000) ** 10 ** 6",
}


@pytest.mark.parametrize("limits", [DECODER, AGENT], ids=["decoder", "agent"])
@pytest.mark.parametrize("source", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_expressions_are_refused_quickly(limits: Limits, source: str) -> None:
    with cost() as peak, pytest.raises(UnsupportedExpression):
        _eval(source, limits)
    assert peak[0] < REFUSAL_BYTES  # refused before computing: [0] * 100_000 alone would hold 800 KB


@pytest.mark.parametrize("limits", [DECODER, AGENT], ids=["decoder", "agent"])
def test_ten_thousand_nested_brackets_are_refused_quickly(limits: Limits) -> None:
    # Python's parser refuses this depth itself; a tree built directly still meets the depth limit.
    tree = _nested_lists(10_000)
    with cost() as peak, pytest.raises(UnsupportedExpression, match="nested too deeply"):
        evaluate(tree, limits)
    assert peak[0] < REFUSAL_BYTES  # the walk stops at the limit's depth, about 200 KB of it


def test_a_square_of_a_big_list_is_an_undecodable_agent_message() -> None:
    # The agent's old per-sequence length check let this through, and rebuilding its call string
    # needed about 30 GB.
    with cost() as peak, pytest.raises(agent.AgentDecodeError, match="value larger than 100000"):
        agent.decode_message("[f(a=[[0]*100000]*100000)]", agent.DecodeMode.STEP)
    assert peak[0] < REFUSAL_BYTES  # the value was never built: [0] * 100_000 alone would hold 800 KB
