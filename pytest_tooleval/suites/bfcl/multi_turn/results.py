"""A method's outcome as the text the model and the checker see (docs/bfcl-multi-turn.md#result-strings).

Pure functions: a returned value becomes its result string, an exception its error string.
"""

from __future__ import annotations

import json

ERROR_PREFIX = "Error during execution: "


def result_string(value: object) -> str:
    """The result string of a returned value.

    A `str` as it is; a `dict` (exactly, not a subclass) as default `json.dumps` (ASCII escaping, NaN allowed,
    tuples as arrays), or its Python repr when that fails; anything else as its Python repr (None, lists).
    """
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:  # upstream falls back to str() on any failure (docs/bfcl-multi-turn.md#result-strings)
            return str(value)
    return str(value)


def error_string(exc: BaseException) -> str:
    """The result string of an exception a method raised."""
    return ERROR_PREFIX + str(exc)
