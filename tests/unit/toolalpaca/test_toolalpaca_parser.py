"""The test_v1 output parser (toolalpaca-gpt4tools §2.4) and the stop cut (§2.3)."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.toolalpaca.parser import (
    STOP_SEQUENCES,
    AgentAction,
    AgentFinish,
    OutputParseError,
    apply_stop,
    parse_output,
)


def test_action_is_parsed_and_its_input_stripped_of_spaces_then_quotes() -> None:
    text = ' Look it up.\nASSISTANT Action: searchReports \nASSISTANT Action Input:  "{"ip": "1.2.3.4"}" '
    assert parse_output(text) == AgentAction("searchReports", '{"ip": "1.2.3.4"}', text)


def test_newlines_after_the_input_are_kept() -> None:
    parsed = parse_output('x\nASSISTANT Action: f\nASSISTANT Action Input: {"a": 1}\n')
    assert isinstance(parsed, AgentAction) and parsed.tool_input == '{"a": 1}\n'


@pytest.mark.parametrize(
    "text",
    [
        "ASSISTANT Action 2: f\nASSISTANT Action 2 Input 2: {}",
        "ASSISTANTAction:f\nASSISTANT  Action\nInput:{}",
        "Thought first.\nASSISTANT Action:f\nASSISTANT Action Input:\n\n{}",
    ],
)
def test_marker_spacing_and_numbering_variants(text: str) -> None:
    parsed = parse_output(text)
    assert isinstance(parsed, AgentAction)
    assert (parsed.tool, parsed.tool_input) == ("f", "{}")


def test_response_wins_over_an_action_and_the_last_marker_counts() -> None:
    text = (
        " Done.\nASSISTANT Action: f\nASSISTANT Action Input: {}\nASSISTANT Response: first\n"
        "ASSISTANT Response:  second answer \n"
    )
    parsed = parse_output(text)
    assert isinstance(parsed, AgentFinish)
    assert parsed.output == "second answer"
    assert parsed.final_thought == "Done.\nASSISTANT Action: f\nASSISTANT Action Input: {}\nASSISTANT Response: first"


@pytest.mark.parametrize(
    "text",
    [
        "I will just answer.",
        "ASSISTANT Action: f",
        "Action: f\nAction Input: {}",
        "ASSISTANT Action: f ASSISTANT Action Input: {}",
    ],
)
def test_unparsable_text_raises_upstreams_message(text: str) -> None:
    with pytest.raises(OutputParseError) as caught:
        parse_output(text)
    assert str(caught.value) == f"Could not parse LLM output: `{text}`"


def test_stop_cuts_at_the_first_observation_marker() -> None:
    assert STOP_SEQUENCES == ("\nASSISTANT Observation:", "\n\tASSISTANT Observation:")
    generated = (
        "go\nASSISTANT Action: f\nASSISTANT Action Input: {}"
        "\n\tASSISTANT Observation: made up\nASSISTANT Observation: x"
    )
    assert apply_stop(generated) == "go\nASSISTANT Action: f\nASSISTANT Action Input: {}"
    assert apply_stop("no stop here") == "no stop here"
