"""Turning one model answer into calls, the way bfcl-eval decodes it (bfcl §3).

A decoded answer is a list of ``{function_name: {parameter: value}}`` dicts. Three decoders:

- `decode_prompting`: a text answer of a prompting model (§3.1): a few characters are trimmed, brackets added,
  and for Python the text is parsed with ``ast.parse`` and the tree is read; for Java and JavaScript the
  call decoders of `java_calls` and `js_calls` take over (§3.2, §3.3). Nothing is ever executed: where bfcl
  ``eval``s a binary operation, the bounded evaluator of the ACEBench suite computes the value.
- `decode_function_calls`: the answer of a function-calling model, recorded as ``[{name: arguments_json}]`` (§3.4).

Every decoder raises `DecodeError` exactly where bfcl's decoder raises (any exception there is a decode failure).
The result may deliberately not be in call format (a Java answer without a call decodes to ``{}``, a JavaScript
one to None): the checker tests the format separately, as bfcl does (§4.8).
"""

from __future__ import annotations

import ast
import json
import warnings
from typing import Literal

from ... import python_ast, safe_eval
from . import java_calls, js_calls
from .errors import DecodeError

__all__ = [
    "MAX_ANSWER_CHARS",
    "DecodeError",
    "Language",
    "decode_function_calls",
    "decode_prompting",
    "decode_python_calls",
]

Language = Literal["python", "java", "javascript"]

#: Longest answer we try to decode. bfcl has no bound; a real answer is a few thousand characters, and the parser's
#: memory grows with the text, so a longer one is reported as a decode failure.
MAX_ANSWER_CHARS = 1_000_000

#: What a binary-operator argument may compute (bfcl evaluates it with ``eval``; §3.1): every value bounded.
ARITHMETIC_LIMITS = safe_eval.Limits(int_bits=100_000, size=1_000_000, depth=200, work=10_000_000)


def bracketed(text: object) -> str:
    """A prompting answer as bfcl's decoders first make it (§3.1): trimmed of backticks, newlines and spaces (not
    tabs or carriage returns), then wrapped in `[` `]` where it does not begin or end with one.

    Raises:
        DecodeError: the answer is no text (bfcl calls str methods on it), or longer than MAX_ANSWER_CHARS.
    """
    if not isinstance(text, str):
        raise DecodeError(f"the answer is a {type(text).__name__}, not text")
    if len(text) > MAX_ANSWER_CHARS:
        raise DecodeError(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text


def decode_prompting(text: object, language: Language) -> object:
    """Decode a prompting model's text answer as bfcl's ``default_decode_ast_prompting`` does (§3.1).

    Raises:
        DecodeError: bfcl's decoder raises on this answer (a decode failure in its verdict).
    """
    text = bracketed(text)
    try:
        if language == "java":
            # the Java and JavaScript decoders get the text between the first and the last character (§3.2)
            return java_calls.decode_java_calls(text[1:-1])
        if language == "javascript":
            return js_calls.decode_js_calls(text[1:-1])
        return decode_python_calls(text)
    except DecodeError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise DecodeError(f"the answer is too deeply nested or too large ({type(exc).__name__})") from None
    except Exception as exc:  # bfcl counts any exception of its decoder as a decode failure (§3.1)
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def decode_python_calls(text: str) -> list[dict[str, dict[str | None, object]]]:
    """The calls of a bracketed Python list of calls, read from its syntax tree (§3.1)."""
    # bfcl also trims single quotes here; the text starts with "[" and ends with "]", so that never changes it
    source = text.strip().strip("'")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in string literals only warn; bfcl reads them anyway
            tree = python_ast.parse(source, mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise DecodeError(f"not Python syntax: {exc}") from None
    body = tree.body
    if isinstance(body, ast.Call):
        return [_read_call(body)]
    elements = getattr(body, "elts", None)  # a list, tuple or set display (§3.1)
    if elements is None:
        raise DecodeError(f"the answer is a {type(body).__name__} expression, not a list of calls")
    calls = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise DecodeError(f"an element of the list is a {type(element).__name__}, not a call")
        calls.append(_read_call(element))
    return calls


def _read_call(call: ast.Call) -> dict[str, dict[str | None, object]]:
    """``{name: {keyword: value}}``; positional arguments are dropped, ``**x`` lands under None (§3.1)."""
    name = safe_eval.dotted_name(call.func)  # a base that is no plain name adds nothing to the name
    arguments: dict[str | None, object] = {}
    for keyword in call.keywords:
        arguments[keyword.arg] = _read_value(keyword.value)
    return {name: arguments}


def _read_value(node: ast.expr) -> object:
    """The value of one argument expression, by bfcl's rules for each kind of node (§3.1)."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return _negated_operand(node)
    if isinstance(node, ast.List):
        return [_read_value(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[object, object] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise DecodeError("a **mapping inside a dict display is not supported")
            key = _read_value(key_node)
            try:
                hash(key)
            except TypeError:
                raise DecodeError(f"a dict key of type {type(key).__name__} is unhashable") from None
            result[key] = _read_value(value_node)
        return result
    if isinstance(node, ast.BinOp):
        return _evaluate_arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        # a nested call without keywords stays text; with keywords it becomes a nested {name: arguments} (§3.1)
        return ast.unparse(node) if not node.keywords else _read_call(node)
    if isinstance(node, ast.Tuple):
        return tuple(_read_value(element) for element in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    # attributes (a.b), f-strings, lambdas, comparisons, sets, comprehensions ... (lambdas included, §3.1)
    raise DecodeError(f"unsupported value of kind {type(node).__name__}")


_NEGATABLE = (bool, int, float, complex)


def _negated_operand(node: ast.UnaryOp) -> object:
    # bfcl quirk: every unary operator (+, -, ~, not) negates the operand's constant (§3.1)
    operand = node.operand
    if not isinstance(operand, ast.Constant) or not isinstance(operand.value, _NEGATABLE):
        raise DecodeError(f"a unary operator on a {type(operand).__name__} is not supported")
    return -operand.value


def _evaluate_arithmetic(node: ast.BinOp) -> object:
    """The value bfcl's ``eval`` gives a binary operation, computed without executing anything (§3.1)."""
    try:
        return safe_eval.evaluate(node, ARITHMETIC_LIMITS)
    except safe_eval.UnsupportedExpression as exc:
        raise DecodeError(f"cannot evaluate the expression: {exc}") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, NameError, MemoryError, RecursionError) as exc:
        raise DecodeError(f"the expression fails: {type(exc).__name__}: {exc}") from None


def decode_function_calls(output: object) -> list[dict[object, object]]:
    """Decode a function-calling answer, ``[{name: arguments_json}, ...]``, as bfcl's FC handlers do (§3.4).

    Only the first key of each call is read; its arguments are parsed as JSON and may be any JSON value.
    """
    try:
        items = iter(output)  # type: ignore[call-overload]
    except TypeError:
        raise DecodeError(f"the answer is a {type(output).__name__}, not a list of calls") from None
    calls: list[dict[object, object]] = []
    for call in items:
        if not isinstance(call, dict):
            raise DecodeError(f"a call is a {type(call).__name__}, not a {{name: arguments}} object")
        if not call:
            raise DecodeError("a call names no function")
        name = next(iter(call))
        arguments = call[name]
        if not isinstance(arguments, (str, bytes, bytearray)):
            raise DecodeError(f"the arguments of {name!r} are a {type(arguments).__name__}, not JSON text")
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"the arguments of {name!r} are not JSON: {exc}") from None
        calls.append({name: parsed})
    return calls
