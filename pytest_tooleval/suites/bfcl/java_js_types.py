"""Turning the argument texts of a Java or JavaScript answer into Python values, as bfcl's checker does (bfcl §4.2).

The Java and JavaScript decoders keep every argument as source text. Before checking it, bfcl converts the text
according to the parameter's declared type, with regular expressions: a text that does not have the expected
shape is kept as a string (and then usually fails the type check). The type names and what they stand for are
bfcl's; the conversions below reproduce its results, quirks included (§4.2 lists them).
"""

from __future__ import annotations

import re

from ...json_value import JSONObject, JSONValue
from .errors import DecodeError

__all__ = ["JAVA_TYPES", "JS_TYPES", "UnsupportedConversion", "java_value", "js_value"]

#: Java type name -> the Python type a converted value has (bfcl's table).
JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int, "boolean": bool,
    "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict, "Hashtable": dict,
    "Queue": list, "Stack": list, "String": str, "any": str,
}  # fmt: skip
#: JavaScript type name -> the Python type a converted value has (bfcl's table).
JS_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool, "dict": dict, "array": list,
    "any": str,
}  # fmt: skip


class UnsupportedConversion(DecodeError):
    """bfcl has no conversion for this type (Set, Hashtable, Queue, Stack): its checker raises."""


# Python's `re` semantics are part of the behaviour: \d is any Unicode digit, and $ also matches before a final
# newline (so "12\n" is an integer).
_INTEGER = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")


def java_value(text: str, type_name: str, item_type: str | None = None) -> JSONValue:
    """The value bfcl's checker reads from a Java argument text of type `type_name` (§4.2)."""
    if type_name not in JAVA_TYPES:
        raise UnsupportedConversion(f"no conversion for the Java type {type_name!r}")
    if type_name in ("byte", "short", "integer"):
        return int(text) if _INTEGER.match(text) else text
    if type_name == "float":
        return float(re.sub(r"[fF]$", "", text)) if _JAVA_FLOAT.match(text) else text
    if type_name == "double":
        return float(text) if _JAVA_DOUBLE.match(text) else text
    if type_name == "long":
        return int(re.sub(r"[lL]$", "", text)) if _JAVA_LONG.match(text) else text
    if type_name == "boolean":
        return text == "true" if text in ("true", "false") else text
    if type_name == "char":
        # bfcl's pattern for a character literal can never match: the text is kept as it is (§4.2)
        return text
    if type_name == "ArrayList":
        return _java_array_list(text, item_type)
    if type_name == "Array":
        return _java_array(text, item_type)
    if type_name == "HashMap":
        return _java_hash_map(text)
    if type_name in ("String", "any"):
        return text
    raise UnsupportedConversion(f"bfcl does not convert the Java type {type_name!r}")


def _java_element(text: str, item_type: str | None) -> JSONValue:
    if item_type in ("char", "String"):
        return text[1:-1]  # the quotes are cut off, whatever the text is
    return java_value(text, item_type) if item_type else _java_untyped(text)


