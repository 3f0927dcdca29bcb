"""Text as reports and failure messages show it."""

from __future__ import annotations


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


def utc_minute(epoch_s: float) -> str:
    """A moment as a report shows it to the minute: "2026-12-05 14:02 UTC"."""
    import datetime

    return datetime.datetime.fromtimestamp(epoch_s, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
