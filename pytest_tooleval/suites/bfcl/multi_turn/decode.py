"""One stored step of a multi-turn answer as the call strings bfcl executes (docs/bfcl-multi-turn.md#decoding-a-step).

`decode_fc` reads a function-calling step as bfcl's `convert_to_function_call` does, `decode_prompt` a text step as
its `default_decode_execute_prompting` does; both raise `Undecodable` where upstream raises, and give `[]` for an
empty step. Neither evaluates text: the prompting decoder parses with `ast` and computes the arithmetic
upstream hands to `eval` with a literal-only evaluator of its own, within size bounds. The quirk labels in the
comments (D1 to D11, D8-decoder) are those of that document's section, which says what each does and why it is kept.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from typing import Any

from .... import python_ast
from ....json_value import JSONValue

#: deepest nesting of values the prompting decoder follows (the tokenizer allows 200 brackets)
MAX_DEPTH = 200
#: largest int an arithmetic step may build: about 100,000 decimal digits
MAX_INT_BITS = 332_200
#: largest value an arithmetic step may build, in units (characters, elements counted recursively, int digits)
MAX_UNITS = 1_000_000
#: the units all the arithmetic of one step may build together
MAX_STEP_UNITS = 4 * MAX_UNITS

# What upstream's caller catches from a decoder; the ones that can arise here, from the builtins we call on
# decoded values (negation, hashing, arithmetic, repr of a huge int, deep recursion).
_UPSTREAM_FAILURES = (TypeError, ValueError, ArithmeticError, RecursionError, MemoryError)

_BINARY: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
# Any: literals of every type go in, and Python's own operator decides (TypeError when it does not apply)
_UNARY: dict[type[ast.unaryop], Callable[[Any], object]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
}
_SEQUENCES = (str, bytes, list, tuple)


class Undecodable(ValueError):
    """The step gives no call: upstream's decoder raises on it, and the whole step is dropped."""


def decode_fc(raw: JSONValue) -> list[str]:
    """The call strings of a function-calling step: `name(k=repr(v),...)` per call, no space after commas.

    Args:
        raw: the stored step, a list of `{name: arguments}` (or one such dict), each arguments value a JSON text
            (parsed with Python's `json`: NaN and Infinity accepted, the last duplicate key wins) or an object.
    """
    if type(raw) is dict:
        raw = [raw]
    if isinstance(raw, str) and raw == "":  # upstream iterates the characters: none, no call
        return []
    if not isinstance(raw, list):
        raise Undecodable(f"a function-calling step is a list of calls, not {type(raw).__name__}")
    calls = []
    for item in raw:
        if not isinstance(item, dict):
            raise Undecodable(f"a function call is a {{name: arguments}} object, not {type(item).__name__}")
        for name, arguments in item.items():
            parsed: object = arguments
            if type(arguments) is str:
                try:
                    parsed = json.loads(arguments)
                except (ValueError, RecursionError, MemoryError) as exc:
                    raise Undecodable(f"the arguments of {name!r} are not JSON: {exc}") from exc
            if not isinstance(parsed, dict):
                raise Undecodable(f"the arguments of {name!r} are not an object")
            try:
                # keys pasted raw, values as Python repr (bfcl-multi-turn.md#decoding-a-step, D6, D7, D11)
                calls.append(f"{name}({','.join(f'{key}={item!r}' for key, item in parsed.items())})")
            except (ValueError, RecursionError) as exc:
                raise Undecodable(f"the arguments of {name!r} have no repr: {exc}") from exc
    return calls


