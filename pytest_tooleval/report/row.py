"""A sample row as the run and its reports pass it around: a JSON object (transport.py `result_payload`), read
member by member through the helpers below.

The typed reading of a whole report is `document.SampleRow`; these serve the code that keeps rows as the plain
objects it writes (the controller, the summaries, the merge, the comparison). Each helper does what the plain
expression it replaces did on a row of the usual shape, and raises what that expression raised on another
(a KeyError, TypeError or ValueError), which the merge turns into one line naming the shard (merge.py `_summary`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..json_value import JSONObject, JSONValue

__all__ = ["entries", "member_text", "object_entries", "object_of", "object_or_empty", "tally", "whole"]


def member_text(row: Mapping[str, JSONValue], name: str, default: str | None = None) -> str:
    """``row[name]`` (``row.get(name, default)`` with a default), which must be a text."""
    value = row[name] if default is None else row.get(name, default)
    if isinstance(value, str):
        return value
    raise TypeError(f"the row's {name} is {type(value).__name__}, not a text")


def whole(value: JSONValue) -> int:
    """``int(value)``: a TypeError for a list, an object or None."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"int() argument must be a string or a real number, not '{type(value).__name__}'")


def object_of(value: JSONValue) -> JSONObject:
    """`value`, about to have ``.items()`` or ``.get`` called: an AttributeError for anything but an object."""
    if isinstance(value, dict):
        return value
    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'items'")


def tally(value: JSONValue) -> dict[str, int]:
    """A {name: count} member (a row's `tokens`, `cached_tokens`): absent or null reads as empty, each count
    as ``int(count)``."""
    return {key: whole(count) for key, count in object_of(value or {}).items()}


def entries(value: JSONValue) -> list[JSONValue]:
    """A list's entries; none for a value that is no list (null: absent)."""
    return value if isinstance(value, list) else []


def object_entries(value: JSONValue) -> list[JSONObject]:
    """The objects among a list's entries (a report's `samples`); none for a value that is no list."""
    return [entry for entry in entries(value) if isinstance(entry, dict)]


def object_or_empty(value: JSONValue) -> JSONObject:
    """An object member of a report (its `fingerprint`, `run`); an empty one for a value that is no object."""
    return value if isinstance(value, dict) else {}
