"""Decoding a model's text answer into calls, the way ACEBench's official evaluator does.

The output contract is one Python expression: a list of calls, ``[Api(key='value', ...), ...]``.
`decode_official` reproduces upstream's ``decode_ast`` path bit for bit, quirks included
(acebench-scoring §3.1); `decode_fixed` is the same contract with two upstream bugs fixed, for the
``fixed`` scorer. Neither executes anything: values are read off the AST, and the binary-operator
values upstream ``eval``s are folded by `fold_constant`, the bounded evaluator under this decoder's limits.

A decoded call is ``{name: {keyword: value}}``; values are plain Python (str, int, float, bool, None,
list, tuple, dict, ...). ``**kw`` arguments are stored under the key ``None``, as upstream does.
"""

from __future__ import annotations

import ast
import re
import warnings

from ... import python_ast, safe_eval

__all__ = [
    "LIMITS",
    "MAX_AST_DEPTH",
    "MAX_INT_BITS",
    "MAX_SIZE",
    "MAX_SOURCE_CHARS",
    "CallArguments",
    "DecodeError",
    "DecodedCall",
    "ast_depth",
    "decode_fixed",
    "decode_official",
    "fold_constant",
    "outermost_brackets",
    "strip_whitespace",
]

#: Longest answer (after whitespace handling) we try to parse. A real answer is a few thousand
#: characters (upstream asks for at most 1,200 tokens); parsing is linear but memory-hungry.
MAX_SOURCE_CHARS = 100_000
#: Largest string/bytes length or container size (nested elements counted) a folded value may have.
MAX_SIZE = 100_000
#: Largest integer, in bits (about 3,000 decimal digits: safely below Python's 4,300-digit str() limit).
MAX_INT_BITS = 10_000
#: Deepest AST accepted anywhere in a decoded output; keeps every recursive walk far from the stack limit.
MAX_AST_DEPTH = 200
#: What a folding may compute: all of upstream's ``eval`` on literals (comparisons, subscripts, unpacking,
#: ``%`` formatting), every value bounded; the work budget bounds the time a single argument can take.
LIMITS = safe_eval.Limits(int_bits=MAX_INT_BITS, size=MAX_SIZE, depth=MAX_AST_DEPTH, work=5_000_000)

#: One call's arguments, keyword -> value; a ``**kw`` argument lands under the key None, as upstream's does.
CallArguments = dict[str | None, object]
#: One decoded call, ``{name: {keyword: value}}``.
DecodedCall = dict[str, CallArguments]


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


def fold_constant(node: ast.expr) -> object:
    """The value ``eval(ast.unparse(node))`` would give for a literal-only expression, within `LIMITS`.

    Raises:
        DecodeError: the expression uses anything but literals and operators, fails (``1/0``), or a value
            would exceed `LIMITS`; upstream's eval raises on the same failures and reports a format error.
    """
    try:
        return safe_eval.evaluate(node, LIMITS)
    except safe_eval.UnsupportedExpression as exc:
        raise DecodeError(str(exc)) from None
    except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, MemoryError, RecursionError) as exc:
        raise DecodeError(f"cannot evaluate expression: {type(exc).__name__}: {exc}") from None


# Whitespace that str.split() knows but Python's tokenizer rejects outside string literals.
_EXOTIC_SPACE = re.compile(r"[^\S \t\n\r\f]")


def strip_whitespace(text: str) -> str:
    """Delete every whitespace character, inside string literals too, as upstream does first."""
    return "".join(text.split())


def decode_official(text: str, decoding: str = "delete_whitespace") -> list[DecodedCall]:
    """Decode `text` exactly like the official evaluator.

    Args:
        text: the model's raw answer.
        decoding: what the evaluator does to the answer first (revisions.Decoding): "delete_whitespace" (every
            revision's multi-turn categories, e6db74b's single-turn ones) or "outermost_brackets" (56dd66c's
            single-turn ones).

    Returns:
        One ``{name: {keyword: value}}`` dict per call, in output order.

    Raises:
        DecodeError: whatever upstream reports as ``wrong_output_format``.
    """
    if decoding == "outermost_brackets":
        # ACEBench 56dd66c quirk: the first outermost [...] is decoded as written; brackets inside strings count
        # too (acebench-revisions §2)
        region = outermost_brackets(text)
        if region is None:
            raise DecodeError("no [...] in the answer")
        return _decode(region, fixed=False)
    # ACEBench quirk: all whitespace is deleted before parsing, inside strings too (acebench-scoring §3.1)
    return _decode(strip_whitespace(text), fixed=False)


_BRACKET = re.compile(r"[\[\]]")
_BRACKET_OR_QUOTE = re.compile(r"""[\[\]'"\\]""")


