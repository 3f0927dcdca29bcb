"""Turning the argument texts of a Java or JavaScript answer into Python values, as bfcl's checker does (bfcl §4.2).

The Java and JavaScript decoders keep every argument as source text. Before checking it, bfcl converts the text
according to the parameter's declared type, with regular expressions: a text that does not have the expected
shape is kept as a string (and then usually fails the type check). The type names and what they stand for are
bfcl's; the conversions below reproduce its results, quirks included (§4.2 lists them).
"""

from __future__ import annotations

import re
from typing import Any

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


def java_value(text: str, type_name: str, item_type: str | None = None) -> Any:
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


def _java_element(text: str, item_type: str | None) -> Any:
    if item_type in ("char", "String"):
        return text[1:-1]  # the quotes are cut off, whatever the text is
    return java_value(text, item_type) if item_type else _java_untyped(text)


def _java_array_list(text: str, item_type: str | None) -> Any:
    as_list = re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text)
    if as_list:
        return [_java_element(part.strip(), item_type) for part in as_list.group(1).split(",")]
    with_adds = re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL)
    if with_adds:
        return [_java_element(part.strip(), item_type) for part in re.findall(r"add\((.+?)\)", with_adds.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, item_type: str | None) -> Any:
    initialiser = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not initialiser:
        return text
    parts = [part.strip() for part in initialiser.group(1).split(",") if part.strip()]
    if item_type:
        return [java_value(part, item_type) for part in parts]
    return [_java_untyped(part) for part in parts]


def _java_hash_map(text: str) -> Any:
    body = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if body:
        entries: dict[str, Any] = {}
        if body.group(1).strip():
            for key, value in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", body.group(1)):
                entries[key] = _java_untyped(value.strip())
        return entries
    if re.search(r"new\s+HashMap<.*?>\s*\(\)", text):
        return {}
    return text


def _java_untyped(text: str) -> Any:
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


def _python_number(text: str) -> Any:
    """``int(text)``, else ``float(text)``, else the text (Python refuses integers over 4,300 digits quickly)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def js_value(text: str, type_name: str, item_type: str | None = None) -> Any:
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


_JS_2D_ARRAY = re.compile(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
_JS_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")


def _js_array(text: str, item_type: str | None) -> Any:
    code = text.strip()
    try:
        nested = _JS_2D_ARRAY.match(code)
        if nested:
            rows = []
            for index, inner in enumerate(re.findall(r"\[(.*?)\]", nested.group(0))):
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


def _js_object(text: str) -> Any:
    code = text.strip()
    if code == "{}":
        return {}
    match = re.match(r"\{(.*?)\}", code)
    if not match:
        return code
    entries: dict[str, Any] = {}
    try:
        for key, value in re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", match.group(1)):
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


def _js_untyped(text: str) -> Any:
    """A JavaScript literal read without a declared type: boolean, quoted string, then int or float."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    return _python_number(text)
