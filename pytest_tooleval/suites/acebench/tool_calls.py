"""Native function calls (--tooleval-mode fc) as the ACEBench scorers and executors take them.

A model in function-calling mode answers with `tool_calls`: a name and JSON arguments each. `decoded_calls`
turns them into the call list the text protocol's decoders produce (``[{name: {keyword: value}}]``), so the
official and fixed checkers score them unchanged; `render_calls` writes a call list in the text protocol's
own form, which the agent executors run, process accuracy compares and reports show. The JSON values need no
decoding quirks: the whitespace deletion of the official text decoder (acebench-scoring §3.1) does not arise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .decode import DecodedCall

__all__ = ["ToolCallFormatError", "decoded_calls", "render_calls", "written_calls"]

#: Characters of a malformed argument text kept in the error (the whole text stays in the report's output).
_SHOWN = 200


class ToolCallFormatError(ValueError):
    """A tool call whose arguments are not a JSON object: the answer's format is wrong (wrong_output_format)."""


def decoded_calls(tool_calls: Sequence[Mapping[str, object]],
                  names: Mapping[str, str] | None = None) -> list[DecodedCall]:
    """`tool_calls` (``{"name", "arguments"}`` each, arguments as the model wrote them) as decoded calls.

    Args:
        names: tool name -> the benchmark's function name, for names that had to change to be valid tool
            names; other names are kept as the model wrote them (an unknown one is the checker's to judge).

    Raises:
        ToolCallFormatError: arguments that are not valid JSON, or not an object.
    """
    calls: list[DecodedCall] = []
    for position, call in enumerate(tool_calls, 1):
        name = str(call.get("name", ""))
        name = (names or {}).get(name, name)
        raw = call.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting, a format error all the same
            problem = f"the arguments are not JSON ({type(exc).__name__})"
            raise ToolCallFormatError(f"tool call {position} ({name}): {problem}: {str(raw)[:_SHOWN]!r}") from None
        if not isinstance(arguments, dict):
            raise ToolCallFormatError(
                f"tool call {position} ({name}): the arguments are a JSON {type(arguments).__name__}, not an object"
            )
        calls.append({name: dict(arguments)})
    return calls


def written_calls(tool_calls: Sequence[Mapping[str, object]],
                  names: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """`tool_calls` as one text, and whether they read as calls: rendered (`render_calls`), or, when some
    arguments are not a JSON object, each call's name and raw arguments, ``[name(<arguments as written>)]``."""
    try:
        return render_calls(decoded_calls(tool_calls, names)), True
    except ToolCallFormatError:
        shown = ", ".join(f"{(names or {}).get(str(call.get('name')), call.get('name'))}({call.get('arguments')})"
                          for call in tool_calls)
        return f"[{shown}]", False


def render_calls(calls: Sequence[Mapping[str, Mapping[str | None, object] | Mapping[str, object]]]) -> str:
    """A call list in the text protocol, ``[name(key=value, ...), ...]``, values as Python literals."""
    return "[" + ", ".join(
        f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
        for call in calls for name, arguments in call.items()
    ) + "]"
