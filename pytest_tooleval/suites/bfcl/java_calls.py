"""Reading the first Java method call of an answer, as bfcl's tree-sitter based Java decoder reads it (bfcl §3.2).

bfcl parses the answer as a Java program with tree-sitter and rejects it if the syntax tree holds an error node;
then it takes the first method invocation of the tree and keeps each argument's source text. We parse a subset
of Java ourselves (expression statements over literals, names, field accesses, calls, ``new``, array
initialisers, unary and binary operators, class literals, method references, parentheses) into a small tree
with the same node kinds, and rebuild the same texts. Input outside the subset is reported as a syntax error;
§3.2 lists what that subset leaves out and the one tree-sitter recovery rule we reproduce.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import DecodeError
from .tokens import TokenCursor, tokenize

__all__ = ["JavaNode", "decode_java_calls", "parse_java_program"]


@dataclass
class JavaNode:
    """A node of our Java syntax tree: its tree-sitter kind, source span and children (leaves are tokens)."""

    kind: str
    start: int
    end: int
    children: list[JavaNode] = field(default_factory=list)
    fields: dict[str, JavaNode] = field(default_factory=dict)


# --- tokens -----------------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<float>(?:\d[\d_]*\.(?:\d[\d_]*)?(?:[eE][+-]?\d+)?[fFdD]?
              |\.\d[\d_]*(?:[eE][+-]?\d+)?[fFdD]?
              |\d[\d_]*[eE][+-]?\d+[fFdD]?
              |\d[\d_]*[fFdD]))
  | (?P<hex>0[xX][0-9a-fA-F_]+[lL]?)
  | (?P<binary>0[bB][01_]+[lL]?)
  | (?P<int>\d[\d_]*[lL]?)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)+')
  | (?P<word>[^\W\d][\w$]*|\$[\w$]*)
  | (?P<op>::|->|\+\+|--|&&|\|\||[=!<>]=|<<=|>>>=|>>=|[-+*/%&|^]=|<<|[(){}\[\];,.@=<>!~?:+\-*/&|^%])
    """,
    re.VERBOSE | re.DOTALL,
)

_LITERAL_KINDS = {
    "float": "decimal_floating_point_literal",
    "hex": "hex_integer_literal",
    "binary": "binary_integer_literal",
    "int": "decimal_integer_literal",
    "string": "string_literal",
    "char": "character_literal",
}
_KEYWORD_LITERALS = {"true": "true", "false": "false", "null": "null_literal", "this": "this"}
_RESERVED = {
    "new", "class", "super", "int", "long", "short", "byte", "char", "float", "double", "boolean", "void",
    "if", "else", "for", "while", "do", "return", "switch", "case", "default", "try", "catch", "finally",
    "throw", "throws", "import", "package", "public", "private", "protected", "static", "final", "abstract",
    "instanceof", "interface", "enum", "extends", "implements", "var", "break", "continue", "assert",
}  # fmt: skip
_PRIMITIVES = {"int", "long", "short", "byte", "char", "float", "double", "boolean", "void"}


# --- parser -----------------------------------------------------------------------------------------------------

