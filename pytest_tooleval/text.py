"""Text as reports and failure messages show it."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"