def outermost_brackets(text: str, *, skip_strings: bool = False) -> str | None:
    """The first balanced ``[...]`` of `text` that no other encloses, or None.

    Brackets are counted as 56dd66c's evaluator counts them (acebench-revisions §2): every ``[`` and ``]``, inside
    string literals too, and a ``]`` before any ``[`` takes the count below zero, so a later ``[`` cannot start a
    region until the count is back at zero. `skip_strings` (the fixed scorer) passes over the brackets inside
    quoted strings instead.
    """
    depth, start, quote = 0, -1, ""
    marks = _BRACKET_OR_QUOTE if skip_strings else _BRACKET
    escaped_at = -2
    for match in marks.finditer(text):
        mark, at = match.group(), match.start()
        if quote:
            if mark == "\\" and escaped_at != at - 1:
                escaped_at = at
            elif mark == quote and escaped_at != at - 1:
                quote = ""
            continue
        if mark in "'\"":
            quote = mark
        elif mark == "[":
            if depth == 0:
                start = at
            depth += 1
        elif mark == "]":
            depth -= 1
            if depth == 0 and start >= 0:
                return text[start:at + 1]
    return None


def decode_fixed(text: str, decoding: str = "delete_whitespace") -> list[DecodedCall]:
    """Decode `text` for the fixed scorer: whitespace is kept and unary operators mean what they say.

    The contract is otherwise the official one (same accepted shapes, same value rules, same errors).
    Whitespace Python does not accept between tokens (a no-break space, say) is read as a space, since
    upstream's whitespace deletion makes it harmless there too. Under "outermost_brackets" (56dd66c's single-turn
    contract) the first outermost [...] is decoded, its brackets counted outside strings only.
    """
    source = text.strip()
    if decoding == "outermost_brackets":
        region = outermost_brackets(source, skip_strings=True)
        if region is None:
            raise DecodeError("no [...] in the answer")
        source = region
    try:
        return _decode(source, fixed=True)
    except DecodeError:
        spaced = _EXOTIC_SPACE.sub(" ", source)
        if spaced == source:
            raise
        return _decode(spaced, fixed=True)


# --- parsing --------------------------------------------------------------------------------------


def _parse(source: str) -> ast.expr:
    if len(source) > MAX_SOURCE_CHARS:
        raise DecodeError(f"output longer than {MAX_SOURCE_CHARS} characters")
    try:
        with warnings.catch_warnings():
            # Invalid escapes and the like only warn upstream; under `-W error` they would raise here.
            warnings.simplefilter("ignore")
            tree = python_ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
        raise DecodeError(f"not a Python expression: {type(exc).__name__}: {exc}") from None
    if ast_depth(tree) > MAX_AST_DEPTH:
        raise DecodeError("output nested too deeply")
    return tree.body


def _decode(source: str, *, fixed: bool) -> list[DecodedCall]:
    body = _parse(source)
    # Upstream iterates `body.elts`: a list, tuple or set display all work, nothing else does (acebench-scoring §3.1).
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
    calls: list[DecodedCall] = []
    for element in body.elts:
        if not isinstance(element, ast.Call):
            raise DecodeError(f"list element is not a call: {type(element).__name__}")
        calls.append(_call(element, fixed=fixed))
    return calls


def _call(node: ast.Call, *, fixed: bool) -> DecodedCall:
    # ACEBench quirk: positional arguments are dropped unread; `**kw` lands under the key None (§3.1)
    arguments: CallArguments = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _value(keyword.value, fixed=fixed)  # a repeated keyword keeps the last value
    return {safe_eval.dotted_name(node.func): arguments}  # a non-name base adds nothing (§3.1)


def _value(node: ast.expr, *, fixed: bool) -> object:
    """One argument value, by upstream's ``resolve_ast_by_type`` rules."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return _unary(node, fixed=fixed)
    if isinstance(node, ast.List):
        return [_value(item, fixed=fixed) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[object, object] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # `{**x}` has no key node; upstream fails on it
                raise DecodeError("dict unpacking is not supported")
            resolved_key = _value(key, fixed=fixed)
            try:
                result[resolved_key] = _value(value, fixed=fixed)
            except TypeError:
                raise DecodeError("unhashable dict key") from None
        return result
    if isinstance(node, ast.BinOp):
        # ACEBench quirk: upstream eval()s binary operations; we fold literals instead (§3.1, §9.B)
        return fold_constant(node)
    if isinstance(node, ast.Name):
        # ACEBench quirk: a bare name becomes its identifier, so city=Paris gives "Paris" (§3.1)
        return node.id
    if isinstance(node, ast.Call):
        return _call(node, fixed=fixed)
    if isinstance(node, ast.Tuple):
        return tuple(_value(item, fixed=fixed) for item in node.elts)
    if isinstance(node, ast.Subscript):
        # ACEBench quirk: a subscript is kept as its source text, e.g. "x[0]" (§3.1)
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    # Lambda, set, f-string, attribute, comparison, bool-op, if-expression, comprehension, ...
    raise DecodeError(f"unsupported value: {type(node).__name__}")


def _unary(node: ast.UnaryOp, *, fixed: bool) -> object:
    operand = node.operand
    if not isinstance(operand, ast.Constant):
        raise DecodeError("a unary operator needs a literal operand")
    if fixed:
        return fold_constant(node)  # Python semantics: +2 is 2, ~5 is -6, not True is False
    value = operand.value
    # ACEBench quirk: every unary operator negates, so +2 gives -2, ~5 and not(5) give -5 (§3.1); the numbers
    # (bool among them) are the constants `-` takes: a string or None fails at run time, as upstream's does
    if isinstance(value, (int, float, complex)):
        return -value
    raise DecodeError(f"cannot negate {type(value).__name__}")
