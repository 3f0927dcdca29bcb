"""Per-item GPT4Tools metrics, one upstream rule per test (toolalpaca-gpt4tools §5.4), and the aggregates."""

from __future__ import annotations

import math

import pytest

from pytest_tooleval.suites.gpt4tools.metrics import (
    GroundTruthError,
    ItemMetrics,
    aggregate,
    extract_steps,
    item_metrics,
)

THOUGHT = "Thought: Do I need to use a tool? "


def tool_turn(action: str, args: str, thought: str = "Yes") -> str:
    return f"{THOUGHT}{thought}\nAction: {action}\nAction Input: {args}\nObservation:\n"


def answer_turn(text: str, thought: str = "No") -> str:
    return f"{THOUGHT}{thought}\nAI: {text}\n"


def values(m: ItemMetrics) -> tuple[float, float, float, float, float]:
    return (m.thought, m.action, m.args, m.sr, m.iou)


SEGMENT = tool_turn("Segment the Image", "image/abcdefgh.png")
DETECT = tool_turn("Detect the Give Object", "image/abcdefgh.png, the red car")


def test_extraction_reads_each_marker_to_the_end_of_its_line() -> None:
    steps = extract_steps(DETECT + "  Action:   Other Tool  \n")
    assert steps.thoughts == ("Yes",)
    assert steps.actions == ("Detect the Give Object", "Other Tool")  # "Action Input:" is not an action
    assert steps.args == ("image/abcdefgh.png, the red car",)


def test_an_exact_tool_step_passes() -> None:
    assert values(item_metrics(SEGMENT, SEGMENT)) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_any_png_path_matches_a_png_argument() -> None:
    m = item_metrics(SEGMENT, tool_turn("Segment the Image", "cache/zzzzzzzz.png"))
    assert (m.args, m.sr) == (1.0, 1.0)


def test_a_missing_png_fails_the_args_of_the_step() -> None:
    m = item_metrics(DETECT, tool_turn("Detect the Give Object", "the image, the red car"))
    assert values(m)[:4] == (1.0, 1.0, 0.0, 0.0)


def test_a_different_number_of_comma_pieces_scores_zero() -> None:
    gt = tool_turn("Replace Something From The Photo", "image/abcdefgh.png, cats, dogs")
    m = item_metrics(gt, tool_turn("Replace Something From The Photo", "image/abcdefgh.png, cats and dogs"))
    assert (m.args, m.sr) == (0.0, 0.0)


def test_args_of_exactly_one_half_pass() -> None:
    # The png piece scores 1 and the empty text piece 0, so the step scores exactly 0.5.
    gt = tool_turn("Detect the Give Object", "image/abcdefgh.png, dog")
    m = item_metrics(gt, tool_turn("Detect the Give Object", "image/zzzzzzzz.png,"))
    assert m.args == 0.5
    assert m.sr == 1.0


@pytest.mark.parametrize(
    ("pred_text", "sr"),
    [("the blue car", 1.0), ("car", 0.0)],  # BLEU-1 about 0.667, then about 0.135 (brevity penalty)
)
def test_text_args_are_scored_by_bleu1_against_the_half_threshold(pred_text: str, sr: float) -> None:
    gt = tool_turn("Detect the Give Object", "the red car")
    assert item_metrics(gt, tool_turn("Detect the Give Object", pred_text)).sr == sr


def test_thought_is_exact_and_case_sensitive() -> None:
    m = item_metrics(DETECT, tool_turn("Detect the Give Object", "image/abcdefgh.png, the red car", "yes"))
    assert (m.thought, m.action, m.sr) == (0.0, 1.0, 0.0)
    assert m.iou == pytest.approx(2 / 3)


def test_a_trailing_no_after_the_tool_step_is_forgiven() -> None:
    m = item_metrics(SEGMENT, SEGMENT + f"{THOUGHT}No\nAI: done\n")
    assert values(m) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_a_trailing_yes_is_not_forgiven() -> None:
    m = item_metrics(SEGMENT, SEGMENT + f"{THOUGHT}Yes\n")
    assert (m.thought, m.sr, m.iou) == (0.5, 0.0, 1.0)


def test_an_extra_step_halves_the_rates_but_not_iou() -> None:
    m = item_metrics(SEGMENT, SEGMENT + DETECT)
    assert values(m) == (0.5, 0.5, 0.5, 0.0, 1.0)


