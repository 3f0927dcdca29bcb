"""Every section pointer in the package and the tests names a heading of a document in docs/upstream/.

The convention (docs/upstream/README.md): ``(<doc> <sign>N.M)`` names section N.M of
``docs/upstream/<doc>.md``; a bare ``<sign>N.M`` refers to the document of the nearest earlier full pointer in
the same file, normally the one in the module docstring. ``<sign>`` is the section sign, U+00A7; this file spells
it as an escape so that it holds no pointers of its own. Ranges (``<sign>1-<sign>4``, ``<sign>4.2-4.5``) must
resolve at both ends; lists (``<sign>2.2, <sign>2.6``) are pointers one by one. A section sign that is not
followed by a section number is not a pointer. Nothing here reads the network or the benchmark data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "upstream"
SCANNED = ("pytest_tooleval", "tests")

SIGN = "\u00a7"
#: A section number: 4, 4.9, 6.4.2, 9.B (a lettered subsection).
NUMBER = r"\d+(?:\.(?:\d+|[A-Z](?![A-Za-z])))*"
POINTER = re.compile(rf"{SIGN}({NUMBER})(?:\s*[-\u2013]\s*{SIGN}?({NUMBER}))?")
#: A document name written just before the section sign: lowercase words joined by hyphens.
DOC_BEFORE = re.compile(r"([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+)\s+$")
WORD_BEFORE = re.compile(r"([A-Za-z0-9]+)\s+$")
#: A heading that carries a section number: "## 4. Title", "### 4.9 Title", "### 9.B Title".
HEADING = re.compile(rf"^#{{1,6}}\s+({NUMBER})\.?(?:\s|$)")


def doc_sections() -> dict[str, set[str]]:
    """Document name -> the section numbers its headings carry."""
    sections: dict[str, set[str]] = {}
    for path in sorted(DOCS.glob("*.md")):
        numbers = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            match = HEADING.match(line)
            if match:
                numbers.add(match.group(1))
        sections[path.stem] = numbers
    return sections


def scanned_files() -> list[Path]:
    return sorted(p for top in SCANNED for p in (ROOT / top).rglob("*.py"))


def pointers(path: Path, names: set[str]) -> Iterator[tuple[int, str | None, str, str | None, str]]:
    """(line number, document or None, section, problem or None) for every pointer of one file."""
    fragments = {part.lower() for name in names for part in name.split("-")}
    context: str | None = None  # the document of the nearest earlier full pointer
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for match in POINTER.finditer(line):
            before = line[: match.start()]
            named = DOC_BEFORE.search(before)
            word = WORD_BEFORE.search(before)
            problem: str | None = None
            if named:
                doc = context = named.group(1)
            elif word and word.group(1) in names:  # a one-word document name (bfcl)
                doc = context = word.group(1)
            elif word and word.group(1).lower() in fragments:
                doc, problem = None, f"abbreviated document name {word.group(1)!r}"
            else:
                doc = context
                if doc is None:
                    problem = "bare pointer, and no earlier pointer in the file names a document"
            for number in filter(None, match.groups()):
                yield lineno, doc, number, problem, match.group(0)


def unresolved() -> tuple[int, list[str]]:
    sections = doc_sections()
    found, bad = 0, []
    for path in scanned_files():
        rel = path.relative_to(ROOT)
        for lineno, doc, number, problem, text in pointers(path, set(sections)):
            found += 1
            if problem is None:
                if doc is None or doc not in sections:
                    problem = f"no document docs/upstream/{doc}.md"
                elif number not in sections[doc]:
                    problem = f"docs/upstream/{doc}.md has no heading numbered {number}"
            if problem:
                bad.append(f"{rel}:{lineno}: {doc or '?'} {SIGN}{number} (in {text!r}): {problem}")
    return found, bad


def test_the_documents_exist() -> None:
    assert {"acebench-scoring", "acebench-agent", "toolalpaca-gpt4tools"} <= set(doc_sections())
    assert (DOCS / "README.md").is_file()


def test_every_pointer_resolves() -> None:
    found, bad = unresolved()
    assert found > 0, "no section pointers found: the scan is broken"
    assert not bad, f"{len(bad)} of {found} section pointers do not resolve:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"# quirk (acebench-scoring {SIGN}4.9)", [("acebench-scoring", "4.9", None)]),
        (
            f'"""x (toolalpaca-gpt4tools {SIGN}1-{SIGN}4)."""',
            [("toolalpaca-gpt4tools", "1", None), ("toolalpaca-gpt4tools", "4", None)],
        ),
        (
            f"# (acebench-scoring {SIGN}4.2\u20134.5)",
            [("acebench-scoring", "4.2", None), ("acebench-scoring", "4.5", None)],
        ),
        (
            f"# a (acebench-agent {SIGN}2.2, {SIGN}9.B).",
            [("acebench-agent", "2.2", None), ("acebench-agent", "9.B", None)],
        ),
        (f"# the {SIGN} sign alone, {SIGN}x", []),
        (f"# (bfcl {SIGN}4.2)", [("bfcl", "4.2", None)]),
        (f"# (scoring {SIGN}4.2)", [(None, "4.2", "abbreviated document name 'scoring'")]),
    ],
)
def test_pointer_syntax(tmp_path: Path, text: str, expected: list[tuple[str | None, str, str | None]]) -> None:
    path = tmp_path / "m.py"
    path.write_text(text + "\n", encoding="utf-8")
    names = {"acebench-scoring", "acebench-agent", "toolalpaca-gpt4tools", "bfcl"}
    assert [(doc, number, problem) for _, doc, number, problem, _ in pointers(path, names)] == expected


def test_bare_pointers_take_the_earlier_document(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        f'"""Doc (acebench-agent {SIGN}4)."""\n# bare ({SIGN}5.1)\n# (acebench-scoring {SIGN}7.2)\n# bare ({SIGN}8)\n',
        encoding="utf-8",
    )
    names = {"acebench-scoring", "acebench-agent"}
    got = [(doc, number) for _, doc, number, _, _ in pointers(path, names)]
    assert got == [
        ("acebench-agent", "4"),
        ("acebench-agent", "5.1"),
        ("acebench-scoring", "7.2"),
        ("acebench-scoring", "8"),
    ]


def test_unnamed_and_abbreviated_pointers_are_problems(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(f"# bare first ({SIGN}2.2)\n# (acebench-scoring {SIGN}7, agent {SIGN}8)\n", encoding="utf-8")
    problems = [problem for *_, problem, _ in pointers(path, {"acebench-scoring", "acebench-agent"})]
    assert problems[0] and "no earlier pointer" in problems[0]
    assert problems[1] is None
    assert problems[2] and "abbreviated" in problems[2]
