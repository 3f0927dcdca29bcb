"""The bounded evaluator the suites' decoders use where an upstream evaluator calls ``eval`` on model text.

ACEBench ``eval``s a binary operation inside a call argument (``'New'+'York'``, ``99.0*2``; acebench-scoring §3.1,
§9.B, acebench-agent §4), and its agent executor ``eval``s the call string it rebuilds (acebench-agent §2.2); BFCL's
prompting decoder does the same for a binary operation (bfcl §3.1). We compute the same values without compiling or
executing anything: the AST is walked and each operator is applied with Python's own semantics, after checking that
the result stays within the caller's `Limits`. Anything refused raises `UnsupportedExpression`; what Python itself
raises for the same operation (``ZeroDivisionError``, ``TypeError``, ...) propagates unchanged, so each caller maps
both to its own error.

Known divergence, by design: upstream's ``eval`` would also resolve builtins and module globals
(``len('ab')+1``), and would hang or exhaust memory on ``'x'*10**10``; here those are refused.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeGuard

__all__ = [
    "BINARY_OPERATORS",
    "UNARY_OPERATORS",
    "Fallback",
    "Limits",
    "NameResolver",
    "UnsupportedExpression",
    "dotted_name",
    "evaluate",
    "undefined_name",
]


@dataclass(frozen=True)
class Limits:
    """What one caller lets an evaluation compute.

    Sizes are upper bounds of cost: characters for text, nested elements for containers (each container
    counting 1 more), 64-bit words for integers.

    Attributes:
        int_bits: largest integer a value may be, in bits.
        size: largest size a value may have.
        depth: deepest node evaluated, the root at 0; keeps the recursive walk far from the stack limit.
        work: total size of all intermediate values of one evaluation (None: unbounded); bounds its time.
        arithmetic_only: evaluate only literals, displays without ``*``/``**`` unpacking, and unary and
            binary operators (no ``%`` formatting of text); anything else goes to the fallback. Otherwise
            comparisons, ``and``/``or``, ``if``-``else``, subscripts, slices and unpacking are evaluated too.
        bound_literals: check literals and displays against the limits too, not only operator results.
    """

    int_bits: int
    size: int
    depth: int
    work: int | None = None
    arithmetic_only: bool = False
    bound_literals: bool = True


class UnsupportedExpression(Exception):
    """The expression needs more than the caller's `Limits` allow: a call, a name, or a too large value."""


#: Resolves a bare name to its value, or raises.
NameResolver = Callable[[str], object]
#: Called as ``fallback(node, evaluate_child)`` for a node the evaluator does not handle itself.
Fallback = Callable[[ast.AST, Callable[[ast.AST], object]], object]


def dotted_name(callee: ast.expr) -> str:
    """The name a call's callee spells: ``a.b.c`` for an attribute chain on a plain name. A base that is no plain
    name (a call, a subscript, a literal) adds nothing, as both upstream decoders read it (acebench-scoring §3.1,
    bfcl §3.1)."""
    parts: list[str] = []
    while isinstance(callee, ast.Attribute):
        parts.append(callee.attr)
        callee = callee.value
    if isinstance(callee, ast.Name):
        parts.append(callee.id)
    return ".".join(reversed(parts))


def undefined_name(name: str) -> NoReturn:
    """The resolver for which every name is undefined, with Python's own error."""
    raise NameError(f"name '{name}' is not defined")


def evaluate(
    node: ast.AST, limits: Limits, *, names: NameResolver | None = None, fallback: Fallback | None = None
) -> object:
    """Value of an expression node as Python's ``eval`` would compute it, within `limits`.

    Args:
        node: an expression node (from ``ast.parse(..., mode="eval").body`` or below).
        limits: the caller's bounds and accepted syntax.
        names: resolves bare names; without one a name is refused.
        fallback: evaluates the nodes this module does not (calls, attributes); without one they are refused.

    Raises:
        UnsupportedExpression: the expression is refused, or a value would exceed `limits`.
        Exception: whatever Python raises for the same operation (``ZeroDivisionError``, ``TypeError``, ...).
    """
    return _Evaluation(limits, names, fallback).value(node, 0)[0]


# --- operators ------------------------------------------------------------------------------------

BINARY_OPERATORS: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}

