"""Upstream's plain expressions on values it never checks (the data files' records, the model's arguments), typed.

Each helper does what the expression does on any value, and fails with the exception class Python raises where it
fails, so a verdict, an observation or a crash stays upstream's; `object` in, a narrowed type out. For parsed JSON
whose type is known to be `JSONValue`, suites/json_ops.py does the same.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping


def entries(value: object, method: str = "items") -> Mapping[str, object]:
    """`value` (a JSON object), about to have ``.items()`` (or `method`) called: an AttributeError for anything but
    a mapping."""
    if isinstance(value, Mapping):
        return value
    raise AttributeError(f"'{type(value).__name__}' object has no attribute '{method}'")


def contains(container: object, element: object) -> bool:
    """``element in container``: a TypeError for a value that holds nothing."""
    if isinstance(container, Container):
        return element in container
    raise TypeError(f"argument of type '{type(container).__name__}' is not iterable")


def in_text(element: object, text: str) -> bool:
    """``element in text``: a TypeError for anything but a string."""
    if isinstance(element, str):
        return element in text
    raise TypeError(f"'in <string>' requires string as left operand, not {type(element).__name__}")


def subscript(container: object, key: str) -> object:
    """``container[key]`` with a string key: a KeyError where a mapping lacks it, a TypeError for anything else."""
    if isinstance(container, Mapping):
        return container[key]
    raise TypeError(f"'{type(container).__name__}' object is not subscriptable by a string")


def iterate(value: object) -> Iterable[object]:
    """``iter(value)``: a TypeError for a value that is not iterable."""
    if isinstance(value, Iterable):
        return value
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def joined(separator: str, values: object) -> str:
    """``separator.join(values)``: a TypeError for a value that is not iterable or an item that is not a string."""
    items = list(iterate(values))
    strings = [item for item in items if isinstance(item, str)]
    if len(strings) != len(items):
        raise TypeError("sequence item: expected str instance")
    return separator.join(strings)
