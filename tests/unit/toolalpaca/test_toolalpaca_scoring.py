"""Verdicts per instruction and the Procedure / Response / Overall summary (toolalpaca-gpt4tools §4.4, §4.5)."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.toolalpaca.episode import (
    ITERATION_LIMIT_ERROR,
    Episode,
    Step,
)
from pytest_tooleval.suites.toolalpaca.judge import Judgement, parse_judge_output
from pytest_tooleval.suites.toolalpaca.scoring import summarise, verdict

STEP = Step("f", "{}", " Call f.\nASSISTANT Action: f\nASSISTANT Action Input: {}", "Status Code: 200. Response: {}")


def judged(process: str, response: str) -> Judgement:
    return Judgement(True, process, response, "prompt", f"Process Correctness: {process}")


@pytest.mark.parametrize(
    ("judgement", "valid", "error_type", "process"),
    [
        (judged("Yes", "Yes"), True, "", 1.0),
        (judged("Yes", "No"), False, "response_no", 1.0),
        (judged("Yes", "Uncertain"), False, "response_uncertain", 1.0),
        (judged("No", "Yes"), False, "process_no", 0.0),
        (judged("Uncertain", "Uncertain"), False, "process_uncertain", 0.0),
        (judged("Yes", "Mostly"), False, "judge_unparsed", 1.0),
        (judged("", "Yes"), False, "judge_unparsed", 0.0),
    ],
)
def test_only_yes_and_yes_is_valid(judgement: Judgement, valid: bool, error_type: str, process: float) -> None:
    result = verdict(judgement, Episode("q", "a", "t", (STEP,)))
    assert (result.valid, result.error_type, result.process) == (valid, error_type, process)
    assert result.details["process_correctness"] == judgement.process
    assert result.calls == [{"tool": "f", "input": "{}"}]


def test_verdict_words_are_read_after_the_first_results_heading() -> None:
    text = (
        "## Analysis\nProcess Correctness: No\n## Results \nProcess Correctness: Yes \nFinal Response Correctness: No"
    )
    assert parse_judge_output(text) == ("Yes", "No")
    inline = "Process Correctness: Uncertain, Final Response Correctness: Yes."
    assert parse_judge_output(inline) == ("Uncertain", "Yes")
    assert parse_judge_output("## Results\nProcess Correctness:\nYes") == ("", "")


def test_summary_uses_every_instruction_as_denominator() -> None:
    judgements = [judged("Yes", "Yes")] * 3 + [judged("Yes", "No"), judged("No", "Uncertain"), Judgement(False)]
    summary = summarise(judgements)
    assert summary.to_dict() == {
        "num": 6,
        "error_num": 1,
        "process": {"Yes": 4, "No": 1, "Uncertain": 0},
        "response": {"Yes": 3, "No": 1, "Uncertain": 1},
        "both": 3,
        "procedure": 400 / 6,
        "response_rate": 50.0,
        "overall": 50.0,
    }
    empty = summarise([])
    assert (empty.num, empty.overall_rate) == (0, None)


def test_episode_records_round_trip_in_upstreams_shape() -> None:
    finished = Episode("q", "answer", "thought", (STEP, Step("r", "{}", "", {"retrieved_info": "x"})))
    record = finished.to_record()
    assert list(record) == ["input", "output", "Final Thought", "intermediate_steps"]
    assert Episode.from_record(record) == finished
    stopped = Episode("q", error=ITERATION_LIMIT_ERROR, steps=(STEP,))
    assert stopped.stopped and not finished.stopped and not stopped.judgeable
    assert stopped.to_record() == {"error": ITERATION_LIMIT_ERROR} and Episode.from_record(stopped.to_record()).stopped
    crashed = Episode("q", error="boom", steps=(STEP,))
    assert crashed.to_record() == {"error": "boom"} and not crashed.judgeable
    assert Episode.from_record({"error": "boom"}).error == "boom"
