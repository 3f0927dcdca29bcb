"""End-state grading and process accuracy (acebench-scoring §7.2-§7.3, acebench-agent §8, §9.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _agent_data import samples

from pytest_tooleval.suites.acebench.agent import grade, process_accuracy
from pytest_tooleval.suites.acebench.agent.grading import milestone_score

BASE_OK = {"BaseApi": {"wifi": True, "logged_in": True}}
FOOD_GT = {
    "FoodPlatform": {
        "users": {"Eve": {"balance": 412.0}, "Jack": {"balance": 120.0}},
        "logged_in_users": ["Eve"],
        "orders": [],
    }
}


def answer(*gt: dict[str, Any], mile_stone: list[str] | None = None) -> dict[str, Any]:
    return {"ground_truth": list(gt), "mile_stone": mile_stone or ["[a()]"]}


def test_equal_state_passes() -> None:
    verdict = grade(answer(BASE_OK, FOOD_GT), [BASE_OK, FOOD_GT], [])
    assert verdict.valid and verdict.error_type == "" and verdict.process == 1.0


def test_wrong_number_of_classes() -> None:
    verdict = grade(answer(BASE_OK, FOOD_GT), [], ["[a()]"])
    assert (verdict.valid, verdict.error_type, verdict.error) == (False, "wrong number of class", [])
    assert verdict.process == 1.0  # the one milestone was still hit


def test_dict_attributes_are_subset_checked() -> None:
    state: dict[str, dict[str, Any]] = {
        "FoodPlatform": {
            "users": {"Eve": {"balance": 412.0}, "Jack": {"balance": 120.0}, "Zed": {"balance": 1.0}},
            "logged_in_users": ["Eve"],
            "orders": [],
        }
    }
    assert grade(answer(FOOD_GT), [state], []).valid  # the extra user is not graded
    del state["FoodPlatform"]["users"]["Jack"]
    verdict = grade(answer(FOOD_GT), [state], [])
    assert not verdict.valid and verdict.error_type == "class attributes wrong"
    assert isinstance(verdict.error, list)
    assert verdict.error[0][0].startswith("class(FoodPlatform) attributes(users) wrong, [expected:")
    state_diff = verdict.details["state_diff"]
    assert isinstance(state_diff, list)
    assert any("'Jack'" in line and "missing" in line for line in state_diff)


def test_lists_and_scalars_are_compared_exactly() -> None:
    state = {"FoodPlatform": {**FOOD_GT["FoodPlatform"], "logged_in_users": ["Eve", "Jack"]}}
    verdict = grade(answer(FOOD_GT), [state], [])
    assert verdict.error == [
        ["class(FoodPlatform) attributes(logged_in_users) wrong, [expected: ['Eve'], real: ['Eve', 'Jack']]"]
    ]
    assert grade(answer({"BaseApi": {"wifi": 1, "logged_in": True}}), [BASE_OK], []).valid  # 1 == True


def test_unknown_model_attribute_is_missing_in_possible_answer() -> None:
    verdict = grade(answer({"BaseApi": {"wifi": True}}), [BASE_OK], [])
    assert verdict.error == [["class(BaseApi) attributes(logged_in) missing in possible_answer."]]


def test_json_round_trip_before_comparing() -> None:
    gt = {"MessageApi": {"inbox": {"7": {"message": "x"}}}}
    assert grade(answer(gt), [{"MessageApi": {"inbox": {7: {"message": "x"}}}}], []).valid


def test_typo_class_reuses_the_previous_verdict() -> None:
    wrong_base = {"BaseApi": {"wifi": False, "logged_in": True}}
    typo: dict[str, Any] = {"ReminderAPI": {"reminder_list": {}}}
    # First entry unmatched: the initial verdict is valid, so the typo'd class is never checked.
    assert grade(answer(typo, BASE_OK), [{"ReminderApi": {"reminder_list": {}}}, BASE_OK], []).valid
    # After a failing class, an unmatched entry repeats that failure.
    verdict = grade(answer(BASE_OK, typo), [wrong_base, {"ReminderApi": {}}], [])
    assert not verdict.valid and isinstance(verdict.error, list)
    assert len(verdict.error) == 2 and verdict.error[0] == verdict.error[1]
    assert verdict.details["unchecked_classes"] == ["ReminderAPI"]


@pytest.mark.parametrize(
    ("milestones", "process", "score"),
    [
        (["a", "b", "c"], ["x", "a", "y", "b", "c"], 1.0),
        (["a", "b", "c"], ["c", "b", "a"], 1 / 3),
        (["a", "b", "c"], ["x", "a", "y", "c"], 1 / 3),  # b missing: the cursor ran out, c is lost too
        (["[f()] "], [" [f()]\n"], 1.0),  # stripped on both sides
        (["[f( )]"], ["[f()]"], 0.0),  # but inner spacing matters
        (["[f(a='x')]"], ['[f(a="x")]'], 0.0),  # quote style matters
        ([], ["x"], 1.0),
    ],
)
def test_milestone_matching(milestones: list[str], process: list[str], score: float) -> None:
    assert milestone_score(milestones, process) == pytest.approx(score)


def test_alternatives_take_the_best_rounded_score() -> None:
    alternatives = [["a", "b", "c"], ["a", "d"]]
    assert process_accuracy(alternatives, ["a", "d"], False) == 1.0
    assert process_accuracy(alternatives, ["a"], False) == 0.5
    assert process_accuracy(alternatives, ["a", "b"], False) == 0.667  # rounded per alternative
    assert process_accuracy(alternatives, ["b", "c"], False) == 0.0  # no rewind after a missed "a"
    assert process_accuracy([["a", "b", "c"]], ["a"], False) == 0.333
    assert process_accuracy(["a", "b", "c"], ["a"], False) == pytest.approx(1 / 3)  # a flat list is not rounded
    assert process_accuracy(["a", "b", "c"], ["a"], False) != 0.333
    assert process_accuracy(["a"], [], True) == 1.0  # end-to-end correct


def test_worked_example_process_accuracy(acebench_dir: Path) -> None:
    """acebench-agent §9.1: steps 1, 2, 5 and 6 of en multi_step_6 score 0.333 on both alternatives."""
    _, possible = samples(str(acebench_dir), "en", "agent_multi_step")["agent_multi_step_6"]
    process = [
        "[turn_on_wifi()]",
        "[login_food_platform(username='Isaac', password='password654')]",
        "[add_food_delivery_order(username='Isaac', merchant_name='Rice Village Bibimbap', items=[{'product': "
        "'Stone Pot Bibimbap', 'quantity': 1}, {'product': 'Korean Beef Bibimbap', 'quantity': 1}])]",
        "[send_message(sender_name='Isaac', receiver_name='Frank', message='The takeout has been ordered')]",
    ]
    verdict = grade(possible, [], process)
    assert verdict.details["process_alternatives"] == [0.333, 0.333]
    assert verdict.process == 0.333
