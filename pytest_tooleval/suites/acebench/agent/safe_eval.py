"""A bounded evaluator for literal Python expressions.

Upstream ACEBench calls ``eval`` on model text in two places: to fold a binary operation inside a call
argument (``99.0*2``), and to run the call string it rebuilds from the decoded call (acebench-agent §4, §2.2).
We compute the same values without executing anything: only literals, containers and arithmetic on them are
evaluated, sizes are bounded, and every name is undefined unless the caller supplies a resolver.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..safe_eval import BINARY_OPERATORS, UNARY_OPERATORS  # the same operators, with Python's meaning

#: Longest string, bytes, list or tuple an operation may produce (characters or items).
MAX_SEQUENCE = 100_000
#: Largest integer an operation may produce, in bits (about 1,200 decimal digits).
MAX_INT_BITS = 4_096
#: Deepest expression tree evaluated.
MAX_DEPTH = 250


class UnsupportedExpression(Exception):
    """The expression needs more than literal arithmetic (a call, a comprehension, ...), or is too large.

    Upstream would have evaluated it with ``eval``; we refuse instead. Callers treat it like any other
    evaluation error.
    """


NameResolver = Callable[[str], Any]


def _undefined(name: str) -> Any:
    raise NameError(f"name '{name}' is not defined")


_SEQUENCES = (str, bytes, list, tuple)


def _is_int(value: Any) -> bool:
    return isinstance(value, int)  # bool included, as in Python arithmetic


def _check_size(value: Any) -> Any:
    if _is_int(value) and value.bit_length() > MAX_INT_BITS:
        raise UnsupportedExpression("integer result too large")
    if isinstance(value, _SEQUENCES) and len(value) > MAX_SEQUENCE:
        raise UnsupportedExpression("sequence result too large")
    return value


def _guard_binary(op: type[ast.operator], left: Any, right: Any) -> None:
    """Refuse operations whose result could be huge before computing them."""
    sequences = isinstance(left, _SEQUENCES), isinstance(right, _SEQUENCES)
    if op is ast.Mult:
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, _SEQUENCES) and _is_int(count) and len(seq) * max(count, 0) > MAX_SEQUENCE:
                raise UnsupportedExpression("repetition too large")
    elif op is ast.Add and all(sequences) and len(left) + len(right) > MAX_SEQUENCE:
        raise UnsupportedExpression("concatenation too large")
    elif op is ast.Pow:
        huge_int = _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1
        if huge_int and (abs(left).bit_length() - 1) * right > MAX_INT_BITS:
            raise UnsupportedExpression("power too large")
        if isinstance(left, complex) and isinstance(right, (int, float)) and abs(right) > 10_000:
            raise UnsupportedExpression("power too large")
    elif op is ast.LShift and _is_int(left) and _is_int(right) and right > MAX_INT_BITS:
        raise UnsupportedExpression("shift too large")
    elif op is ast.Mod and isinstance(left, (str, bytes)):
        # printf-style formatting can be asked for arbitrary widths ('%*d'); not worth emulating.
        raise UnsupportedExpression("string formatting is not evaluated")


Fallback = Callable[[ast.AST, Callable[[ast.AST], Any]], Any]


def evaluate(node: ast.AST, names: NameResolver = _undefined, fallback: Fallback | None = None) -> Any:
    """Value of a literal expression node, as Python would compute it.

    Args:
        node: an expression node (from ``ast.parse(..., mode="eval").body`` or below).
        names: resolves a bare name; by default every name raises ``NameError`` like an undefined one.
        fallback: called as ``fallback(node, evaluate_child)`` for nodes this module does not evaluate
            itself (calls, attributes); without one they raise ``UnsupportedExpression``.

    Raises:
        UnsupportedExpression: for anything beyond literals, containers, unary and binary operators, or a
            result past the size limits.
        Exception: whatever Python raises for the same operation (``ZeroDivisionError``, ``TypeError``, ...).
    """

    def walk(current: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise UnsupportedExpression("expression nested too deeply")

        def child(sub: ast.AST) -> Any:
            return walk(sub, depth + 1)

        if isinstance(current, ast.Constant):
            return current.value
        if isinstance(current, ast.List):
            return [child(e) for e in _plain_elements(current.elts)]
        if isinstance(current, ast.Tuple):
            return tuple(child(e) for e in _plain_elements(current.elts))
        if isinstance(current, ast.Set):
            return {child(e) for e in _plain_elements(current.elts)}
        if isinstance(current, ast.Dict):
            result = {}
            for key, value in zip(current.keys, current.values, strict=True):
                if key is None:
                    raise UnsupportedExpression("dict unpacking is not evaluated")
                result[child(key)] = child(value)
            return result
        if isinstance(current, ast.Name):
            return names(current.id)
        if isinstance(current, ast.UnaryOp) and type(current.op) in UNARY_OPERATORS:
            return _check_size(UNARY_OPERATORS[type(current.op)](child(current.operand)))
        if isinstance(current, ast.BinOp) and type(current.op) in BINARY_OPERATORS:
            left = child(current.left)
            right = child(current.right)
            _guard_binary(type(current.op), left, right)
            return _check_size(BINARY_OPERATORS[type(current.op)](left, right))
        if fallback is not None:
            return fallback(current, child)
        raise UnsupportedExpression(f"{type(current).__name__} is not evaluated")

    return walk(node, 0)


def _plain_elements(elements: list[ast.expr]) -> list[ast.expr]:
    if any(isinstance(e, ast.Starred) for e in elements):
        raise UnsupportedExpression("starred elements are not evaluated")
    return elements
