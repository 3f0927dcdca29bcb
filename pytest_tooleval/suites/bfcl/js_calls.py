"""Reading the first JavaScript call of an answer, as bfcl's tree-sitter based JavaScript decoder reads it (bfcl §3.3).

bfcl parses the answer as a JavaScript program with tree-sitter, rejects it if the tree holds an error node, and
reads the first top-level statement that is a call: its callee's text and, for each ``name=value`` argument, the
value's source text. We parse a subset of JavaScript expressions ourselves (literals, names, arrays, objects,
member access, calls, ``new``, arrow functions with an expression body, unary, binary, conditional and
assignment operators, statements separated by ``;`` or a line break) and read the same texts. Input outside the
subset is a syntax error for us; §3.3 lists what that leaves out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import DecodeError
from .tokens import TokenCursor, tokenize

__all__ = ["JsNode", "decode_js_calls", "parse_js_program"]


@dataclass
class JsNode:
    """A node of our JavaScript syntax tree: its tree-sitter kind, source span and children."""

    kind: str
    start: int
    end: int
    children: list[JsNode] = field(default_factory=list)


_TOKEN = re.compile(
    r"""
    (?P<space>[^\S\n]+|//[^\n]*)
  | (?P<newline>\n)
  | (?P<number>0[xX][0-9a-fA-F_]+n?|0[bB][01_]+n?|0[oO][0-7_]+n?
              |(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?n?)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<template>`(?:[^`\\$]|\\.|\$(?!\{))*`)
  | (?P<word>[^\W\d][\w$]*|\$[\w$]*)
  | (?P<op>\.\.\.|\?\?=|\?\?|\?\.(?!\d)|===|!==|\*\*=|>>>=|<<=|>>=|>>>|\*\*|=>|==|!=|<=|>=|&&=|\|\|=|&&|\|\|
          |\+\+|--|<<|>>|[-+*/%&|^]=|[(){}\[\];,.=<>!~?:+\-*/%&|^])
    """,
    re.VERBOSE | re.DOTALL,
)

_LITERALS = {"number": "number", "string": "string", "template": "template_string"}
_KEYWORD_VALUES = {"true": "true", "false": "false", "null": "null", "this": "this", "undefined": "undefined"}
_RESERVED = {
    "var", "let", "const", "function", "class", "if", "else", "for", "while", "do", "return", "switch", "case",
    "default", "try", "catch", "finally", "throw", "break", "continue", "import", "export", "in", "instanceof",
    "typeof", "void", "delete", "new", "yield", "await", "with", "debugger", "super", "extends",
}  # fmt: skip
#: Binary operators by precedence, loosest first.
_BINARY_LEVELS = [
    {"??"}, {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!=", "===", "!=="},
    {"<", ">", "<=", ">=", "instanceof", "in"}, {"<<", ">>", ">>>"}, {"+", "-"}, {"*", "/", "%"}, {"**"},
]  # fmt: skip
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="}


class _Parser(TokenCursor[JsNode]):
    """Our JavaScript grammar, one method per construct, over the shared token cursor."""

    def __init__(self, source: str) -> None:
        super().__init__(tokenize(source, _TOKEN, "JavaScript", track_newlines=True), JsNode, "JavaScript")

    @staticmethod
    def node(kind: str, children: list[JsNode]) -> JsNode:
        return JsNode(kind, children[0].start, children[-1].end, children)

    def program(self) -> JsNode:
        statements = []
        while self.peek().kind != "end":
            if self.at(";"):
                statements.append(self.node("empty_statement", [self.take()]))
                continue
            if self.at("{"):
                raise DecodeError("not JavaScript (for us): a block statement")
            expression = self.sequence()
            children = [expression]
            if self.at(";"):
                children.append(self.take())
            elif not self.peek().after_newline:
                # automatic semicolon insertion needs a line break (or the end) after the statement
                token = self.peek()
                raise DecodeError(f"not JavaScript: unexpected {token.text!r} at {token.start}")
            statements.append(self.node("expression_statement", children))
        return JsNode("program", 0, statements[-1].end if statements else 0, statements)

    def sequence(self) -> JsNode:
        first = self.expression()
        if not self.at(","):
            return first
        children = [first]
        while self.at(","):
            children.append(self.take())
            children.append(self.expression())
        return self.node("sequence_expression", children)

    def expression(self) -> JsNode:
        self.deeper()
        try:
            return self.assignment()
        finally:
            self.depth -= 1

    def assignment(self) -> JsNode:
        if self.peek().kind == "word" and self.at("=>", 1) and self.peek().text not in _RESERVED:
            parameter = self.take()
            parameter.kind = "identifier"
            return self.arrow_body([parameter])
        if self.at("(") and self.arrow_ahead():
            opening = self.take()
            parameters = [opening]
            while not self.at(")"):
                name = self.take()
                if name.kind not in ("word", "op") or self.tokens[self.index - 1].kind != "word":
                    raise DecodeError("not JavaScript (for us): arrow parameters other than names")
                name.kind = "identifier"
                parameters.append(name)
                if self.at(","):
                    parameters.append(self.take())
            parameters.append(self.take())
            return self.arrow_body([self.node("formal_parameters", parameters)])
        left = self.conditional()
        token = self.peek()
        if token.kind == "op" and token.text in _ASSIGNMENTS:
            if left.kind not in ("identifier", "member_expression", "subscript_expression"):
                raise DecodeError(f"not JavaScript (for us): cannot assign to a {left.kind}")
            operator = self.take()
            right = self.expression()
            kind = "assignment_expression" if operator.kind == "=" else "augmented_assignment_expression"
            return self.node(kind, [left, operator, right])
        return left

    def arrow_ahead(self) -> bool:
        """Whether the parenthesis at hand opens the parameters of an arrow function: ``(a, b) =>``."""
        offset = 1
        while self.peek(offset).kind == "word" or self.at(",", offset):
            offset += 1
        return self.at(")", offset) and self.at("=>", offset + 1)

    def arrow_body(self, parameters: list[JsNode]) -> JsNode:
        arrow = self.expect("=>")
        if self.at("{"):
            raise DecodeError("not JavaScript (for us): an arrow function with a block body")
        body = self.expression()
        return self.node("arrow_function", [*parameters, arrow, body])

    def conditional(self) -> JsNode:
        condition = self.binary(0)
        if not self.at("?"):
            return condition
        question = self.take()
        then = self.expression()
        colon = self.expect(":")
        return self.node("ternary_expression", [condition, question, then, colon, self.expression()])

    def binary(self, level: int) -> JsNode:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek().kind in ("op", "word") and self.peek().text in _BINARY_LEVELS[level]:
            operator = self.take()
            right = self.binary(level + 1)
            left = self.node("binary_expression", [left, operator, right])
        return left

    def unary(self) -> JsNode:
        token = self.peek()
        if (token.kind == "op" and token.text in ("-", "+", "!", "~")) or (
            token.kind == "word" and token.text in ("typeof", "void", "delete")
        ):
            operator = self.take()
            self.deeper()
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            return self.node("unary_expression", [operator, operand])
        return self.postfix(self.primary())

    def primary(self) -> JsNode:
        token = self.peek()
        if token.kind in _LITERALS:
            return self.take_as(_LITERALS[token.kind])
        if token.kind == "word":
            if token.text in _KEYWORD_VALUES:
                return self.take_as(_KEYWORD_VALUES[token.text])
            if token.text == "new":
                new = self.take()
                callee = self.postfix(self.primary(), calls=False)
                children = [new, callee]
                if self.at("("):
                    children.append(self.arguments())
                return self.node("new_expression", children)
            if token.text in _RESERVED:
                raise DecodeError(f"not JavaScript (for us): the keyword {token.text!r}")
            return self.take_as("identifier")
        if self.at("("):
            opening = self.take()
            inner = self.sequence()
            return self.node("parenthesized_expression", [opening, inner, self.expect(")")])
        if self.at("["):
            return self.array()
        if self.at("{"):
            return self.object()
        raise DecodeError(f"not JavaScript: unexpected {token.text or 'end of input'!r} at {token.start}")

    def array(self) -> JsNode:
        children = [self.expect("[")]
        while not self.at("]"):
            if self.at(","):
                children.append(self.take())  # a hole
                continue
            children.append(self.spread_or_expression())
            if not self.at(","):
                break
            children.append(self.take())
        children.append(self.expect("]"))
        return self.node("array", children)

    def spread_or_expression(self) -> JsNode:
        if self.at("..."):
            dots = self.take()
            return self.node("spread_element", [dots, self.expression()])
        return self.expression()

    def object(self) -> JsNode:
        children = [self.expect("{")]
        while not self.at("}"):
            if self.at("..."):
                children.append(self.spread_or_expression())
            else:
                key_token = self.peek()
                if key_token.kind not in ("word", "string", "number"):
                    raise DecodeError(f"not JavaScript (for us): an object key at {key_token.start}")
                key = self.take()
                if self.at(":"):
                    colon = self.take()
                    children.append(self.node("pair", [key, colon, self.expression()]))
                elif key_token.kind == "word" and key_token.text not in _RESERVED:
                    key.kind = "shorthand_property_identifier"
                    children.append(key)
                else:
                    raise DecodeError(f"not JavaScript (for us): an object member at {key_token.start}")
            if not self.at(","):
                break
            children.append(self.take())
        children.append(self.expect("}"))
        return self.node("object", children)

    def arguments(self) -> JsNode:
        children = [self.expect("(")]
        while not self.at(")"):
            children.append(self.spread_or_expression())
            if not self.at(","):
                break
            children.append(self.take())
        children.append(self.expect(")"))
        return self.node("arguments", children)

    def postfix(self, target: JsNode, *, calls: bool = True) -> JsNode:
        while True:
            if self.at(".") or self.at("?."):
                dot = self.take()
                name = self.peek()
                if name.kind != "word":
                    raise DecodeError(f"not JavaScript: expected a property name at {name.start}")
                prop = self.take()
                prop.kind = "property_identifier"
                target = self.node("member_expression", [target, dot, prop])
            elif self.at("["):
                opening = self.take()
                index = self.sequence()
                target = self.node("subscript_expression", [target, opening, index, self.expect("]")])
            elif calls and self.at("("):
                target = self.node("call_expression", [target, self.arguments()])
            elif calls and self.peek().kind == "template":
                target = self.node("call_expression", [target, self.take()])
            elif self.peek().kind == "op" and self.peek().text in ("++", "--") and not self.peek().after_newline:
                target = self.node("update_expression", [target, self.take()])
            else:
                return target


def parse_js_program(source: str) -> JsNode:
    """Our syntax tree of `source`; raises `DecodeError` where tree-sitter's tree would hold an error (§3.3)."""
    return _Parser(source).program()


def decode_js_calls(source: str) -> list[dict[str, dict[str | None, str]]] | None:
    """``[{callee: {argument: text}}]`` for the first top-level call statement, or None without one (§3.3)."""
    tree = parse_js_program(source)
    for statement in tree.children:
        for expression in statement.children:
            if expression.kind == "call_expression":
                return [_read_call(source, expression)]
    return None  # bfcl quirk: no call decodes to None (§3.3)


def _read_call(source: str, call: JsNode) -> dict[str, dict[str | None, str]]:
    callee, arguments_node = call.children
    arguments: dict[str | None, str] = {}
    for child in arguments_node.children:
        if child.kind == "assignment_expression":
            left, _, right = child.children
            key: str | None = source[left.start : left.end]
            value = source[right.start : right.end]
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]  # one pair of matching quotes is trimmed from the text (§3.3)
        elif child.kind in ("identifier", "true"):
            # bare names and `true` are positional values, under None (`false` is not: another quirk)
            key, value = None, source[child.start : child.end]
        else:
            continue
        if key in arguments:
            raise DecodeError(f"the argument {key!r} is given twice")
        arguments[key] = value
    return {source[callee.start : callee.end]: arguments}
