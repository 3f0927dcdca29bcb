"""Python source parsed into a tree, one parse at a time per process.

CPython 3.11 and 3.12 keep the AST constructor's recursion counter in interpreter-wide state: when a garbage
finalizer lets another thread run mid-construction and that thread parses too, the counter is corrupted and
``ast.parse`` raises ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905). The hub's
threads, concurrent data downloads and the decoders may all parse, so every parse in the package comes here.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

__all__ = ["parse"]

# re-entrant: a finalizer that runs inside a parse on this thread may parse again
_ONE_PARSE = threading.RLock()


@overload
def parse(source: str, *, mode: Literal["exec"] = "exec", filename: str = "<unknown>") -> ast.Module: ...


@overload
def parse(source: str, *, mode: Literal["eval"], filename: str = "<unknown>") -> ast.Expression: ...


def parse(
    source: str, *, mode: Literal["exec", "eval"] = "exec", filename: str = "<unknown>"
) -> ast.Module | ast.Expression:
    """``ast.parse(source, filename, mode)``, serialised; parsing only: no code object is made."""
    with _ONE_PARSE:
        if mode == "eval":
            return ast.parse(source, filename=filename, mode="eval")
        return ast.parse(source, filename=filename, mode="exec")
