"""Every relative link of the README and of the Markdown under docs/ and benchmarks/ points at a file that
exists, and every `#anchor` into a Markdown file at one of its headings (GitHub's anchor of a heading: lower
case, punctuation other than hyphens and underscores dropped, each space a hyphen). Links with a scheme
(https:, mailto:) are not followed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def documents() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *(path for folder in ("real_server", "perf") for path in sorted((ROOT / folder).rglob("*.md"))),
    ]


def anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(match.group(1)) for match in HEADING.finditer(path.read_text(encoding="utf-8"))}


def broken_links(path: Path) -> list[str]:
    broken = []
    for match in LINK.finditer(path.read_text(encoding="utf-8")):
        target = match.group(1)
        if SCHEME.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        destination = (path.parent / file_part) if file_part else path
        if not destination.exists():
            broken.append(f"{path.relative_to(ROOT)}: {target}: no such file")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{path.relative_to(ROOT)}: {target}: no heading with that anchor")
    return broken


def test_every_relative_link_resolves() -> None:
    checked = documents()
    assert len(checked) > 5, "the README and docs/ were not found: the scan is broken"
    broken = [line for path in checked for line in broken_links(path)]
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Where it starts", "where-it-starts"),
        ("One sample, with xdist", "one-sample-with-xdist"),
        ("`--tooleval-slow-start` and you", "--tooleval-slow-start-and-you"),
    ],
)
def test_anchors_follow_githubs_rule(heading: str, expected: str) -> None:
    assert anchor(heading) == expected


def test_a_missing_file_and_a_missing_heading_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Real heading\n", encoding="utf-8")
    page.write_text(
        "[a](other.md#real-heading) [b](gone.md) [c](other.md#nope) [d](https://x.test/gone)\n", encoding="utf-8"
    )
    assert broken_links(page) == [
        "page.md: gone.md: no such file",
        "page.md: other.md#nope: no heading with that anchor",
    ]
