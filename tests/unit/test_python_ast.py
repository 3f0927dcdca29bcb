"""Parsing from several threads at once: CPython's shared AST recursion counter (python/cpython#106905)."""

from __future__ import annotations

import ast
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import pytest_tooleval
from pytest_tooleval import python_ast

PACKAGE = Path(pytest_tooleval.__file__).parent


class _Finalised:
    """Cyclic garbage whose finalizer runs Python code, so a collection inside a parse can switch threads."""

    def __del__(self) -> None:
        sum(range(50))


@pytest.fixture
def fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _parse_from_threads(parse: Callable[[str], object], source: str) -> list[BaseException]:
    errors: list[BaseException] = []

    def work() -> None:
        for _ in range(40):
            for _ in range(100):
                garbage = _Finalised()
                garbage.cycle = garbage  # type: ignore[attr-defined]
            try:
                parse(source)
            except SystemError as exc:
                errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)  # a hang guard only
    return errors


@pytest.mark.usefixtures("fast_switching")
def test_concurrent_parses_never_raise_the_recursion_mismatch() -> None:
    source = (PACKAGE / "suite.py").read_text(encoding="utf-8")
    assert _parse_from_threads(python_ast.parse, source) == []


def test_both_modes_give_the_trees_ast_gives() -> None:
    assert ast.dump(python_ast.parse("f(a=1)", mode="eval")) == ast.dump(ast.parse("f(a=1)", mode="eval"))
    assert ast.dump(python_ast.parse("x = 1\n", filename="m.py")) == ast.dump(ast.parse("x = 1\n", filename="m.py"))


def test_the_package_parses_only_through_the_serialised_helper() -> None:
    direct = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "python_ast.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(?<![\w.`])ast\.parse\(", line)
    ]
    assert direct == []
