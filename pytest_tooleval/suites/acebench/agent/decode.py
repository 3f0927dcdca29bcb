"""Turning an agent message into call strings, as the official agent executors do (acebench-agent §4).

This differs from the normal-category decoder: whitespace is kept, only ``[``, ``]`` and ``'`` are stripped
from the ends, positional arguments are dropped, and each call is rebuilt as a string
``name(k=repr(v), ...)`` that dispatch then runs. Model text is parsed with :mod:`ast` and never executed;
where upstream calls ``eval`` (a binary operation in an argument) the bounded evaluator computes the value.
"""

from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass
from typing import NoReturn

from .... import python_ast, safe_eval
from ..decode import MAX_SOURCE_CHARS

#: The agent's evaluator, here and in dispatch: literals, displays and arithmetic only, other nodes go to the
#: fallback. Operator results are bounded (4,096-bit integers, about 1,200 digits); literals are not, because
#: dispatch re-reads the argument values decoding produced, and upstream accepts any literal there.
LIMITS = safe_eval.Limits(int_bits=4_096, size=100_000, depth=250, arithmetic_only=True, bound_literals=False)


def not_evaluated(node: ast.AST, evaluate: object) -> NoReturn:
    """The agent's fallback for nodes beyond `LIMITS` (comparisons, calls, ...): refused, in its own words."""
    raise safe_eval.UnsupportedExpression(f"{type(node).__name__} is not evaluated")


class DecodeMode(enum.Enum):
    """Which upstream copy of the decoder to follow; they differ only on list elements that are not calls."""

    STEP = "step"  # multi_step executor: a non-call element fails the whole message
    TURN = "turn"  # multi_turn executor: non-call elements are skipped
    ROUTE = "route"  # multi_turn agent routing check: a non-call element fails (with a TypeError)


class AgentDecodeError(Exception):
    """The message cannot be decoded; ``cause`` is the exception upstream's decoder would have raised."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause

    @property
    def label(self) -> str:
        """``"<ExceptionType>: <message>"``, as the conformance traces record it."""
        return f"{type(self.cause).__name__}: {self.cause}"


@dataclass(frozen=True)
class DecodedCall:
    """One call after upstream's value conversion.

    Attributes:
        name: the dotted callee path ("" when the callee is neither a name nor an attribute).
        arguments: keyword arguments only; a ``**mapping`` argument appears under the key None.
    """

    name: str
    arguments: dict[object, object]


_CALL_SPAN = re.compile(r"\[.*\]")  # no DOTALL: the span must sit on one line


def looks_like_calls(message: str) -> bool:
    """The first half of the multi_turn routing test: a ``[...]`` span on one line (acebench-agent §5.2)."""
    return _CALL_SPAN.search(message) is not None


def decode_calls(message: str, mode: DecodeMode) -> list[DecodedCall]:
    """Calls in ``message``, converted like upstream; raises :class:`AgentDecodeError` where upstream raises."""
    try:
        return _decode(message, mode)
    except AgentDecodeError:
        raise
    except Exception as exc:  # any failure of upstream's decoder is a decode failure
        raise AgentDecodeError(exc) from exc


def decode_message(message: str, mode: DecodeMode) -> list[str]:
    """The call strings upstream rebuilds from ``message`` (one per call), ready for dispatch.

    Raises:
        AgentDecodeError: where upstream's decoder raises, including while rebuilding the strings.
    """
    calls = decode_calls(message, mode)
    try:
        return [f"{call.name}({_rebuild_arguments(call.arguments)})" for call in calls]
    except Exception as exc:
        raise AgentDecodeError(exc) from exc


def routes_to_execution(message: str) -> bool:
    """Whether the multi_turn agent's reply is addressed to the executor (else to the user)."""
    if not looks_like_calls(message):
        return False
    try:
        decode_message(message, DecodeMode.ROUTE)
    except AgentDecodeError:
        return False
    return True


# -- parsing --------------------------------------------------------------------------------------------------


