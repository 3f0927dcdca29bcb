"""Upstream's plain expressions on values it never checks (the data files' records, the model's arguments), typed.

Each helper does what the expression does on any value, and fails with the exception class Python raises where it
fails, so a verdict, an observation or a crash stays upstream's; `object` in, a narrowed type out. For parsed JSON
whose type is known to be `JSONValue`, suites/json_ops.py does the same.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, MutableMapping


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
    if not isinstance(values, Iterable):
        raise TypeError("can only join an iterable")
    strings: list[str] = []
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"sequence item {index}: expected str instance, {type(value).__name__} found")
        strings.append(value)
    return separator.join(strings)


# Arithmetic and comparisons on the model's values (the simulated APIs add, subtract and compare whatever they are
# sent): the operation itself, so its result and its error are Python's, in this Python's wording. The operator
# module's `add`/`sub`/`mul` take any operands (travel.py calls them); the rest are written out here, and mypy
# cannot type an operand that may be anything: hence the ignores.


def item(container: object, key: str) -> object:
    """``container[key]``: a mapping's value, or the error Python raises for `container`."""
    if isinstance(container, Mapping):
        return container[key]
    return container[key]  # type: ignore[index]  # not a mapping: raises Python's own TypeError


def add_to(container: object, key: str, amount: object) -> None:
    """``container[key] += amount``."""
    total = item(container, key)
    total += amount  # type: ignore[operator]  # any operands: Python's own result or TypeError
    if not isinstance(container, MutableMapping):
        raise TypeError(f"'{type(container).__name__}' object does not support item assignment")
    container[key] = total


def greater(left: object, right: object) -> bool:
    """``left > right``, as an ``if`` reads it."""
    return bool(left > right)  # type: ignore[operator]  # any operands: Python's own TypeError


def less(left: object, right: object) -> bool:
    """``left < right``, as an ``if`` reads it."""
    return bool(left < right)  # type: ignore[operator]  # any operands: Python's own TypeError


def larger(first: object, second: object) -> object:
    """``max(first, second)``: the second only when it is greater (``second > first``, max's own comparison)."""
    return second if greater(second, first) else first


def negative(value: object) -> object:
    """``-value``."""
    return -value  # type: ignore[operator]  # any operand: Python's own TypeError
