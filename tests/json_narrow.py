"""Checked views of parsed JSON (`JSONValue`) for tests that index into it: one `isinstance` at the top, then
`Any` below, since a test's own `assert`s say what shape it expects."""

from __future__ import annotations

from typing import Any


def as_object(value: object) -> dict[str, Any]:
    """`value`, which must be a JSON object."""
    assert isinstance(value, dict), value
    return value


def as_list(value: object) -> list[Any]:
    """`value`, which must be a JSON array."""
    assert isinstance(value, list), value
    return value
