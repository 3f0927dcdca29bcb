"""The oracle renderer and JSON-safe values of the per-sample scoring API."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.acebench.scoring import (
    GroundTruth,
    jsonable,
    render_ground_truth,
    score_normal,
)


@pytest.mark.parametrize(
    ("gt", "rendered"),
    [
        ({"f": {"a": "x", "b": 1, "c": True, "d": None}}, "[f(a='x', b=1, c=True, d=None)]"),
        ({"f_1": {"a": [1, "b"]}, "f_2": {"a": {"k": 1.5}}, "g": {}}, "[f(a=[1, 'b']), f(a={'k': 1.5}), g()]"),
        ([{"f": {"a": "first"}}, {"f": {"a": "second"}}], "[f(a='first')]"),
        ({"ai.assistantModelSelector": {"q": "It's"}}, '[ai.assistantModelSelector(q="It\'s")]'),
    ],
)
def test_render_normal(gt: object, rendered: str) -> None:
    assert render_ground_truth(gt) == rendered


def test_rendered_answer_passes_unless_whitespace_is_lost() -> None:
    schema = {"type": "object", "properties": {"o": {"type": "object"}}, "required": ["o"]}
    functions = [{"name": "f", "description": "", "parameters": schema}]
    plain: GroundTruth = {"f": {"o": {"k": ["NY"]}}}
    spaced: GroundTruth = {"f": {"o": {"k": ["New York"]}}}
    assert score_normal(functions, plain, render_ground_truth(plain)).valid
    verdict = score_normal(functions, spaced, render_ground_truth(spaced))
    assert (verdict.valid, verdict.fixed) == (False, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ((1, (2, 3)), [1, [2, 3]]),
        ({None: 1, True: 2, 3: 4, (1, 2): 5, "s": 6}, {"null": 1, "true": 2, "3": 4, "(1, 2)": 5, "s": 6}),
        ({2, 1}, [1, 2]),
        ([float("inf"), b"x", 1j, ...], ["inf", "b'x'", "1j", "Ellipsis"]),
    ],
)
def test_jsonable(value: object, expected: object) -> None:
    assert jsonable(value) == expected