def decode_prompt(raw: JSONValue) -> list[str]:
    """The call strings of a text step: `name(k=v, ...)` per call, as upstream's prompting decoder gives them.

    Args:
        raw: the stored step, the model's text (a Python list of calls, brackets optional).
    """
    if not isinstance(raw, str):
        raise Undecodable(f"a prompting step is text, not {type(raw).__name__}")
    # trimmed as upstream does; the final strips can do nothing after the brackets (bfcl-multi-turn.md#decoding-a-step)
    text = raw.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    text = text.strip().strip("'")
    try:
        body = python_ast.parse(text, mode="eval").body  # parsing only: no code object is made
    except Exception as exc:  # SyntaxError, and Memory/RecursionError on deep nesting: all undecodable upstream
        raise Undecodable(f"not a Python expression: {exc}") from exc
    if isinstance(body, ast.Call):
        nodes = [body]
    elif isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        nodes = []
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise Undecodable("an element of the list is not a call")
            nodes.append(element)
    else:
        raise Undecodable("not a list of calls")
    budget = _Budget()
    try:
        decoded = [_call(node, 0, budget) for node in nodes]
        return [_render_call(name, arguments) for name, arguments in decoded]
    except Undecodable:
        raise
    except _UPSTREAM_FAILURES as exc:
        raise Undecodable(f"{type(exc).__name__}: {exc}") from exc


class _Budget:
    """The units the arithmetic of one step has built so far."""

    def __init__(self) -> None:
        self.spent = 0

    def charge(self, units: int) -> None:
        self.spent += units
        if self.spent > MAX_STEP_UNITS:
            raise Undecodable(f"the arithmetic of the step builds more than {MAX_STEP_UNITS} units")


def _call(node: ast.Call, depth: int, budget: _Budget) -> tuple[str, dict[str | None, object]]:
    """A call's name and keyword arguments (upstream's `resolve_ast_call`)."""
    parts = []
    function = node.func
    while isinstance(function, ast.Attribute):
        parts.append(function.attr)
        function = function.value
    if isinstance(function, ast.Name):  # any other base is dropped: `a[0].g()` is `g` (#decoding-a-step)
        parts.append(function.id)
    arguments: dict[str | None, object] = {}
    # positional arguments dropped (#decoding-a-step, D1); `**x` is a keyword named None (#decoding-a-step)
    for keyword in node.keywords:
        arguments[keyword.arg] = _value(keyword.value, depth + 1, budget)
    return ".".join(reversed(parts)), arguments


