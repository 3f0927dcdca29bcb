"""score_item's Verdict and prompt stripping."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.gpt4tools.data import Case
from pytest_tooleval.suites.gpt4tools.scoring import prediction_text, score_item

THOUGHT = "Thought: Do I need to use a tool? "
TOOL = f"{THOUGHT}Yes\nAction: Segment the Image\nAction Input: image/abcdefgh.png\nObservation:\n"
ANSWER = f"{THOUGHT}No\nAI: A dog.\n"


def case(item_id: int, output: str) -> Case:
    return Case(id=item_id, instruction=f"Prompt {item_id}.\nLet's think step by step.\n", input="", output=output)


def test_a_passing_item_is_valid_with_upstream_numbers_in_details() -> None:
    verdict = score_item(case(1, TOOL), "\n" + TOOL + "  ")
    assert verdict.valid
    assert (verdict.error_type, verdict.error) == ("", None)
    assert verdict.details == {"thought": 1.0, "action": 1.0, "args": 1.0, "sr": 1.0, "iou": 1.0, "uses_tool": True}
    assert verdict.calls == {"thoughts": ["Yes"], "actions": ["Segment the Image"], "args": ["image/abcdefgh.png"]}


def test_a_failing_item_names_the_checks_it_failed_in_upstream_order() -> None:
    prediction = f"{THOUGHT}No\nAction: Other\nAction Input: image/abcdefgh.png\n"
    verdict = score_item(case(1, TOOL), prediction)
    assert not verdict.valid
    assert verdict.error_type == "thought"
    assert verdict.error == ["thought", "action"]
    assert verdict.details["sr"] == 0.0


def test_a_failing_no_tool_item_fails_on_thought() -> None:
    verdict = score_item(case(2, ANSWER), f"{THOUGHT}No\nA dog.")
    assert (verdict.valid, verdict.error_type, verdict.details["iou"]) == (False, "thought", 1.0)


def test_a_raw_record_is_validated() -> None:
    record = {"id": 7, "instruction": "p", "input": "", "output": ANSWER}
    assert score_item(record, ANSWER).valid
    with pytest.raises(ValueError, match="output"):
        score_item({"id": 7, "instruction": "p", "input": ""}, ANSWER)


def test_local_outputs_lose_exactly_len_instruction_characters() -> None:
    assert prediction_text("PROMPT" + "  answer \n", "PROMPT") == "answer"
    # A decode that came back one character short loses the first character of the answer.
    assert prediction_text("PROMPTanswer", "PROMPT!") == "nswer"
    assert prediction_text(["PROMPT first", "PROMPT second"], "PROMPT") == "first"


def test_gpt_outputs_are_only_stripped() -> None:
    assert prediction_text(" " + ANSWER, "PROMPT", strip_prompt=False) == ANSWER.strip()
