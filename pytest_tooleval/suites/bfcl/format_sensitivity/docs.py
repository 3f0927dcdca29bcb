"""The function docs of a format-sensitivity system prompt in its three doc formats: JSON, XML and a Python
docstring sketch, character for character as bfcl's `format_function_doc` writes them
(docs/bfcl.md#format-sensitivity).

The XML and Python layouts are bfcl's output format (its tags, indents and field order), reproduced from the
behaviour; a value is written as Python's `str()` (an f-string's) or `repr()` of it, as bfcl writes it.
"""

from __future__ import annotations

import json

from ....json_value import JSONObject, JSONValue
from ...json_ops import as_getter, item
from .configs import DocFormat

_PY_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def function_docs(functions: list[JSONObject], doc_format: DocFormat) -> str:
    """The docs as the system prompt shows them in `doc_format`."""
    if doc_format == "json":
        return json.dumps(functions, indent=4)
    if doc_format == "xml":
        return "\n".join(_xml_function(function) for function in functions)
    return "\n\n".join(part for function in functions for part in (_python_function(function), "\n"))


# ------------------------------------------------------------------------------------------ XML


def _xml_function(function: JSONObject) -> str:
    schema = as_getter(item(function, "parameters"))
    lines = [f'<function name="{function["name"]}">\n', f"  <desc>{function.get('description', '')}</desc>\n",
             "  <params>\n"]
    required = schema.get("required")
    lines += [_xml_param(name, meta, required, 2) for name, meta in as_getter(schema.get("properties", {})).items()]
    lines += ["  </params>\n", "</function>\n"]
    return "".join(lines)


def _xml_param(name: str, meta: JSONValue, required: JSONValue, level: int) -> str:
    meta = as_getter(meta)
    indent = " " * (2 * level)
    kind = meta.get("type", "string")
    description = meta.get("description", "")
    # no required list: every parameter is required
    needed = "true" if required is None or _contains(required, name) else "false"
    if "enum" in meta:
        description = _plus(description, f" Enum values: {meta['enum']}.")
    items = meta.get("items")
    if "items" in meta and _contains(items, "type"):
        kind = f"{kind}[{item(items, 'type')}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{as_getter(meta['additionalProperties']).get('type', 'string')}]"
    attributes = f'name="{name}" type="{kind}" required="{needed}"'
    if "default" in meta:
        attributes += f' default="{meta["default"]!r}"'
    # bfcl joins the attributes with ", " and then drops every comma, the values' own too
    lines = [f"{indent}<param {attributes.replace(',', '')}>\n", f"{indent}  <desc>{description}</desc>\n"]
    if "properties" in meta:
        inner_required = meta.get("required")
        lines.append(f"{indent}  <params>\n")
        lines += [_xml_param(inner, value, inner_required, level + 2)
                  for inner, value in as_getter(meta["properties"]).items()]
        lines.append(f"{indent}  </params>\n")
    lines.append(f"{indent}</param>\n")
    return "".join(lines)


# ------------------------------------------------------------------------------------------ Python


def _python_function(function: JSONObject) -> str:
    lines = [f"# Function: {function['name']}\n", '    """\n', f"    {function.get('description', '')}\n\n"]
    properties = as_getter(as_getter(function.get("parameters", {})).get("properties", {}))
    if properties:
        lines.append("    Args:\n")
        for name, meta in properties.items():
            lines += _python_param(name, meta, 0)
    lines.append('    """\n')
    return "".join(lines)


def _python_param(name: str, meta: JSONValue, depth: int) -> list[str]:
    meta = as_getter(meta)
    description = meta.get("description", "")
    if "enum" in meta:
        description = _plus(description, f" Enum values: {meta['enum']}.")
    default = f", default={meta['default']!r}" if "default" in meta else ""
    lines = [f"{' ' * (8 + 4 * depth)}{name} ({_py_type(meta)}{default}): {description}\n"]
    if "properties" in meta:
        for inner, value in as_getter(meta["properties"]).items():
            lines += _python_param(inner, value, depth + 1)
    return lines


def _py_type(meta: JSONObject) -> str:
    kind = meta.get("type", "string")
    if isinstance(kind, str) and kind in _PY_TYPES:
        return _PY_TYPES[kind]
    if kind in ("array", "list", "tuple") and "items" in meta:
        return f"list[{_py_type(as_getter(meta['items']))}]"
    if kind in ("object", "dict"):
        if "additionalProperties" in meta:
            return f"dict[str, {_py_type(as_getter(meta['additionalProperties']))}]"
        return "dict"
    return str(kind)


# ------------------------------------------------------------------------------------------ values as bfcl writes them


def _plus(text: JSONValue, more: str) -> str:
    """``text += more``: a TypeError for anything but a string."""
    if not isinstance(text, str):
        raise TypeError(f"unsupported operand type(s) for +=: '{type(text).__name__}' and 'str'")
    return text + more


def _contains(container: JSONValue, element: str) -> bool:
    """``element in container`` for an object, a list or a string; a TypeError otherwise."""
    if isinstance(container, (dict, list)):
        return element in container
    if isinstance(container, str):
        return element in container
    raise TypeError(f"argument of type '{type(container).__name__}' is not iterable")
