"""The file's patterns run in linear time (RE2) with Python's meaning; without RE2, Python's re under a deadline."""

from __future__ import annotations

import random
import re
import sys
import unicodedata
import warnings
from collections.abc import Iterator

import pytest

from pytest_tooleval.suites.yamlsuite import patterns

PY311 = sys.version_info >= (3, 11)

# Python patterns of the kinds users write, each with a construct whose meaning RE2 spells otherwise
PATTERNS = [
    r"^abc$",
    r"\w+$",
    r"^\w+$",
    r"\d",
    r"^\d+$",
    r"[\s]",
    r"[^\s]x",
    r"\S+",
    r"[\S]",
    r"\W+",
    r"\D+",
    r"a{,3}b",
    r"a{,}c",
    r"a{}",
    r"[[:alpha:]]",
    r"[\b]",
    r"\u00e9",
    r"\N{LATIN SMALL LETTER E WITH ACUTE}",
    r"x(?#a comment)y",
    r"[]a]",
    r"[^]a]",
    r"abc\Z",
    r"(?i)CAFÉ",
    r"(?m)^b$",
    "(?s)a.b",
    r"[\d-]",
    r"[^\d]",
    "(?x) a b  # a comment\n c",
    "(?x)[ ]x",
    "(?ix) A\\ B",
    r"\é",
    "\\ x",
    r"^\s*$",
    r"^[\w.-]+@[\w-]+\.\w+$",
    r"(?i)^paris$",
    r"^(?P<year>\d{4})-\d{2}$",
    r"colou?r",
    r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$",
]
ALPHABET = [
    "a",
    "b",
    "c",
    " ",
    "\n",
    "é",
    "É",
    "1",
    "٣",
    "x",
    "{",
    ",",
    "3",
    "}",
    "[",
    ":",
    "]",
    "\x08",
    "-",
    "_",
    ".",
    "@",
    "\u3000",
    "\t",
    "A",
    "B",
    "#",
    "y",
    "P",
    "ü",
    "colour",
    "2026-12",
    "Paris",
    "New York",
]


