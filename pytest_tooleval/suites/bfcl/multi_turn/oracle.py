"""The ground truth as a model's answers: the oracle of the multi-turn categories (docs/bfcl-multi-turn.md#in-a-run).

Each turn with ground truth is answered in one step holding all its calls; a turn without ground truth gets no
step. Positional ground-truth arguments are written as keywords by signature (the prompt decoder drops
positional arguments, bfcl-multiturn §1.4, so verbatim ground truth would fail 96 samples there).
"""

from __future__ import annotations

import ast
import json

from .... import python_ast
from ....json_value import JSONValue
from .apis.registry import class_of, parameter_names
from .sample import MultiTurnSample


def keyword_calls(sample: MultiTurnSample, calls: list[str]) -> list[tuple[str, dict[str, object]]]:
    """Ground-truth call strings as (method, {parameter: value}), positional arguments named by signature.

    Raises:
        ValueError: a string that is not one call of a known method with literal arguments (the data is not
            bfcl-eval's).
    """
    named = []
    for text in calls:
        node = python_ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError(f"{sample.id}: ground truth {text!r} is not a call of a method by name")
        method = node.func.id
        owner = class_of(method, sample.involved_classes)
        if owner is None:
            raise ValueError(f"{sample.id}: ground truth {text!r} calls no method of {sample.involved_classes}")
        names = parameter_names(owner, method)
        if len(node.args) > len(names):
            raise ValueError(f"{sample.id}: ground truth {text!r} has more arguments than {method} takes")
        arguments = dict(zip(names, (ast.literal_eval(arg) for arg in node.args), strict=False))
        arguments.update({str(keyword.arg): ast.literal_eval(keyword.value) for keyword in node.keywords})
        named.append((method, arguments))
    return named


def oracle_result(sample: MultiTurnSample, mode: str) -> list[JSONValue]:
    """The result entry a model answering with the ground truth leaves: per turn, its raw steps (FC: a list
    of `{name: arguments JSON}`; prompt: the text of a Python list of calls)."""
    turns: list[JSONValue] = []
    for calls in sample.ground_truth:
        if not calls:
            turns.append([])
            continue
        named = keyword_calls(sample, calls)
        if mode == "fc":
            turns.append([[{method: json.dumps(arguments)} for method, arguments in named]])
        else:
            rendered = (f"{method}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
                        for method, arguments in named)
            turns.append([f"[{', '.join(rendered)}]"])
    return turns