def _java_array_list(text: str, item_type: str | None) -> JSONValue:
    as_list = re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text)
    if as_list:
        return [_java_element(part.strip(), item_type) for part in as_list.group(1).split(",")]
    with_adds = re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL)
    if with_adds:
        return [_java_element(part.strip(), item_type) for part in re.findall(r"add\((.+?)\)", with_adds.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, item_type: str | None) -> JSONValue:
    initialiser = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not initialiser:
        return text
    parts = [part.strip() for part in initialiser.group(1).split(",") if part.strip()]
    if item_type:
        return [java_value(part, item_type) for part in parts]
    return [_java_untyped(part) for part in parts]


def _java_hash_map(text: str) -> JSONValue:
    body = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if body:
        entries: JSONObject = {}
        if body.group(1).strip():
            for key, value in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", body.group(1)):
                entries[key] = _java_untyped(value.strip())
        return entries
    if re.search(r"new\s+HashMap<.*?>\s*\(\)", text):
        return {}
    return text


def _java_untyped(text: str) -> JSONValue:
    """A Java literal read without a declared type: boolean, string, long, float, then int or float."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _python_number(text)


def _python_number(text: str) -> JSONValue:
    """``int(text)``, else ``float(text)``, else the text (Python refuses integers over 4,300 digits quickly)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def js_value(text: str, type_name: str, item_type: str | None = None) -> JSONValue:
    """The value bfcl's checker reads from a JavaScript argument text of type `type_name` (§4.2)."""
    if type_name not in JS_TYPES:
        raise UnsupportedConversion(f"no conversion for the JavaScript type {type_name!r}")
    if type_name == "String":
        quoted = (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'"))
        return text[1:-1] if quoted else text
    if type_name == "integer":
        return int(text) if _INTEGER.match(text) else text
    if type_name == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if type_name == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if type_name == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if type_name == "dict":
        return _js_object(text)
    if type_name == "array":
        return _js_array(text, item_type)
    return text  # any


_JS_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")


def _js_array(text: str, item_type: str | None) -> JSONValue:
    code = text.strip()
    try:
        nested = _js_2d_array_end(code)
        if nested is not None:
            rows: list[JSONValue] = []
            for index, inner in enumerate(re.findall(r"\[(.*?)\]", code[:nested])):
                inner = inner.strip()
                if index == 0 and inner.startswith("["):
                    inner = inner[1:]
                rows.append([_js_untyped(part.strip()) for part in inner.split(",")])
            return rows
        flat = _JS_ARRAY.match(code)
        if not flat:
            return code
        inside = flat.group(1) if flat.group(1) is not None else flat.group(2)
        inside = (inside or "").strip()
        parts = inside.split(",") if inside else []
        if item_type:
            # an element in quotes gets an item type of "String" (it only matters for arrays of arrays)
            return [
                js_value(part.strip(), item_type, "String" if part.strip()[:1] in ("'", '"') else None)
                for part in parts
            ]
        return [_js_untyped(part.strip()) for part in parts]
    except Exception:
        return code  # bfcl falls back to the text on any failure here


def _js_object(text: str) -> JSONValue:
    code = text.strip()
    if code == "{}":
        return {}
    match = re.match(r"\{(.*?)\}", code)
    if not match:
        return code
    entries: JSONObject = {}
    try:
        for key, value in _js_object_entries(match.group(1)):
            key = key.strip().strip("'\"")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                entries[key] = _js_array(value, None)
            elif value.startswith("{") and value.endswith("}"):
                entries[key] = _js_object(value)
            else:
                entries[key] = _js_untyped(value.strip("'\""))
    except Exception:
        return code  # as bfcl does
    return entries


# bfcl reads a two-dimensional array and an object's entries with two patterns that backtrack: the first
# exponentially in the rows of an array that never closes, the second quadratically in a text without a colon.
# The two functions below find what those patterns find (the same match, by the same leftmost-first rules) in
# one pass each; tests/unit/bfcl/test_js_patterns.py holds them to `re` on generated texts (docs/bfcl.md,
# "Scoring time").


def _js_2d_array_end(code: str) -> int | None:
    r"""Where bfcl's two-dimensional array pattern, matched at the start of `code`, ends (None: no match).

    The pattern: `[`, whitespace, then rows, each `[`, the shortest run of anything but a newline, `]`,
    whitespace, the rows after the first each led by `,` and whitespace, as many as can be, then `]`; or the
    same rows in `new Array(` ... `)`. Whitespace is `\s` (any Unicode space): greedy runs that nothing after
    them can begin with, so they never give back. Which `]` ends a row is the one backtracking would settle on:
    the first after which the rest matches."""
    if code.startswith("["):
        opening, close = _skip_space(code, 1), "]"
    elif code.startswith("new"):
        after_new = _skip_space(code, 3)
        if after_new == 3 or not code.startswith("Array(", after_new):
            return None
        opening, close = _skip_space(code, after_new + 6), ")"
    else:
        return None
    if opening >= len(code) or code[opening] != "[":
        return None
    ends = _row_ends(code, close)
    return ends.first_row[opening + 1]


class _RowEnds:
    """For every position of a text, right to left (`_js_2d_array_end`): `rows_then_close[p]`, where the rows
    that may follow at p, then the closing character, end; `first_row[x]`, where the match ends when a row's
    text starts at x and its `]` is the first one after which the rest matches (None: nowhere)."""

    def __init__(self, size: int) -> None:
        self.rows_then_close: list[int | None] = [None] * (size + 1)
        self.first_row: list[int | None] = [None] * (size + 2)


def _row_ends(code: str, close: str) -> _RowEnds:
    size = len(code)
    ends = _RowEnds(size)
    space_end = _space_ends(code)
    for at in range(size - 1, -1, -1):
        char = code[at]
        # a row's text may not cross a newline; it ends at the first `]` after which the rows and the close match
        if char == "\n":
            ends.first_row[at] = None
        elif char == "]" and (after := ends.rows_then_close[space_end[at + 1]]) is not None:
            ends.first_row[at] = after
        else:
            ends.first_row[at] = ends.first_row[at + 1]
        # one more row first (the repeat is greedy), else the close right here
        found: int | None = None
        if char == ",":
            row = space_end[at + 1]
            if row < size and code[row] == "[":
                found = ends.first_row[row + 1]
        if found is None and char == close:
            found = at + 1
        ends.rows_then_close[at] = found
    return ends


def _space_ends(code: str) -> list[int]:
    r"""For each position, the first at or after it that is not whitespace (`\s`, which is `str.isspace`)."""
    ends = list(range(len(code) + 1))
    for at in range(len(code) - 1, -1, -1):
        if code[at].isspace():
            ends[at] = ends[at + 1]
    return ends


def _skip_space(code: str, at: int) -> int:
    while at < len(code) and code[at].isspace():
        at += 1
    return at


def _js_object_entries(body: str) -> list[tuple[str, str]]:
    """The (key, value) texts bfcl's entry pattern finds in an object's body, as `re.findall` finds them.

    The pattern: a key of one or more characters up to a colon, the colon, whitespace, then the value, as short
    as can be: it ends at a comma that has, after it (and any whitespace), more characters and a colon before
    the next comma; else at the end of the body. The body never holds a newline (it lies between `{` and the
    first `}` on its line). The search goes on after each match's end: the comma and the whitespace after it,
    all but the last space when the next key would otherwise begin with its colon."""
    size = len(body)
    next_colon, next_comma, last_colon = [size] * (size + 2), [size] * (size + 2), [-1] * (size + 1)
    for at in range(size - 1, -1, -1):
        next_colon[at] = at if body[at] == ":" else next_colon[at + 1]
        next_comma[at] = at if body[at] == "," else next_comma[at + 1]
    for at in range(1, size + 1):
        last_colon[at] = at - 1 if body[at - 1] == ":" else last_colon[at - 1]
    space_end = _space_ends(body)
    entries: list[tuple[str, str]] = []
    start = 0
    while start < size:
        colon = next_colon[start]
        if colon == size:
            break  # no colon left: no key can begin here or later
        if colon == start:
            start += 1  # a key needs a character before its colon
            continue
        value = space_end[colon + 1]
        end = value
        while end < size:
            if body[end] == ",":
                following = next_comma[end + 1]
                if end + 2 <= size and next_colon[end + 2] < following:
                    break
            end += 1
        entries.append((body[start:colon], body[value:end]))
        if end == size:
            break
        # after the comma, the whitespace the next key need not begin with
        start = min(space_end[end + 1], last_colon[next_comma[end + 1]] - 1)
    return entries


def _js_untyped(text: str) -> JSONValue:
    """A JavaScript literal read without a declared type: boolean, quoted string, then int or float."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    return _python_number(text)
