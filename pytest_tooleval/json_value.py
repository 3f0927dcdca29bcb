"""The type of a parsed JSON value, for data that stays JSON-shaped: upstream files, model answers, report rows.

A value typed `JSONValue` must be narrowed (`isinstance`) before use, where `Any` would let any use through.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"
