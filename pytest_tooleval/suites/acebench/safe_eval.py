"""Bounded constant folding for binary-operator argument values.

Upstream's decoder hands every ``BinOp`` argument value (``'New'+'York'``, ``2*3``) to ``eval``
(acebench-scoring §3.1, §9.B). We reproduce the *result* of that for expressions built from literals,
without compiling or executing anything: the AST is walked and each operator is applied with Python's
own semantics, after checking that the result stays small. Names, calls, attribute access,
comprehensions, lambdas, f-strings and identity tests are refused. Anything refused or too large
raises `DecodeError`, which the caller reports as ``wrong_output_format``.

Known divergence, by design: upstream's ``eval`` would also resolve builtins and its module globals
(``len('ab')+1``), and would hang or exhaust memory on ``'x'*10**10``; both are format errors here.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable

__all__ = [
    "MAX_AST_DEPTH",
    "MAX_INT_BITS",
    "MAX_SIZE",
    "BINARY_OPERATORS",
    "DecodeError",
    "UNARY_OPERATORS",
    "ast_depth",
    "fold_constant",
]

#: Largest string/bytes length or container size (nested elements counted) a folded value may have.
MAX_SIZE = 100_000
#: Largest integer, in bits (about 3,000 decimal digits: safely below Python's 4,300-digit str() limit).
MAX_INT_BITS = 10_000
#: Deepest AST accepted anywhere in a decoded output; keeps every recursive walk far from the stack limit.
MAX_AST_DEPTH = 200
#: Total size of all intermediate values of one folding; bounds the time a single argument can take.
_WORK_BUDGET = 5_000_000


class DecodeError(ValueError):
    """The model output cannot be decoded into calls (upstream: ``wrong_output_format``)."""


def ast_depth(node: ast.AST, limit: int = MAX_AST_DEPTH) -> int:
    """Depth of the tree under `node`, computed without recursion; stops early past `limit`."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(current))
    return deepest


@dataclass
class _Budget:
    """Work done so far by one folding (mutable, local to one `fold_constant` call)."""

    spent: int = 0

    def charge(self, cost: int) -> None:
        self.spent += cost
        if self.spent > _WORK_BUDGET:
            raise DecodeError("expression too expensive to evaluate")


def fold_constant(node: ast.expr) -> Any:
    """Evaluate a literal-only expression the way Python's ``eval`` would, within fixed bounds.

    Args:
        node: an expression node from ``ast.parse`` (typically an ``ast.BinOp``).

    Returns:
        The value ``eval(ast.unparse(node))`` would give for literal operands.

    Raises:
        DecodeError: the expression uses anything but literals and operators, fails (``1/0``), or its
            value or any intermediate value would exceed `MAX_SIZE` / `MAX_INT_BITS`.
    """
    if ast_depth(node) > MAX_AST_DEPTH:
        raise DecodeError("expression nested too deeply")
    try:
        value, _ = _eval(node, _Budget())
    except DecodeError:
        raise
    except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, MemoryError, RecursionError) as exc:
        # The same failures make upstream's eval raise, which it reports as a format error.
        raise DecodeError(f"cannot evaluate expression: {type(exc).__name__}: {exc}") from None
    return value


# --- sizes ----------------------------------------------------------------------------------------


def _size(value: Any) -> int:
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


def _check(value: Any, size: int) -> tuple[Any, int]:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise DecodeError(f"integer result larger than {MAX_INT_BITS} bits")
    if size > MAX_SIZE:
        raise DecodeError(f"value larger than {MAX_SIZE} characters/elements")
    return value, size


def _is_int(value: Any) -> bool:
    return isinstance(value, int)  # bools included: Python treats True as 1 in arithmetic


# --- the walk ---------------------------------------------------------------------------------------

BINARY_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
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

UNARY_OPERATORS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
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


def _eval(node: ast.AST, budget: _Budget) -> tuple[Any, int]:
    """Value of `node` and an upper bound of its size."""
    if isinstance(node, ast.Constant):
        value = node.value
        return _check(value, _size(value))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items, size = _eval_elements(node.elts, budget)
        if isinstance(node, ast.List):
            return _check(items, size)
        if isinstance(node, ast.Tuple):
            return _check(tuple(items), size)
        return _check(set(items), size)
    if isinstance(node, ast.Dict):
        return _eval_dict(node, budget)
    if isinstance(node, ast.UnaryOp):
        operand, size = _eval(node.operand, budget)
        return _check(UNARY_OPERATORS[type(node.op)](operand), size)
    if isinstance(node, ast.BinOp):
        return _eval_binop(node, budget)
    if isinstance(node, ast.BoolOp):
        return _eval_boolop(node, budget)
    if isinstance(node, ast.Compare):
        return _eval_compare(node, budget)
    if isinstance(node, ast.IfExp):
        test, _ = _eval(node.test, budget)
        return _eval(node.body if test else node.orelse, budget)
    if isinstance(node, ast.Subscript):
        container, size = _eval(node.value, budget)
        index, _ = _eval(node.slice, budget)
        return _check(container[index], size)  # a part is never larger than the whole
    if isinstance(node, ast.Slice):
        bounds = [None if part is None else _eval(part, budget)[0] for part in (node.lower, node.upper, node.step)]
        return slice(*bounds), 1
    raise DecodeError(f"unsupported expression in a computed value: {type(node).__name__}")