#: Binary operators by precedence, loosest first.
_BINARY_LEVELS = [
    {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"},
    {"*", "/", "%"},
]  # fmt: skip
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="}


class _Parser(TokenCursor[JavaNode]):
    """Our Java grammar, one method per construct, over the shared token cursor."""

    def __init__(self, source: str) -> None:
        super().__init__(tokenize(source, _TOKEN, "Java"), JavaNode, "Java")
        self.source = source

    def node(self, kind: str, children: list[JavaNode], **fields: JavaNode) -> JavaNode:
        return JavaNode(kind, children[0].start, children[-1].end, children, fields)

    # program
    def program(self) -> JavaNode:
        statements = []
        missing_semicolon = False
        while self.peek().kind != "end":
            if missing_semicolon:
                raise DecodeError("not Java: two statements without a semicolon between them")
            expression = self.expression()
            if self.at(";"):
                statements.append(self.node("expression_statement", [expression, self.take()]))
            else:
                statements.append(self.node("expression_statement", [expression]))
                missing_semicolon = True
        if missing_semicolon and len(statements) == 1:
            # tree-sitter recovers a missing final ";" by inserting it, unless wrapping the statement in an
            # error node is cheaper: the short-statement rule of bfcl §3.2
            statement = statements[0]
            rows = self.source.count("\n", statement.start, statement.end)
            if (statement.end - statement.start) + 30 * rows <= 10:
                raise DecodeError("not Java: a statement this short without ';' is an error for tree-sitter")
        end = statements[-1].end if statements else 0
        return JavaNode("program", 0, end, statements)

    # expressions
    def expression(self) -> JavaNode:
        self.deeper()
        try:
            return self.assignment()
        finally:
            self.depth -= 1

    def assignment(self) -> JavaNode:
        if self.peek().kind == "word" and self.at("->", 1):
            parameter = self.identifier()
            arrow = self.take()
            body = self.expression()
            return self.node("lambda_expression", [parameter, arrow, body])
        left = self.ternary()
        token = self.peek()
        if token.kind == "op" and token.text in _ASSIGNMENTS:
            if left.kind not in ("identifier", "field_access", "array_access"):
                raise DecodeError(f"not Java: cannot assign to a {left.kind}")
            operator = self.take()
            right = self.expression()
            return self.node("assignment_expression", [left, operator, right], left=left, right=right)
        return left

    def ternary(self) -> JavaNode:
        condition = self.binary(0)
        if not self.at("?"):
            return condition
        question = self.take()
        then = self.expression()
        colon = self.expect(":")
        otherwise = self.expression()
        return self.node("ternary_expression", [condition, question, then, colon, otherwise])

    def binary(self, level: int) -> JavaNode:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek().kind == "op" and self.peek().text in _BINARY_LEVELS[level]:
            operator = self.take()
            right = self.binary(level + 1)
            left = self.node("binary_expression", [left, operator, right], left=left, right=right)
        return left

    def unary(self) -> JavaNode:
        token = self.peek()
        if token.kind == "op" and token.text in ("-", "+", "!", "~"):
            operator = self.take()
            self.deeper()
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            return self.node("unary_expression", [operator, operand], operand=operand)
        return self.postfix(self.primary())

    def primary(self) -> JavaNode:
        token = self.peek()
        if token.kind in _LITERAL_KINDS:
            return self.take_as(_LITERAL_KINDS[token.kind])
        if token.kind == "word":
            if token.text in _KEYWORD_LITERALS:
                return self.take_as(_KEYWORD_LITERALS[token.text])
            if token.text == "new":
                return self.creation()
            if token.text in _PRIMITIVES and self.at(".", 1) and self.at("class", 2):
                primitive = self.take_as("integral_type")
                return self.node("class_literal", [primitive, self.take(), self.take()])
            if token.text in _RESERVED:
                raise DecodeError(f"not Java: unexpected keyword {token.text!r}")
            return self.identifier()
        if self.at("(") and self.cast_ahead():
            opening = self.take()
            cast_type = self.type_name()
            closing = self.expect(")")
            operand = self.unary()
            return self.node("cast_expression", [opening, cast_type, closing, operand], type=cast_type, value=operand)
        if self.at("("):
            opening = self.take()
            inner = self.expression()
            return self.node("parenthesized_expression", [opening, inner, self.expect(")")])
        raise DecodeError(f"not Java: unexpected {token.text or 'end of input'!r} at {token.start}")

    def cast_ahead(self) -> bool:
        """Whether the parenthesis at hand opens a cast: ``(int) x``, ``(String) name``, ``(Outer.Inner) x``."""
        first = self.peek(1)
        if first.kind != "word":
            return False
        if first.text in _PRIMITIVES:
            return self.at(")", 2)
        offset = 2
        while self.at(".", offset) and self.peek(offset + 1).kind == "word":
            offset += 2
        if not self.at(")", offset):
            return False
        after = self.peek(offset + 1)
        # a name in parentheses followed by an operand (not an operator) is a cast
        return after.kind in _LITERAL_KINDS or (after.kind == "word" and after.text not in ("instanceof",)) or (
            after.kind == "op" and after.text in ("(", "!", "~")
        )

    def identifier(self) -> JavaNode:
        token = self.peek()
        if token.kind != "word" or token.text in _RESERVED or token.text in _KEYWORD_LITERALS:
            raise DecodeError(f"not Java: expected a name at {token.start}")
        return self.take_as("identifier")

    def postfix(self, target: JavaNode) -> JavaNode:
        while True:
            if self.at("(") and target.kind in ("identifier", "field_access"):
                arguments = self.arguments()
                if target.kind == "identifier":
                    target = self.node("method_invocation", [target, arguments], name=target, arguments=arguments)
                else:
                    receiver, dot, name = target.children
                    target = self.node(
                        "method_invocation", [receiver, dot, name, arguments],
                        object=receiver, name=name, arguments=arguments,
                    )  # fmt: skip
            elif self.at("."):
                dot = self.take()
                if self.at("class"):
                    target = self.node("class_literal", [target, dot, self.take()])
                else:
                    name = self.identifier()
                    target = self.node("field_access", [target, dot, name], object=target, field=name)
            elif self.at("::"):
                colons = self.take()
                name = self.take() if self.at("new") else self.identifier()
                target = self.node("method_reference", [target, colons, name])
            elif self.at("["):
                opening = self.take()
                index = self.expression()
                target = self.node("array_access", [target, opening, index, self.expect("]")], array=target)
            elif self.peek().kind == "op" and self.peek().text in ("++", "--"):
                target = self.node("update_expression", [target, self.take()])
            else:
                return target

    def arguments(self) -> JavaNode:
        children = [self.expect("(")]
        if not self.at(")"):
            children.append(self.expression())
            while self.at(","):
                children.append(self.take())
                children.append(self.expression())
        children.append(self.expect(")"))
        return self.node("argument_list", children)

    def type_name(self) -> JavaNode:
        token = self.peek()
        if token.kind == "word" and token.text in _PRIMITIVES:
            named = self.take_as("integral_type")
        else:
            named = self.identifier()
            named.kind = "type_identifier"
            while self.at(".") and self.peek(1).kind == "word":
                dot = self.take()
                part = self.identifier()
                part.kind = "type_identifier"
                named = self.node("scoped_type_identifier", [named, dot, part])
        if self.at("<"):
            children = [self.take()]
            if not self.at(">"):
                children.append(self.type_name())
                while self.at(","):
                    children.append(self.take())
                    children.append(self.type_name())
            children.append(self.expect(">"))
            named = self.node("generic_type", [named, self.node("type_arguments", children)])
        return named

    def creation(self) -> JavaNode:
        new = self.take()
        created = self.type_name()
        if self.at("["):
            dimensions = []
            while self.at("["):
                opening = self.take()
                dimensions.append(self.node("dimensions", [opening, self.expect("]")]))
            if not self.at("{"):
                raise DecodeError("not Java: an array creation needs an initialiser here")
            value = self.array_initializer()
            return self.node("array_creation_expression", [new, created, *dimensions, value], type=created, value=value)
        arguments = self.arguments()
        children = [new, created, arguments]
        if self.at("{"):
            children.append(self.class_body())
        return self.node("object_creation_expression", children, type=created, arguments=arguments)

    def array_initializer(self) -> JavaNode:
        children = [self.expect("{")]
        while not self.at("}"):
            children.append(self.array_initializer() if self.at("{") else self.expression())
            if not self.at(","):
                break
            children.append(self.take())
        children.append(self.expect("}"))
        return self.node("array_initializer", children)

    def class_body(self) -> JavaNode:
        # only instance initialiser blocks of expression statements: new HashMap<>() {{ put("k", v); }}
        children = [self.expect("{")]
        while self.at("{"):
            block = [self.take()]
            while not self.at("}"):
                expression = self.expression()
                block.append(self.node("expression_statement", [expression, self.expect(";")]))
            block.append(self.take())
            children.append(self.node("block", block))
        children.append(self.expect("}"))
        return self.node("class_body", children)


def parse_java_program(source: str) -> JavaNode:
    """Our syntax tree of `source`; raises `DecodeError` where tree-sitter's tree would hold an error (§3.2)."""
    return _Parser(source).program()


# --- bfcl's reading of the tree ---------------------------------------------------------------------------------


def decode_java_calls(source: str) -> list[dict[str, dict[str | None, str]]] | dict[str, str]:
    """``[{name: {argument: text}}]`` for the first method call of `source`, or ``{}`` without one (§3.2)."""
    tree = parse_java_program(source)
    call = _first_call(tree)
    if call is None:
        return {}  # bfcl quirk: no call decodes to an empty dict, not an empty list (§3.2)
    name = _text(source, call.fields["name"])
    receiver = call.fields.get("object")
    if receiver is not None:
        name = f"{_text(source, receiver)}.{name}"
    arguments: dict[str | None, str] = {}
    for child in call.fields["arguments"].children:
        if child.kind == "assignment_expression":
            key: str | None = _text(source, child.children[0])
            value = _argument_text(source, child.children[2], nested=False)
        elif child.kind in ("identifier", "class_literal"):
            key, value = None, _argument_text(source, child, nested=False)  # positional names land under None
        else:
            continue  # other positional arguments are dropped
        if key in arguments:
            raise DecodeError(f"the argument {key!r} is given twice")
        arguments[key] = value
    return [{name: arguments}]


def _first_call(node: JavaNode) -> JavaNode | None:
    """The first method invocation in pre-order: an outer call before the calls inside it."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.kind == "method_invocation":
            return current
        stack.extend(reversed(current.children))
    return None


def _text(source: str, node: JavaNode) -> str:
    return source[node.start : node.end]


def _argument_text(source: str, node: JavaNode, *, nested: bool) -> str:
    """The text bfcl keeps for an argument value (§3.2)."""
    if node.kind in ("string_literal", "character_literal"):
        text = _text(source, node)
        return text if nested else text[1:-1]  # quotes are dropped only at the top
    if node.kind in ("identifier", "class_literal", "type_identifier", "method_invocation"):
        return _text(source, node)
    if node.kind == "array_creation_expression":
        element_type = _argument_text(source, node.fields["type"], nested=True)
        return f"new {element_type}[]{_argument_text(source, node.fields['value'], nested=True)}"
    if node.kind == "object_creation_expression":
        created = _argument_text(source, node.fields["type"], nested=True)
        parts = [
            _argument_text(source, child, nested=True)
            for child in node.fields["arguments"].children
            if child.kind not in (",", "(", ")")
        ]
        return f"new {created}({', '.join(parts)})"  # an anonymous class body is left out
    if node.children:
        # other compound nodes: the texts of their tokens, joined without the spaces between them
        return "".join(_argument_text(source, child, nested=True) for child in node.children)
    return _text(source, node)
