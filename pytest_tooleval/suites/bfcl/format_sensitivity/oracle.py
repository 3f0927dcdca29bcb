"""What a perfect model answers to a format-sensitivity entry: the single-turn oracle's calls (oracle.py) written
in the entry's return format, inside the tool-call tag when the configuration asks for it
(docs/bfcl.md#format-sensitivity).

Each value is written so that bfcl's decoder reads it back as it is: JSON values in JSON; in XML a string as
text, a number, boolean or None by its declared type, a list or dict as its Python literal (type "array" or
"dict", which bfcl reads with `ast.literal_eval`). A concise-XML string with surrounding white space, which the
text would lose, is written as a Python literal as well.
"""

from __future__ import annotations

import json

from ..decode import decode_python_calls
from ..oracle import oracle_output as single_turn_oracle
from .configs import Config
from .decode import TAG_CLOSE, TAG_OPEN, XML_CLOSE, XML_OPEN
from .entries import Entry

_ATTRIBUTE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;",
                                    "\r": "&#13;", "\t": "&#9;"})
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})


def oracle_output(entry: Entry) -> str | None:
    """The oracle's answer to `entry`, or None where the single-turn oracle has none."""
    python = single_turn_oracle(entry.sample, "prompt")
    if not isinstance(python, str):
        return None
    body = python if entry.config.return_format == "python" else render(decode_python_calls(python), entry.config)
    return f"{TAG_OPEN}{body}{TAG_CLOSE}" if entry.config.tool_call_tag else body


def render(calls: list[dict[str, dict[str | None, object]]], config: Config) -> str:
    """`calls` in `config`'s JSON or XML return format (not the tag)."""
    pairs = [(name, arguments) for call in calls for name, arguments in call.items()]
    if config.return_format == "json":
        return json.dumps([{"function": name, "parameters": arguments} for name, arguments in pairs],
                          ensure_ascii=False)
    verbose = config.return_format == "verbose_xml"
    functions = []
    for name, arguments in pairs:
        params = []
        for key, value in arguments.items():
            kind, text = _typed_text(value, concise=not verbose)
            attribute = _attribute(str(key))
            if verbose:
                params.append(f'<param name="{attribute}" value="{_attribute(text)}" type="{kind}"/>')
            else:
                params.append(f'<param name="{attribute}" type="{kind}">{text.translate(_TEXT_ESCAPES)}</param>')
        inner = f"<params>{''.join(params)}</params>" if verbose else "".join(params)
        functions.append(f'<function name="{_attribute(name)}">{inner}</function>')
    return f"{XML_OPEN}{''.join(functions)}{XML_CLOSE}"


def _typed_text(value: object, *, concise: bool) -> tuple[str, str]:
    """(declared type, text) of one XML value."""
    if isinstance(value, bool):
        return "boolean", "true" if value else "false"
    if isinstance(value, int):
        return "integer", str(value)
    if isinstance(value, float):
        return "float", repr(value)
    if value is None:
        return "null", ""
    if isinstance(value, str) and not (concise and value != value.strip()):
        return "string", value
    return ("dict" if isinstance(value, dict) else "array"), repr(value)


def _attribute(text: str) -> str:
    return text.translate(_ATTRIBUTE_ESCAPES)
