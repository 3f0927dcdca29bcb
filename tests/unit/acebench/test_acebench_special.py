"""The special checker (acebench-scoring §5) and its oracle rendering."""

from __future__ import annotations

import pytest

from json_narrow import as_list
from pytest_tooleval.suites.acebench.scoring import render_ground_truth, score_special
from pytest_tooleval.suites.acebench.special import special_checker

PADDED = {"RealEstateManager_manageProperty": ["propertyDetails ", " rentalManagement ", " maintenanceScheduling"]}
PLAN = {"plan_id": ["1234WrongID"]}
TWO_KEYS = {"device_id": ["ABC123"], "compare_with": ["XYZ@4321"]}  # en special_error_param_6
IRRELEVANT_GT = "Due to the limitations of the function, I cannot solve this problem."

# (category, output, ground truth, valid, error_type)
EXAMPLES = [
    (
        "special_incomplete",
        "Missing necessary parameters (a) for the api (F)",
        {"F": ["a", "b"]},
        False,
        "error_correction",
    ),
    ("special_incomplete", "Missing necessary parameters (ab) for the api (F)", {"F": ["a", "b"]}, True, ""),
    ("special_incomplete", "missing necessary parameters (a) for the api (F)", {"F": ["a"]}, False, "error_detection"),
    ("special_incomplete", "Missing necessary parameters (a) for the api (G)", {"F": ["a"]}, False, "error_correction"),
    (
        "special_incomplete",
        "Missing necessary parameters (propertyDetails, rentalManagement, maintenanceScheduling) for the api "
        "(RealEstateManager_manageProperty)",
        PADDED,
        False,
        "error_correction",
    ),
    (
        "special_incomplete",
        "Missing necessary parameters (propertyDetails , rentalManagement , maintenanceScheduling) for the api "
        "(RealEstateManager_manageProperty)",
        PADDED,
        True,
        "",
    ),
    ("special_error_param", "There is incorrect value (1234WrongID) for the parameters (xxx)", PLAN, True, ""),
    (
        "special_error_param",
        "There is incorrect value (1234wrongid) for the parameters (plan_id)",
        PLAN,
        False,
        "error_correction",
    ),
    ("special_error_param", "there is incorrect value (1234WrongID)", PLAN, False, "error_detection"),
    ("special_error_param", "There is incorrect value (ABC123)", TWO_KEYS, False, "error_correction"),
    ("special_error_param", "There is incorrect value (10点到16点)", {"时间": ["10点到16点"]}, True, ""),
    ("special_irrelevant", "I cannot help due to the limitations of the functions available", IRRELEVANT_GT, True, ""),
    ("special_irrelevant", "due to The limitations of the function", IRRELEVANT_GT, False, "error_detection"),
    # one answer holding every phrase passes everywhere: inherent to the protocol (§5)
    ("special_irrelevant", "[f(a=1)] the limitations of the function", IRRELEVANT_GT, True, ""),
]


@pytest.mark.parametrize(("category", "output", "gt", "valid", "error_type"), EXAMPLES)
def test_examples(category: str, output: str, gt: object, valid: bool, error_type: str) -> None:
    verdict = score_special(category, gt, output)
    assert (verdict.valid, verdict.error_type, verdict.fixed) == (valid, error_type, valid)


def test_the_last_failing_entry_gives_the_error() -> None:
    result = special_checker("special_error_param", "nothing here", {"a": ["x"], "b": ["y"]})
    assert (result.valid, result.error_type) == (False, "error_detection")
    assert "b" in as_list(result.error)[0]


def test_unknown_category_is_refused() -> None:
    with pytest.raises(ValueError, match="not a special ACEBench category"):
        special_checker("special_other", "x", {})


@pytest.mark.parametrize(
    ("category", "gt", "rendered"),
    [
        ("special_incomplete", {"Api": ["a", "b"]}, '["Missing necessary parameters (a, b) for the api (Api)"]'),
        (
            "special_error_param",
            {"k": ["v"]},
            '["There is incorrect value (v) for the parameters (k) in the conversation history."]',
        ),
        (
            "special_irrelevant",
            IRRELEVANT_GT,
            '["Due to the limitations of the function, I cannot solve this problem."]',
        ),
        (None, IRRELEVANT_GT, '["Due to the limitations of the function, I cannot solve this problem."]'),
    ],
)
def test_render_special(category: str | None, gt: object, rendered: str) -> None:
    assert render_ground_truth(gt, category) == rendered
    assert score_special(category or "special_irrelevant", gt, rendered).valid


def test_render_keeps_padded_values_verbatim() -> None:
    rendered = render_ground_truth(PADDED, "special_incomplete")
    assert "(propertyDetails ,  rentalManagement ,  maintenanceScheduling)" in rendered
    assert score_special("special_incomplete", PADDED, rendered).valid


def test_render_needs_the_category_for_ambiguous_special_answers() -> None:
    with pytest.raises(ValueError, match="category"):
        render_ground_truth({"Api": ["a"]})
