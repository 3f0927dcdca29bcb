"""docs/architecture.md lists every module of the package once, and only modules that exist.

A module is a `.py` file under pytest_tooleval/, named by its path under that folder (`run/plan.py`,
`suites/acebench/agent/envs/food.py`). A folder's `__init__.py` that holds nothing but its docstring is no module
here and has no row; every other `__init__.py` (the package face, the suite registry, `answers/__init__.py`'s
protocol, ...) has one. The shipped benchmark modules (`benchmarks/test_*.py`) are modules like any other: one row
each. A row is a line of a Markdown table whose header is `| module | role |`; its first cell is the module's path
in backticks. Nothing here imports the package: the files are only read.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_tooleval"
DOC = ROOT / "docs" / "architecture.md"
HEADER = re.compile(r"^\|\s*module\s*\|\s*role\s*\|\s*$")
SEPARATOR = re.compile(r"^\|[\s|:-]*\|\s*$")
NAMED = re.compile(r"`([^`]+)`")


def only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return all(
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for node in body
    )


def modules(package: Path) -> set[str]:
    """Every module that needs a row: each `.py` file but a folder's `__init__.py` that is only a docstring."""
    return {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if not (path.name == "__init__.py" and path.parent != package and only_a_docstring(path))
    }


def rows(text: str) -> list[str]:
    """The first cell of each row of the document's module tables, as written (a path in backticks)."""
    cells, in_table = [], False
    for line in text.splitlines():
        if HEADER.match(line):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and not SEPARATOR.match(line):
            cells.append(line.split("|")[1].strip())
    return cells


def problems(package: Path, doc: Path) -> list[str]:
    named: Counter[str] = Counter()
    found = []
    for cell in rows(doc.read_text(encoding="utf-8")):
        match = NAMED.fullmatch(cell)
        if match is None or not match.group(1).endswith(".py"):
            found.append(f"{cell}: a row whose first cell is not a module's path in backticks")
        else:
            named[match.group(1)] += 1
    present = modules(package)
    found += [f"{name}: no row" for name in sorted(present - set(named))]
    found += [f"{name}: {count} rows" for name, count in sorted(named.items()) if count > 1]
    found += [
        f"{name}: a row for a file that is not there, or for an __init__.py that is only a docstring"
        for name in sorted(set(named) - present)
    ]
    return found


def test_every_module_has_one_row_and_every_row_a_module() -> None:
    assert len(modules(PACKAGE)) > 50, "the package's modules were not found: the scan is broken"
    assert len(rows(DOC.read_text(encoding="utf-8"))) > 50, "the module tables were not found: the parse is broken"
    found = problems(PACKAGE, DOC)
    assert not found, "docs/architecture.md, the rooms:\n" + "\n".join(found)


def test_a_missing_row_a_double_row_and_a_gone_module_are_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The face."""\n', encoding="utf-8")
    (package / "errors.py").write_text("", encoding="utf-8")
    (package / "room" / "__init__.py").write_text('"""Only a docstring."""\n', encoding="utf-8")
    (package / "room" / "kept.py").write_text("", encoding="utf-8")
    (package / "room" / "new.py").write_text("", encoding="utf-8")
    doc = tmp_path / "architecture.md"
    doc.write_text(
        "| module | role |\n|---|---|\n| `__init__.py` | the face |\n| `errors.py` | errors |\n"
        "| `room/kept.py` | kept |\n\n| module | role |\n|---|---|\n| `errors.py` | again |\n"
        "| `room/gone.py` | moved away |\n| `room/__init__.py` | a docstring |\n| room/x.py | bare |\n\n"
        "| other | table |\n|---|---|\n| `room/new.py` | not a module table |\n",
        encoding="utf-8",
    )
    assert problems(package, doc) == [
        "room/x.py: a row whose first cell is not a module's path in backticks",
        "room/new.py: no row",
        "errors.py: 2 rows",
        "room/__init__.py: a row for a file that is not there, or for an __init__.py that is only a docstring",
        "room/gone.py: a row for a file that is not there, or for an __init__.py that is only a docstring",
    ]
