"""The tokens and the token cursor shared by our Java and JavaScript call parsers (bfcl §3.2, §3.3).

Each parser brings its own token pattern, node class and grammar; what they share is how a source text becomes a
list of tokens and how a recursive-descent parser steps through that list. Errors are `DecodeError`s naming the
language, as bfcl's tree-sitter decoders fail on text outside the language.

Tokenizing is linear in the text. Block comments, which both languages write ``/* ... */``, are read here rather
than by the languages' patterns: the closing ``*/`` is looked for once, and a comment without one ends the
tokenizing with a `DecodeError` (an unclosed comment is a syntax error for tree-sitter too, bfcl §3.2). A pattern
that tried the comment at each ``/*`` scanned to the end of the text every time it failed and then read the ``/``
as an operator, so that a text of many unclosed openers took time quadratic in its length. The languages'
patterns keep to a rule that makes every other scan pay for itself: a group that fails after reading far either
leaves the same characters to a group that takes them (a digit run that is no float is an integer), or opens
with a character no other group starts with (a string's or character literal's quote, a template's backtick), so
that nothing matches there and the tokenizing ends.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import DecodeError

__all__ = ["MAX_DEPTH", "Token", "TokenCursor", "tokenize"]

#: How deeply expressions may nest before the text is refused (a guard against runaway recursion).
MAX_DEPTH = 100

NodeT = TypeVar("NodeT")


@dataclass(frozen=True)
class Token:
    """One token: its kind (a named group of the language's pattern, or "end"), its text and source span."""

    kind: str
    text: str
    start: int
    end: int
    # whether a line break stands between this token and the one before: JavaScript's automatic semicolon
    # insertion needs it; always False unless `tokenize` was asked to track line breaks
    after_newline: bool = False


def tokenize(source: str, pattern: re.Pattern[str], language: str, *, track_newlines: bool = False) -> list[Token]:
    """The tokens of `source`, by the named groups of `pattern`, ending with an "end" token.

    Block comments (``/* ... */``) and matches of the group "space" are dropped. With `track_newlines`, so are
    those of the group "newline" (and a comment or "space" match holding a line break), and the next token is marked
    `after_newline`; the end token is marked too, since the end of the text ends a statement as a line break does.

    Raises:
        DecodeError: a ``/*`` without its ``*/``, or a character no group of `pattern` matches.
    """
    tokens = []
    position = 0
    newline = False
    while position < len(source):
        if source.startswith("/*", position):
            # the first "*/" after the opener closes the comment ("/*/" does not); it is looked for once
            closing = source.find("*/", position + 2)
            if closing < 0:
                raise DecodeError(f"not {language}: the comment opened at {position} is never closed")
            if track_newlines and source.find("\n", position, closing) >= 0:
                newline = True
            position = closing + 2
            continue
        match = pattern.match(source, position)
        if match is None or match.end() == position:
            raise DecodeError(f"not {language}: unexpected character {source[position]!r} at {position}")
        kind = match.lastgroup or ""
        if track_newlines and (kind == "newline" or (kind == "space" and "\n" in match.group())):
            newline = True
        elif kind != "space":
            tokens.append(Token(kind, match.group(), position, match.end(), newline))
            newline = False
        position = match.end()
    tokens.append(Token("end", "", len(source), len(source), track_newlines))
    return tokens


class TokenCursor(Generic[NodeT]):
    """A recursive-descent parser's position in its tokens: look ahead, take a token as a leaf node, expect one.

    Subclasses hold the grammar. A token taken as a leaf gets its text as kind when it is an operator or a word
    (tree-sitter names such leaves by their text), otherwise its token kind.
    """

    def __init__(self, tokens: list[Token], leaf: Callable[[str, int, int], NodeT], language: str) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0
        self.leaf = leaf  # the node class's constructor: kind, start, end
        self.language = language  # for error messages: "not Java: ..."

    def peek(self, offset: int = 0) -> Token:
        """The token `offset` places ahead; past the end, the end token."""
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def at(self, text: str, offset: int = 0) -> bool:
        """Whether the token `offset` places ahead is the operator or word `text`."""
        token = self.peek(offset)
        return token.kind in ("op", "word") and token.text == text

    def take(self) -> NodeT:
        token = self.tokens[self.index]
        return self.take_as(token.text if token.kind in ("op", "word") else token.kind)

    def take_as(self, kind: str) -> NodeT:
        """The token at hand as a leaf node of `kind` (a literal's or name's tree-sitter kind, say)."""
        token = self.tokens[self.index]
        self.index += 1
        return self.leaf(kind, token.start, token.end)

    def expect(self, text: str) -> NodeT:
        if not self.at(text):
            token = self.peek()
            raise DecodeError(f"not {self.language}: expected {text!r} at {token.start}, found {token.text!r}")
        return self.take()

    def deeper(self) -> None:
        """One nesting level down; the caller steps back up (``self.depth -= 1``) once the nested part is read."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise DecodeError(f"not {self.language}: the expression is nested too deeply")
