"""A minimal reader of the multi-turn samples for the executor and checker tests (the real loader is
multi_turn/data.py): the fields the executor and checker read, function docs left out."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path
from typing import Any

from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample


def read_samples(root: Path) -> list[MultiTurnSample]:
    """All 800 samples of the four categories, with their ground truth."""
    samples = []
    for category in CATEGORIES:
        answers = {
            row["id"]: row["ground_truth"] for row in _lines(root / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for index, row in enumerate(_lines(root / f"BFCL_v4_{category}.json")):
            samples.append(
                MultiTurnSample(
                    category=category,
                    index=index,
                    id=row["id"],
                    turns=row["question"],
                    involved_classes=row["involved_classes"],
                    initial_config=row["initial_config"],
                    functions=[],
                    held_out={},
                    ground_truth=answers[row["id"]],
                )
            )
    return samples


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def keyword_call(call: str, methods: dict[str, object]) -> str:
    """A ground-truth call with its positional arguments bound to the parameter names of the method it names
    (`methods`: name -> a bound method), rendered as the FC decoder renders calls: `name(k=repr(v),...)`."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    method = methods[node.func.id]
    assert callable(method)
    names = list(inspect.signature(method).parameters)
    arguments = {names[i]: ast.literal_eval(arg) for i, arg in enumerate(node.args)}
    arguments.update({keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords if keyword.arg})
    return f"{node.func.id}(" + ",".join(f"{key}={value!r}" for key, value in arguments.items()) + ")"
