"""What a perfect model answers: a sample's first possible answer, written as bfcl records answers (bfcl §3).

The oracle is a self-check of the scorer. It takes, for every parameter, the first acceptable value and leaves
out a parameter whose first acceptable value is `""` (optional, bfcl §4.4); a nested dict takes the first
acceptable value of each of its keys the same way. Where bfcl's checker rejects that rendering (the ceiling,
measured in docs/bfcl.md), the sample fails under the oracle, as it would for a model writing the same call.
"""

from __future__ import annotations

import json
from typing import Any

from .data import Sample

#: what the oracle says to a question no function fits (bfcl §5): words, which decode to no call
NO_CALL_TEXT = "None of the given functions fits this request."


def oracle_output(sample: Sample, mode: str) -> Any:
    """The oracle's answer in `mode` ("prompt": text; "fc": `[{name: arguments JSON}]`), or None if the
    possible answers hold something it cannot write."""
    calls: list[tuple[str, dict[str, Any]]] = []
    if sample.ground_truth is None:  # the relevance categories
        if "irrelevance" in sample.category:
            return NO_CALL_TEXT
        calls.append((str(sample.functions[0]["name"]), {}))
    else:
        for call in sample.ground_truth:
            if len(call) != 1:
                return None
            ((name, parameters),) = call.items()
            if not isinstance(parameters, dict):
                return None
            calls.append((str(name), _first_values(parameters)))
    if mode == "fc":
        return [{name.replace(".", "_"): json.dumps(arguments, ensure_ascii=False)} for name, arguments in calls]
    return "[" + ", ".join(f"{name}({_arguments(arguments)})" for name, arguments in calls) + "]"


def _first_values(parameters: dict[str, Any]) -> dict[str, Any]:
    chosen: dict[str, Any] = {}
    for key, acceptable in parameters.items():
        value = acceptable[0] if isinstance(acceptable, list) and acceptable else acceptable
        if value == "":  # optional: leave it out (bfcl §4.4)
            continue
        chosen[key] = _first_values(value) if isinstance(value, dict) else value
    return chosen


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_literal(value)}" for key, value in arguments.items())


def _literal(value: Any) -> str:
    """A Python literal for a JSON value: repr writes str, bool, int, float, None, list and dict as Python
    reads them back."""
    return repr(value)
