"""Issue 42: the package uses `Any` at most a budget of times per 1,000 lines, and never names it under another name.

The rate counts the NAME tokens `Any` (`tokenize`: annotations, imports and `typing.Any` alike; not the word in a
comment or a string) over every module of the package, per 1,000 lines. BUDGET is the rate the last change left,
rounded up to the next 0.5 (issue 42 asked for at most 10; the package went from 17.5 to 6.65): lower it as the
count drops, never raise it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest_tooleval

PACKAGE = Path(pytest_tooleval.__file__).parent
#: `Any` tokens per 1,000 lines the package may use (issue 42's goal was 10; 247 in 37,117 lines when set)
BUDGET = 7.0


def any_tokens(source: str) -> int:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(1 for token in tokens if token.type == tokenize.NAME and token.string == "Any")


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_any_rate_is_within_the_budget() -> None:
    counts = {path: any_tokens(path.read_text(encoding="utf-8")) for path in modules()}
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in modules())
    rate = 1000 * sum(counts.values()) / lines
    most = sorted(counts.items(), key=lambda item: -item[1])[:10]
    listed = ", ".join(f"{path.relative_to(PACKAGE.parent)} {count}" for path, count in most)
    assert rate <= BUDGET, (
        f"{sum(counts.values())} Any in {lines} lines: {rate:.2f} per 1,000 > {BUDGET}; most: {listed}"
    )


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's own statements, those under a module-level `if` (TYPE_CHECKING) or `try` too."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from module_statements([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            yield from module_statements([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                yield from module_statements(handler.body)


def names_any(value: ast.expr | None) -> bool:
    """`Any` or `typing.Any`, and the same quoted (a forward reference)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value.strip() in ("Any", "typing.Any", "t.Any")
    return (isinstance(value, ast.Name) and value.id == "Any") or (
        isinstance(value, ast.Attribute) and value.attr == "Any"
    )


def any_aliases(source: str) -> list[int]:
    """The lines of the module-level assignments whose value is `Any` (`X = Any`, `X: TypeAlias = Any`)."""
    found = []
    for node in module_statements(ast.parse(source).body):
        # (no `type X = Any` statement: the package runs on Python 3.10, which has none)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and names_any(node.value):
            found.append(node.lineno)
    return found


def test_no_module_names_any_under_another_name() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in modules()
        for line in any_aliases(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"an alias of Any hides it from the count and from the reader: {', '.join(found)}"


def test_the_checks_see_what_they_count() -> None:
    source = (
        "from typing import Any\n"
        "import typing\n"
        "Json = Any\n"
        "Other: TypeAlias = typing.Any\n"
        "Quoted: TypeAlias = 'Any'\n"
        "if TYPE_CHECKING:\n"
        "    Hidden = Any\n"
        "def f(x: Any) -> None:\n"
        "    local = Any  # inside a function: no alias of the module's\n"
        "note = 'Any in a string'  # and Any in a comment\n"
    )
    assert any_tokens(source) == 6
    assert any_aliases(source) == [3, 4, 5, 7]
