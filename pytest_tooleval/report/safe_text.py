"""Text from a report, made safe to show: no character in it can steer a terminal or reorder what is shown.

A report's fields hold what models and files gave (outputs, error texts, ids), so they may hold ESC sequences
that repaint a terminal, BEL, NUL, a carriage return that overwrites a line, bidi controls that show a line
in another order than it is read (U+202E), or a lone surrogate that no UTF-8 terminal can encode. Each of
those is written as its visible escape, in the form the HTML report uses (`\\x1b`, `\\u202e`, `\\ud800`), so
nothing is lost and nothing acts.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and the C1 controls; the bidi embeddings, overrides, isolates and marks
# (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C); the line and paragraph separators, which some
# renderers break lines at; lone surrogates (any surrogate in a Python str stands alone)
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_IN_TEXT = re.compile(f"[{_UNSAFE}]")
_IN_LINE = re.compile(f"[{_UNSAFE}\n]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object) -> str:
    """`value` as text to show: each control, bidi control and lone surrogate as its escape; tabs and line
    breaks kept."""
    return _IN_TEXT.sub(_shown, value if isinstance(value, str) else str(value))


def safe_line(value: object) -> str:
    """`safe_text(value)` on one line: a line break too is shown as its escape (`\\x0a`)."""
    return _IN_LINE.sub(_shown, value if isinstance(value, str) else str(value))
