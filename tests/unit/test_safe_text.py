"""safe_text / safe_line: what a report's field holds is shown, and nothing in it acts on a terminal."""

from __future__ import annotations

import pytest

from pytest_tooleval.report.safe_text import safe_line, safe_text

BIDI = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07"),  # a repaint and a window title
        ("Li\x00ma", "Li\\x00ma"),
        ("ok\rFAKE", "ok\\x0dFAKE"),  # a carriage return would write over the start of the line
        ("\x7f\x85\x9b31m", "\\x7f\\x85\\x9b31m"),  # DEL, NEL and the one-byte CSI
        ("Par\ud800is", "Par\\ud800is"),  # a lone surrogate, which no UTF-8 terminal can encode
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
    ],
)
def test_controls_and_lone_surrogates_are_shown_as_their_escapes(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown
    assert safe_line(raw) == shown


@pytest.mark.parametrize("control", BIDI)
def test_every_bidi_control_is_shown_as_its_escape(control: str) -> None:
    assert safe_text(f"gate{control}passed") == f"gate\\u{ord(control):04x}passed"


def test_tabs_and_line_breaks_are_kept_in_text_and_a_line_break_is_escaped_in_a_line() -> None:
    assert safe_text("a\tb\nc") == "a\tb\nc"
    assert safe_line("a\tb\nc") == "a\tb\\x0ac"


def test_printable_text_is_unchanged_and_other_values_are_their_text() -> None:
    text = "acebench.en.overall 0.931 < 0.950 · 中文 ü 🙂 \\x1b"
    assert safe_text(text) == text and safe_line(text) == text
    assert safe_text(None) == "None" and safe_line(["\x1b"]) == "['\\x1b']"  # a list's repr escapes on its own
    assert safe_text(3) == "3"


def test_the_result_is_always_encodable_and_holds_no_control() -> None:
    every = "".join(chr(code) for code in range(0x3000)) + "\udc80\udfff"
    shown = safe_line(every)
    shown.encode("utf-8")
    assert not any(char in shown for char in [chr(code) for code in range(0x20) if code != 0x09] + ["\x7f", *BIDI])
    assert all(not 0x80 <= ord(char) <= 0x9F for char in shown)