def _decode(message: str, mode: DecodeMode) -> list[DecodedCall]:
    if len(message) > MAX_SOURCE_CHARS:
        # not upstream: a bound on hostile output, as the normal decoder's (a real message is a few thousand
        # characters); past it, each call would still be parsed and run one by one
        raise ValueError(f"message longer than {MAX_SOURCE_CHARS} characters")
    text = message
    if text[0] == " ":  # IndexError on an empty message, as upstream
        text = text[1:]
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    # ACEBench quirk: strip brackets and single quotes from both ends, but not whitespace (acebench-agent §4).
    tree = python_ast.parse(text.strip("[]'"), mode="eval")
    body = tree.body
    if isinstance(body, ast.Call):
        return [_call(body)]
    if isinstance(body, (ast.Tuple, ast.List)):
        calls = []
        for element in body.elts:
            if isinstance(element, ast.Call):
                calls.append(_call(element))
            elif mode is DecodeMode.STEP:
                raise ValueError("Element is not a function call")
            elif mode is DecodeMode.ROUTE:
                # Upstream's routing copy returns False here and then iterates it.
                raise TypeError("'bool' object is not iterable")
        return calls
    return []  # any other expression ("[x]", "[turn_on_wifi]") decodes to no calls


def _call(node: ast.Call) -> DecodedCall:
    arguments: dict[object, object] = {}
    for keyword in node.keywords:  # positional arguments are dropped
        arguments[keyword.arg] = _value(keyword.value)
    return DecodedCall(safe_eval.dotted_name(node.func), arguments)


def _value(node: object) -> object:
    """Upstream's argument conversion, quirks included (acebench-agent §4 step 5)."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return _negated_operand(node.operand)
    if isinstance(node, ast.List):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        converted = {}
        for key, value in zip(node.keys, node.values, strict=True):
            converted[_value(key)] = _value(value)  # a ** entry has key None and fails here
        return converted
    if isinstance(node, ast.BinOp):
        # Upstream evals the operation's source; we compute it without executing anything.
        return safe_eval.evaluate(node, LIMITS, names=safe_eval.undefined_name, fallback=not_evaluated)
    if isinstance(node, ast.Name):
        return node.id  # a bare identifier becomes its name
    if isinstance(node, ast.Call):
        if not node.keywords:
            return ast.unparse(node)  # a nested call without keywords becomes its source text
        call = _call(node)
        return {call.name: call.arguments}
    if isinstance(node, ast.Tuple):
        return tuple(_value(e) for e in node.elts)
    if isinstance(node, ast.Lambda):
        # Upstream subscripts the lambda's body node, which always fails.
        raise TypeError(f"'{type(node.body).__name__}' object is not subscriptable")
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise Exception(f"Unsupported AST type: {type(node)}")


def _negated_operand(operand: ast.expr) -> object:
    # ACEBench quirk: any unary operator negates the operand's constant, so +4 -> -4 and not True -> -1 (§4).
    if not hasattr(operand, "value"):
        raise AttributeError(f"'{type(operand).__name__}' object has no attribute 'value'")
    value = operand.value
    if isinstance(value, ast.AST):
        raise TypeError(f"bad operand type for unary -: '{type(value).__name__}'")
    return -value


# -- rebuilding the call string ------------------------------------------------------------------------------


def _rebuild_arguments(arguments: dict[object, object]) -> str:
    return ", ".join(f"{key}={_rebuild_value(value)}" for key, value in arguments.items())


def _rebuild_value(value: object) -> str:
    if isinstance(value, dict):
        # ACEBench quirk: a dict argument is rebuilt as a nested call named after its first key (§4 step 5).
        name = list(value.keys())[0]  # noqa: RUF015  (IndexError on {}, as upstream)
        inner = value[name]
        if not isinstance(inner, dict):
            raise AttributeError(f"'{type(inner).__name__}' object has no attribute 'items'")
        return f"{name}({_rebuild_arguments(inner)})"
    return repr(value)