def _texts(count: int) -> Iterator[str]:
    chooser = random.Random(30)
    for _ in range(count):
        yield "".join(chooser.choice(ALPHABET) for _ in range(chooser.randint(0, 8)))
    yield from ["abc\n", "café\n", "aaa\n", "a b", "a@b.com", "ü@x.de", "Paris", "paris\n", "a\nb\n", "2026-12\n"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pattern_finds_what_pythons_search_finds(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "[[" : Python reads it, and warns that it may not one day
        compiled = re.compile(pattern)
    differ = [text for text in _texts(2_000) if patterns.search(pattern, text) != (compiled.search(text) is not None)]
    assert differ == []


def _assigned() -> str:
    """Every code point Python's Unicode database assigns (RE2's may be newer: unassigned ones may differ)."""
    return "".join(
        chr(point)
        for point in range(0x110000)
        if not 0xD800 <= point <= 0xDFFF and unicodedata.category(chr(point)) != "Cn"
    )


@pytest.mark.parametrize(
    "klass", [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", r"[\d]", r"[\w]", r"[\s]", r"[\S]", r"[^\s]", r"[^\w]"]
)
def test_the_classes_are_pythons_on_every_assigned_character(klass: str) -> None:
    if patterns.engine() != "re2":
        pytest.skip("google-re2 is not installed: Python's re runs the patterns")
    compiled, _ = patterns._compiled(klass)
    assert compiled is not None and hasattr(compiled, "findall")  # an re2 pattern: _Compiled names only search
    text = _assigned()
    found = [match.decode("utf-8") for match in compiled.findall(text.encode("utf-8"))]
    assert found == re.findall(klass, text)


def test_dollar_matches_before_a_final_newline_as_in_python() -> None:
    assert patterns.search(r"^done\.$", "done.\n")
    assert not patterns.search(r"^done\.$", "done.\n\n")
    assert not patterns.search(r"done\.\Z", "done.\n")  # \Z is the very end
    assert patterns.search(r"(?m)^b$", "a\nb\nc")


def test_a_text_with_a_lone_surrogate_is_searched() -> None:
    assert patterns.search("^Par.is$", "Par\ud800is")  # JSON can carry one; it counts as one character
    assert not patterns.search("^Paris$", "Par\ud800is")


def test_a_backtracking_pattern_answers_at_once() -> None:
    if patterns.engine() != "re2":
        pytest.skip("google-re2 is not installed: see the fallback's tests")
    assert not patterns.search("^(a+)+$", "a" * 40 + " b")  # issue 30: 2**40 steps for Python's re
    assert not patterns.search("(x+x+)+y", "x" * 100_000)
    assert patterns.search("^(a+)+$", "a" * 100_000)


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (
            r"(a)\1",
            "RE2 cannot run it: invalid escape sequence: \\1; patterns run in linear time, without "
            "backreferences, lookarounds, atomic groups or possessive repeats",
        ),
        ("(?=a)b", "RE2 cannot run it: invalid perl operator: (?=;"),
        ("(?<!a)b", "RE2 cannot run it: invalid perl operator: (?<!;"),
        # atomic groups and possessive repeats are Python syntax from Python 3.11 on: before, Python's own word
        # comes first
        (
            "(?>a+)b",
            "RE2 cannot run it: invalid perl operator: (?>;" if PY311 else "unknown extension ?> at position 1",
        ),
        ("a*+b", "RE2 cannot run it: bad repetition operator: *+;" if PY311 else "multiple repeat at position 2"),
        ("a{1001}", "RE2 cannot run it: invalid repetition size: {1001};"),
        ("(?x: a)", "RE2 cannot run it: invalid perl operator: (?x;"),
        (r"[\W\d]", r"\W inside [...] cannot keep Python's Unicode meaning under RE2: write (?:\W|[...]) instead"),
        ("(Par", "missing ), unterminated subpattern at position 0"),  # Python's own word first: it is Python syntax
        (r"\p{L}", "bad escape \\p at position 0"),
    ],
)
def test_what_cannot_run_is_a_problem_of_the_pattern(pattern: str, problem: str) -> None:
    if patterns.engine() != "re2" and problem.startswith(("RE2", "\\W")):
        pytest.skip("google-re2 is not installed: Python's re runs the patterns")
    found = patterns.problem(pattern)
    assert found is not None and found.startswith(problem), found
    with pytest.raises(patterns.PatternProblem):
        patterns.search(pattern, "abc")


# -- without google-re2: Python's re in a worker process, under a deadline ---------------------------------------


@pytest.fixture
def fallback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The module as it runs where google-re2 cannot be imported."""
    monkeypatch.setattr(patterns, "_re2", lambda: None)
    patterns._compiled.cache_clear()
    yield
    patterns._compiled.cache_clear()
    patterns._fallback().close()


def test_the_fallback_answers_as_pythons_search(fallback: None) -> None:
    assert patterns.engine() == "re"
    assert patterns.search(r"^\w+$", "café") and not patterns.search(r"^\d+$", "12a")
    assert patterns.search(r"(a)\1", "xaa")  # Python's syntax whole: a backreference is fine here
    assert patterns.problem(r"(a)\1") is None
    assert patterns.search("^Par.is$", "Par\ud800is")


def test_the_fallback_stops_a_search_past_its_budget_and_goes_on(fallback: None) -> None:
    with pytest.raises(patterns.MatchTimeout, match=r"^regex matcher timed out after 2000 ms$"):
        patterns.search("^(a+)+$", "a" * 40 + " b")
    assert patterns.search("^(a+)+$", "a" * 40)  # a new worker answers the next search
    with pytest.raises(patterns.PatternProblem, match="unterminated character set"):
        patterns.search("[a", "a")