def test_a_missing_step_lowers_iou() -> None:
    gt = SEGMENT + DETECT
    m = item_metrics(gt, SEGMENT)
    assert values(m) == (0.5, 0.5, 0.5, 0.0, 0.5)


def test_ground_truth_thoughts_are_cut_to_the_number_of_actions() -> None:
    m = item_metrics(SEGMENT + f"{THOUGHT}No\n", SEGMENT)
    assert values(m) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_no_thoughts_on_either_side_give_nan_which_does_not_fail() -> None:
    gt = "Action: Segment the Image\nAction Input: image/abcdefgh.png\n"
    m = item_metrics(gt, gt)
    assert math.isnan(m.thought)
    assert (m.action, m.args, m.sr, m.iou) == (1.0, 1.0, 1.0, 1.0)


def test_thoughts_compare_like_numpy_strings_ignoring_trailing_nuls() -> None:
    m = item_metrics(SEGMENT, SEGMENT.replace("Yes", "Yes\x00"))
    assert m.thought == 1.0
    assert item_metrics(SEGMENT, SEGMENT.replace("Yes", "Y\x00es")).thought == 0.0


def test_unpaired_ground_truth_is_an_error() -> None:
    with pytest.raises(GroundTruthError, match="1 'Action:' lines but 2 'Action Input:'"):
        item_metrics(SEGMENT + "Action Input: again\n", SEGMENT)


NO_TOOL = answer_turn("The image shows a dog.")


def test_an_exact_no_tool_answer_passes() -> None:
    m = item_metrics(NO_TOOL, NO_TOOL)
    assert values(m) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not m.uses_tool


def test_the_no_tool_answer_text_is_never_scored() -> None:
    assert item_metrics(NO_TOOL, answer_turn("Something else entirely.")).sr == 1.0


def test_a_no_tool_answer_without_ai_prefix_fails_but_keeps_iou() -> None:
    m = item_metrics(NO_TOOL, f"{THOUGHT}No\nAnswer: a dog\n")
    assert values(m) == (0.0, 0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    ("prediction", "iou"),
    [(SEGMENT, 0.0), ("", 0.0), ("AI: a dog", 0.0)],
)
def test_a_no_tool_answer_must_start_with_no(prediction: str, iou: float) -> None:
    assert values(item_metrics(NO_TOOL, prediction)) == (0.0, 0.0, 0.0, 0.0, iou)


def test_a_trailing_no_is_not_forgiven_in_a_no_tool_answer() -> None:
    m = item_metrics(NO_TOOL, NO_TOOL + answer_turn("done"))
    assert values(m) == (0.5, 0.0, 0.0, 0.0, 1.0)


def test_any_ground_truth_with_both_markers_is_a_tool_step() -> None:
    gt = answer_turn("Write 'Action: x' then 'Action Input: y'.")
    assert item_metrics(gt, gt).uses_tool


def test_aggregate_gives_overall_tool_and_no_tool_means() -> None:
    items = [
        item_metrics(SEGMENT, SEGMENT),  # tool, passes
        item_metrics(SEGMENT, tool_turn("Other Tool", "image/abcdefgh.png")),  # tool, wrong action
        item_metrics(NO_TOOL, NO_TOOL),  # no-tool, passes
        item_metrics(NO_TOOL, f"{THOUGHT}No\n"),  # no-tool, no "AI: "
    ]
    summary = aggregate(items)
    table = {name: (m.n, m.thought, m.action, m.args, m.sr, m.iou) for name, m in summary.rows()}
    assert table == {
        "overall": (4, 0.75, 0.5, 0.75, 0.5, pytest.approx((1 + 2 / 3 + 1 + 1) / 4)),
        "tool": (2, 1.0, 0.5, 1.0, 0.5, pytest.approx((1 + 2 / 3) / 2)),
        "no_tool": (2, 0.5, 0.5, 0.5, 0.5, 1.0),
    }


def test_an_empty_group_has_nan_means() -> None:
    summary = aggregate([item_metrics(SEGMENT, SEGMENT)])
    assert summary.no_tool.n == 0
    assert math.isnan(summary.no_tool.sr)
    assert summary.tool.sr == summary.overall.sr == 1.0