def _value(node: ast.expr, depth: int, budget: _Budget) -> object:
    """An argument's value (upstream's `resolve_ast_by_type`); a nested call with keywords is `{name: args}`."""
    if depth > MAX_DEPTH:
        raise Undecodable(f"values nested deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.operand, ast.Constant):
            raise Undecodable("an operator applied to something other than a constant")
        negated = _UNARY[ast.USub](node.operand.value)  # any operator negates (#decoding-a-step, D2)
        return negated
    if isinstance(node, ast.List):
        return [_value(element, depth + 1, budget) for element in node.elts]
    if isinstance(node, ast.Dict):
        mapping: dict[object, object] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise Undecodable("`**` in a dict")
            resolved = _value(key, depth + 1, budget)
            mapping[resolved] = _value(item, depth + 1, budget)
        return mapping
    if isinstance(node, ast.BinOp):
        # upstream evals the expression's text; we compute literal arithmetic only (#decoding-a-step, D3, D8-decoder)
        return _arithmetic(node, depth, budget)[0]
    if isinstance(node, ast.Name):
        return node.id  # a bare name is its own text (#decoding-a-step, D4)
    if isinstance(node, ast.Call):
        if not node.keywords:
            return ast.unparse(node)  # a call without keywords is its text (#decoding-a-step)
        name, arguments = _call(node, depth, budget)
        return {name: arguments}
    if isinstance(node, ast.Tuple):
        return tuple(_value(element, depth + 1, budget) for element in node.elts)  # stays a tuple (D5)
    if isinstance(node, ast.Subscript):
        # upstream's text of a subscript: its parts unparsed apart, `a[1, 2]` gives `a[(1, 2)]` (#decoding-a-step)
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise Undecodable(f"unsupported value: {type(node).__name__}")


def _arithmetic(node: ast.expr, depth: int, budget: _Budget) -> tuple[object, int]:
    """A literal-only expression's value and its size in units; anything that is not a literal is undecodable."""
    if depth > MAX_DEPTH:
        raise Undecodable(f"values nested deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant):
        constant: object = node.value
        if type(constant) is int and constant.bit_length() > 10_000:
            repr(constant)  # upstream unparses the expression first: past the int-to-text limit it fails there
        return constant, _units(constant)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elements = []
        units = 1
        for element in node.elts:
            value, size = _arithmetic(element, depth + 1, budget)
            elements.append(value)
            units += size
        if isinstance(node, ast.List):
            return elements, units
        return (tuple(elements) if isinstance(node, ast.Tuple) else set(elements)), units
    if isinstance(node, ast.Dict):
        mapping: dict[object, object] = {}
        units = 1
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise Undecodable("`**` in a dict")
            key_value, key_size = _arithmetic(key, depth + 1, budget)
            item_value, item_size = _arithmetic(item, depth + 1, budget)
            mapping[key_value] = item_value
            units += key_size + item_size
        return mapping, units
    if isinstance(node, ast.UnaryOp):
        operand, _ = _arithmetic(node.operand, depth + 1, budget)
        result = _unary(node.op, operand)
        return result, _units(result)
    if isinstance(node, ast.BinOp):
        left, left_units = _arithmetic(node.left, depth + 1, budget)
        right, right_units = _arithmetic(node.right, depth + 1, budget)
        units = _bound(node.op, left, left_units, right, right_units)
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
            raise Undecodable(f"an int of more than {MAX_INT_BITS} bits")
        if not isinstance(result, (list, tuple, set, dict)):
            units = _units(result)
        budget.charge(units)
        return result, units
    raise Undecodable(f"arithmetic on something other than literals: {type(node).__name__} (D8-decoder)")


def _unary(op: ast.unaryop, operand: object) -> object:
    """Python's unary operators on a literal (inside arithmetic upstream evaluates, `+3` stays 3)."""
    if isinstance(op, ast.Not):
        return not operand
    if isinstance(op, ast.Invert) and type(operand) is bool:
        return ~int(operand)  # the same value, without the DeprecationWarning of `~True` on newer Pythons
    return _UNARY[type(op)](operand)


def _bound(op: ast.operator, left: object, left_units: int, right: object, right_units: int) -> int:
    """The units a binary operation would build, refused before it is computed when past the bounds."""
    units = left_units + right_units
    if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)):
        raise Undecodable("%-formatting in arithmetic (D8-decoder)")
    if isinstance(op, ast.Mult):
        if isinstance(left, _SEQUENCES) and isinstance(right, int):
            units = 1 + max(right, 0) * left_units
        elif isinstance(right, _SEQUENCES) and isinstance(left, int):
            units = 1 + max(left, 0) * right_units
        elif isinstance(left, int) and isinstance(right, int):
            _check_bits(left.bit_length() + right.bit_length())
    elif isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        if abs(left) > 1:
            _check_bits(right * (abs(left).bit_length() - 1))
    elif isinstance(op, ast.LShift) and isinstance(left, int) and isinstance(right, int) and left and right > 0:
        _check_bits(left.bit_length() + right)
    if units > MAX_UNITS:
        raise Undecodable(f"a value of more than {MAX_UNITS} units")
    return units


def _check_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        raise Undecodable(f"an int of more than {MAX_INT_BITS} bits")


def _units(value: object) -> int:
    """A scalar's size: characters of a string, about the decimal digits of an int, 1 otherwise."""
    if isinstance(value, (str, bytes)):
        return len(value) + 1
    if isinstance(value, int):
        return value.bit_length() // 3 + 1
    return 1


def _render_call(name: str, arguments: dict[str | None, object]) -> str:
    """`name(k1=v1, k2=v2)` (upstream's `decoded_output_to_execution_list`)."""
    return f"{name}({', '.join(f'{key}={_render(value)}' for key, value in arguments.items())})"


def _render(value: object) -> str:
    """A value's text (upstream's `parse_nested_value`)."""
    if isinstance(value, dict):
        if all(isinstance(item, dict) for item in value.values()):
            # a dict of dicts is a nested call, on its first key only; `{}` has none (#decoding-a-step, D9)
            if not value:
                raise Undecodable("an empty dict is rendered as a call with no name")
            name = next(iter(value))
            arguments = value[name]
            return f"{name}({', '.join(f'{key}={_render(item)}' for key, item in arguments.items())})"
        # keys in single quotes, unescaped (#decoding-a-step)
        return "{" + ", ".join(f"'{key}': {_render(item)}" for key, item in value.items()) + "}"
    return repr(value)