def _eval_elements(elts: list[ast.expr], budget: _Budget) -> tuple[list[Any], int]:
    items: list[Any] = []
    size = 1
    for elt in elts:
        if isinstance(elt, ast.Starred):
            iterable, part = _eval(elt.value, budget)
            if isinstance(iterable, dict):
                iterable = list(iterable)
            if not isinstance(iterable, (str, bytes, list, tuple, set, frozenset)):
                raise DecodeError("only literal sequences can be unpacked")
            items.extend(iterable)
        else:
            value, part = _eval(elt, budget)
            items.append(value)
        size += part
        _check(None, size)
    budget.charge(size)
    return items, size


def _eval_dict(node: ast.Dict, budget: _Budget) -> tuple[Any, int]:
    result: dict[Any, Any] = {}
    size = 1
    for key_node, value_node in zip(node.keys, node.values):
        value, part = _eval(value_node, budget)
        if key_node is None:  # {**other}
            if not isinstance(value, dict):
                raise DecodeError("only literal dicts can be unpacked")
            result.update(value)
        else:
            key, key_part = _eval(key_node, budget)
            result[key] = value
            part += key_part
        size += part
        _check(None, size)
    budget.charge(size)
    return result, size


def _eval_boolop(node: ast.BoolOp, budget: _Budget) -> tuple[Any, int]:
    is_and = isinstance(node.op, ast.And)
    value: Any = None
    size = 1
    for operand in node.values:
        value, size = _eval(operand, budget)
        if bool(value) != is_and:  # `and` stops at the first falsy value, `or` at the first truthy one
            break
    return value, size


def _eval_compare(node: ast.Compare, budget: _Budget) -> tuple[Any, int]:
    left, left_size = _eval(node.left, budget)
    for op, right_node in zip(node.ops, node.comparators):
        compare = _COMPARE.get(type(op))
        if compare is None:
            raise DecodeError("identity comparison is not supported in a computed value")
        right, right_size = _eval(right_node, budget)
        budget.charge(left_size + right_size)
        if not compare(left, right):
            return False, 1
        left, left_size = right, right_size
    return True, 1


_FORMAT_NUMBER = re.compile(r"\d+")


def _eval_binop(node: ast.BinOp, budget: _Budget) -> tuple[Any, int]:
    left, left_size = _eval(node.left, budget)
    right, right_size = _eval(node.right, budget)
    op = type(node.op)
    size = left_size + right_size
    if op is ast.Mult:
        size = _product_size(left, left_size, right, right_size)
    elif op is ast.Pow:
        _check_power(left, right)
    elif op is ast.LShift:
        if _is_int(left) and _is_int(right) and right > 0 and left.bit_length() + right > MAX_INT_BITS:
            raise DecodeError(f"integer result larger than {MAX_INT_BITS} bits")
    elif op is ast.Mod and isinstance(left, (str, bytes)):
        size = _format_size(left, right_size)
    _check(None, size)
    budget.charge(size)
    return _check(BINARY_OPERATORS[op](left, right), size)


def _product_size(left: Any, left_size: int, right: Any, right_size: int) -> int:
    """Predicted size of ``left * right`` before it is computed."""
    sequences = (str, bytes, list, tuple)
    if isinstance(left, sequences) and _is_int(right):
        return max(1, left_size * max(0, int(right)))
    if isinstance(right, sequences) and _is_int(left):
        return max(1, right_size * max(0, int(left)))
    if _is_int(left) and _is_int(right) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise DecodeError(f"integer result larger than {MAX_INT_BITS} bits")
    return left_size + right_size


def _check_power(base: Any, exponent: Any) -> None:
    if not (_is_int(base) and _is_int(exponent)) or exponent <= 0 or abs(base) <= 1:
        return  # floats overflow to an error quickly; 0, 1 and -1 stay small; negative powers are floats
    if exponent > MAX_INT_BITS or (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
        raise DecodeError(f"integer result larger than {MAX_INT_BITS} bits")


def _format_size(template: str | bytes, args_size: int) -> int:
    """Upper bound of ``template % args``: widths and precisions can inflate a short template."""
    text = template if isinstance(template, str) else template.decode("latin-1")
    if "*" in text:
        raise DecodeError("'*' widths are not supported in a computed value")
    return len(text) + args_size + sum(int(digits) for digits in _FORMAT_NUMBER.findall(text))
