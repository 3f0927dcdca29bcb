"""Reading parsed JSON the way upstream's untyped Python does, with types: each helper does what the plain expression
does on every JSON value, raising the same exception class where it fails (an upstream evaluator's verdict, or its
crash, can depend on that: bfcl §4.8)."""

from __future__ import annotations

from collections.abc import Iterable

from ..json_value import JSONObject, JSONValue


def item(value: JSONValue, key: str) -> JSONValue:
    """``value[key]``: a KeyError for a missing key, a TypeError for anything but an object."""
    return as_object(value)[key]


def as_object(value: JSONValue) -> JSONObject:
    """`value`, about to be indexed by a string or assigned to: a TypeError for anything but an object."""
    if isinstance(value, dict):
        return value
    raise TypeError(f"'{type(value).__name__}' object is not subscriptable by a string")


def as_getter(value: JSONValue) -> JSONObject:
    """`value`, about to have ``.get`` or ``.items()`` called: an AttributeError for anything but an object."""
    if isinstance(value, dict):
        return value
    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'get'")


def concat(value: JSONValue, text: str) -> str:
    """``value + text``: a TypeError for anything but a string."""
    if isinstance(value, str):
        return value + text
    raise TypeError(f"unsupported operand type(s) for +: '{type(value).__name__}' and 'str'")


def contains(container: JSONValue, element: object) -> bool:
    """``element in container``: a TypeError for a number, a boolean or None, or for a string and a non-string."""
    if isinstance(container, (list, dict)):
        return element in container
    if isinstance(container, str):
        if isinstance(element, str):
            return element in container
        raise TypeError(f"'in <string>' requires string as left operand, not {type(element).__name__}")
    raise TypeError(f"argument of type '{type(container).__name__}' is not iterable")


def subscript(container: JSONValue, key: object) -> JSONValue:
    """``container[key]``: an object's keys are strings, a list's and a string's indexes integers."""
    if isinstance(container, dict):
        hash(key)  # an unhashable key: a TypeError
        if isinstance(key, str):
            return container[key]
        raise KeyError(key)
    if isinstance(container, (list, str)) and isinstance(key, int):
        return container[key]
    raise TypeError(f"'{type(container).__name__}' object is not subscriptable by {type(key).__name__}")


def iterate(value: JSONValue) -> Iterable[JSONValue]:
    """``iter(value)``: a list's items, an object's keys, a string's characters; a TypeError for a scalar."""
    if isinstance(value, (list, dict, str)):
        return value
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def length(value: JSONValue) -> int:
    """``len(value)``: a TypeError for a number, a boolean or None."""
    if isinstance(value, (list, dict, str)):
        return len(value)
    raise TypeError(f"object of type '{type(value).__name__}' has no len()")
