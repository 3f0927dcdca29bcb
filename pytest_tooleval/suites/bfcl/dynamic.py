"""Reading parsed JSON the way bfcl's dynamic Python does, with types: each helper does what the plain expression
does on every JSON value, raising the same exception class where it fails (bfcl §4.8 counts on those)."""

from __future__ import annotations

from ...json_value import JSONObject, JSONValue


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