#: The operators take any operand, as Python's do: a wrong type raises their own TypeError.
UNARY_OPERATORS: dict[type[ast.unaryop], Callable[[Any], object]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
    # `is` / `is not` are left out: their result on literals depends on interpreter caching.
}
_SUBSCRIPT: Callable[[Any, Any], object] = operator.getitem  # `container[index]`, on whatever the values are

_SEQUENCES = (str, bytes, list, tuple)
_FORMAT_NUMBER = re.compile(r"\d+")


# --- sizes ----------------------------------------------------------------------------------------


def _size(value: object) -> int:
    """Upper bound of the cost of `value`: characters for text, nested elements for containers."""
    if isinstance(value, (str, bytes)):
        return max(1, len(value))
    if isinstance(value, int) and not isinstance(value, bool):
        return max(1, value.bit_length() // 64)
    if isinstance(value, dict):
        return 1 + sum(_size(k) + _size(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return 1 + sum(_size(v) for v in value)
    return 1


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int)  # bools included: Python treats True as 1 in arithmetic


# --- the walk -------------------------------------------------------------------------------------


class _Evaluation:
    """One evaluation: its limits, resolvers and the work spent so far."""

    def __init__(self, limits: Limits, names: NameResolver | None, fallback: Fallback | None) -> None:
        self.limits = limits
        self.names = names
        self.fallback = fallback
        self.spent = 0

    def charge(self, cost: int) -> None:
        self.spent += cost
        if self.limits.work is not None and self.spent > self.limits.work:
            raise UnsupportedExpression("expression too expensive to evaluate")

    def check(self, value: object, size: int) -> tuple[object, int]:
        bits = self.limits.int_bits
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > bits:
            raise UnsupportedExpression(f"integer result larger than {bits} bits")
        if size > self.limits.size:
            raise UnsupportedExpression(f"value larger than {self.limits.size} characters/elements")
        return value, size

    def literal(self, value: object, size: int) -> tuple[object, int]:
        return self.check(value, size) if self.limits.bound_literals else (value, size)

    def value(self, node: ast.AST, depth: int) -> tuple[object, int]:
        """Value of `node` and an upper bound of its size."""
        if depth > self.limits.depth:
            raise UnsupportedExpression("expression nested too deeply")
        inner = depth + 1
        if isinstance(node, ast.Constant):
            return self.literal(node.value, _size(node.value))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items, size = self.elements(node.elts, inner)
            if isinstance(node, ast.List):
                return self.literal(items, size)
            if isinstance(node, ast.Tuple):
                return self.literal(tuple(items), size)
            return self.literal(set(items), size)
        if isinstance(node, ast.Dict):
            return self.dict(node, inner)
        if isinstance(node, ast.Name) and self.names is not None:
            return self.names(node.id), 1  # a value the caller supplies is its own to bound
        if isinstance(node, ast.UnaryOp):
            operand, size = self.value(node.operand, inner)
            return self.check(UNARY_OPERATORS[type(node.op)](operand), size)
        if isinstance(node, ast.BinOp):
            return self.binop(node, inner)
        if not self.limits.arithmetic_only:
            if isinstance(node, ast.BoolOp):
                return self.boolop(node, inner)
            if isinstance(node, ast.Compare):
                return self.compare(node, inner)
            if isinstance(node, ast.IfExp):
                test, _ = self.value(node.test, inner)
                return self.value(node.body if test else node.orelse, inner)
            if isinstance(node, ast.Subscript):
                container, size = self.value(node.value, inner)
                index, _ = self.value(node.slice, inner)
                return self.check(_SUBSCRIPT(container, index), size)  # a part is never larger than the whole
            if isinstance(node, ast.Slice):
                parts = (node.lower, node.upper, node.step)
                return slice(*[None if part is None else self.value(part, inner)[0] for part in parts]), 1
        if self.fallback is not None:
            return self.fallback(node, lambda child: self.value(child, inner)[0]), 1
        raise UnsupportedExpression(f"unsupported expression in a computed value: {type(node).__name__}")

    def elements(self, elts: list[ast.expr], depth: int) -> tuple[list[object], int]:
        if self.limits.arithmetic_only and any(isinstance(e, ast.Starred) for e in elts):
            raise UnsupportedExpression("starred elements are not evaluated")
        items: list[object] = []
        size = 1
        for elt in elts:
            if isinstance(elt, ast.Starred):
                iterable, part = self.value(elt.value, depth)
                if isinstance(iterable, dict):
                    iterable = list(iterable)
                if not isinstance(iterable, (str, bytes, list, tuple, set, frozenset)):
                    raise UnsupportedExpression("only literal sequences can be unpacked")
                items.extend(iterable)
            else:
                value, part = self.value(elt, depth)
                items.append(value)
            size += part
            self.literal(None, size)
        self.charge(size)
        return items, size

    def dict(self, node: ast.Dict, depth: int) -> tuple[object, int]:
        result: dict[object, object] = {}
        size = 1
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None and self.limits.arithmetic_only:
                raise UnsupportedExpression("dict unpacking is not evaluated")
            value, part = self.value(value_node, depth)
            if key_node is None:  # {**other}
                if not isinstance(value, dict):
                    raise UnsupportedExpression("only literal dicts can be unpacked")
                result.update(value)
            else:
                key, key_part = self.value(key_node, depth)
                result[key] = value
                part += key_part
            size += part
            self.literal(None, size)
        self.charge(size)
        return self.literal(result, size)

    def boolop(self, node: ast.BoolOp, depth: int) -> tuple[object, int]:
        is_and = isinstance(node.op, ast.And)
        value: object = None
        size = 1
        for operand in node.values:
            value, size = self.value(operand, depth)
            if bool(value) != is_and:  # `and` stops at the first falsy value, `or` at the first truthy one
                break
        return value, size

    def compare(self, node: ast.Compare, depth: int) -> tuple[object, int]:
        left, left_size = self.value(node.left, depth)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            compare = _COMPARE.get(type(op))
            if compare is None:
                raise UnsupportedExpression("identity comparison is not supported in a computed value")
            right, right_size = self.value(right_node, depth)
            self.charge(left_size + right_size)
            if not compare(left, right):
                return False, 1
            left, left_size = right, right_size
        return True, 1

    def binop(self, node: ast.BinOp, depth: int) -> tuple[object, int]:
        left, left_size = self.value(node.left, depth)
        right, right_size = self.value(node.right, depth)
        op = type(node.op)
        size = left_size + right_size
        if op is ast.Mult:
            size = self.product_size(left, left_size, right, right_size)
        elif op is ast.Pow:
            self.check_power(left, right)
        elif op is ast.LShift:
            if _is_int(left) and _is_int(right) and right > 0 and left.bit_length() + right > self.limits.int_bits:
                raise UnsupportedExpression(f"integer result larger than {self.limits.int_bits} bits")
        elif op is ast.Mod and isinstance(left, (str, bytes)):
            size = self.format_size(left, right_size)
        self.check(None, size)
        self.charge(size)
        return self.check(BINARY_OPERATORS[op](left, right), size)

    def product_size(self, left: object, left_size: int, right: object, right_size: int) -> int:
        """Predicted size of ``left * right`` before it is computed."""
        if isinstance(left, _SEQUENCES) and _is_int(right):
            return max(1, left_size * max(0, int(right)))
        if isinstance(right, _SEQUENCES) and _is_int(left):
            return max(1, right_size * max(0, int(left)))
        # Integer operands are bounded (by int_bits, or by Python's 4,300-digit literal limit), so their
        # product is cheap to compute and is checked afterwards.
        return left_size + right_size

    def check_power(self, base: object, exponent: object) -> None:
        if not (_is_int(base) and _is_int(exponent)) or exponent <= 0 or abs(base) <= 1:
            return  # floats overflow to an error quickly; 0, 1 and -1 stay small; negative powers are floats
        bits = self.limits.int_bits
        if exponent > bits or (abs(base).bit_length() - 1) * exponent > bits:
            raise UnsupportedExpression(f"integer result larger than {bits} bits")

    def format_size(self, template: str | bytes, args_size: int) -> int:
        """Upper bound of ``template % args``: widths and precisions can inflate a short template."""
        if self.limits.arithmetic_only:
            raise UnsupportedExpression("string formatting is not evaluated")
        text = template if isinstance(template, str) else template.decode("latin-1")
        if "*" in text:
            raise UnsupportedExpression("'*' widths are not supported in a computed value")
        return len(text) + args_size + sum(int(digits) for digits in _FORMAT_NUMBER.findall(text))
