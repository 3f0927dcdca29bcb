"""Text as reports and failure messages show it."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


# a reasoning model's inline reasoning, as models served without a reasoning parser write it
THINK_START, THINK_END = "<think>", "</think>"


def split_think_block(text: str) -> tuple[str | None, str]:
    """(the leading <think>...</think> block's content, the answer after it); (None, text) when there is none."""
    stripped = text.lstrip()
    if not stripped.startswith(THINK_START):
        return None, text
    end = stripped.find(THINK_END)
    if end < 0:
        return None, text  # an unfinished block: the answer as it came (a length cut-off, say)
    return stripped[len(THINK_START):end].strip(), stripped[end + len(THINK_END):].lstrip()


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 request', '2 requests', '1,024 categories' (`plural` where adding an s is wrong)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The known name closest to a misspelt one, as a message ends with it: "did you mean 'overall'?"; "" when
    none is close (difflib's ratio of at least 0.6)."""
    close = difflib.get_close_matches(name, list(dict.fromkeys(known)), n=1)
    return f"did you mean {close[0]!r}?" if close else ""


def tidy_path(path: str) -> str:
    """`path` without its `.` and `..` steps and doubled separators (`proj/../gate/cur.json` -> `gate/cur.json`),
    relative or absolute as it was given; as given when tidying would name another file (a `..` after a symbolic
    link leads out of the link's target, not back to its folder)."""
    tidy = os.path.normpath(path)
    if tidy == path or ".." not in path.replace("\\", "/").split("/"):
        return tidy
    return tidy if Path(tidy).resolve() == Path(path).resolve() else path


def utc_minute(epoch_s: float) -> str:
    """A moment as a report shows it to the minute: "2026-12-05 14:02 UTC"."""
    import datetime

    return datetime.datetime.fromtimestamp(epoch_s, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


_SURROGATE = re.compile("[\ud800-\udfff]")


def plain_text(text: str) -> str:
    """`text` as every store and pipe takes it: surrogate halves written in pairs (a model spelling an emoji as
    '\\ud83d\\ude00') joined into their character, a lone half replaced by U+FFFD. sqlite, UTF-8 files and
    xdist's pipe between processes all refuse a lone half (docs/reliability.md)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


TOO_DEEP = "<not kept: nested too deeply to store>"


def plain_data(value: Any) -> Any:  # Any: the value goes back into a field of its own type, its shape kept
    """JSON-like `value` (dicts, lists, tuples, strings, numbers) with every string, keys too, `plain_text`; a
    value nested too deeply to walk becomes TOO_DEEP (it could not be stored or sent either)."""
    return strings_mapped(value, plain_text)


def strings_mapped(value: object, change: Callable[[str], str], *, tuples: bool = True) -> object:
    """`value` with `change` applied to every string in it, keys too, through mappings (made dicts), lists and
    tuples (kept tuples, or made lists when `tuples` is False); a value nested too deeply to walk is TOO_DEEP."""
    try:
        return _mapped(value, change, tuples)
    except RecursionError:
        return TOO_DEEP


def _mapped(value: object, change: Callable[[str], str], tuples: bool) -> object:
    # loops, not comprehensions: one frame a level, so that it walks as deep as the JSON encoder does
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        mapping = {}
        for key, item in value.items():
            mapping[_mapped(key, change, tuples)] = _mapped(item, change, tuples)
        return mapping
    if isinstance(value, (list, tuple)):
        items = []
        for item in value:
            items.append(_mapped(item, change, tuples))
        return tuple(items) if tuples and isinstance(value, tuple) else items
    return value
