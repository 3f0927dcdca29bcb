"""The GPT4Tools summary from report rows: the three-way table, gateable figures, NaN, errors, variants."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from pytest_tooleval.report.summary import RunSummary
from pytest_tooleval.report.table import render_summary
from pytest_tooleval.suites.gpt4tools.metrics import item_metrics
from pytest_tooleval.suites.gpt4tools.summary import summarize_gpt4tools

YES, NO = "Thought: Do I need to use a tool? Yes", "Thought: Do I need to use a tool? No"
TOOL_GT = f"{YES}\nAction: Segment the Image\nAction Input: image/abcdefgh.png\nObservation:\n"
NO_TOOL_GT = f"{NO}\nAI: A dog.\n"


def row(
    index: int, gold: str, prediction: str | None, *, sizes: tuple[int, int] = (2, 2), variant: str = "upstream"
) -> dict[str, Any]:
    """A report row as the plugin writes it; prediction None is an errored sample (no metrics)."""
    category = "tool" if "Action Input:" in gold else "no_tool"
    base = {
        "suite": "gpt4tools",
        "id": str(index),
        "index": index,
        "language": "en",
        "category": category,
        "category_size": sizes[0] if category == "tool" else sizes[1],
    }
    if prediction is None:
        return {**base, "outcome": "error", "details": None}
    metrics = item_metrics(gold, prediction)
    numbers = {
        "thought": metrics.thought,
        "action": metrics.action,
        "args": metrics.args,
        "sr": metrics.sr,
        "iou": metrics.iou,
    }
    # as the suite's score() writes them: NaN as null
    details = {
        **{key: None if math.isnan(value) else value for key, value in numbers.items()},
        "uses_tool": metrics.uses_tool,
        "variant": variant,
    }
    # the payload crosses strict JSON on its way from a worker
    payload = {**base, "outcome": "passed" if metrics.passed else "failed", "details": details}
    crossed = json.loads(json.dumps(payload, allow_nan=False))
    assert isinstance(crossed, dict)
    return crossed


WRONG_TOOL = TOOL_GT.replace("Segment the Image", "Answer Question About The Image")


def test_the_three_way_table_and_its_figures() -> None:
    rows = [
        row(0, TOOL_GT, TOOL_GT),
        row(1, TOOL_GT, WRONG_TOOL),
        row(2, NO_TOOL_GT, NO_TOOL_GT),
        row(3, NO_TOOL_GT, f"{NO}\nA dog."),
    ]
    summary = summarize_gpt4tools(rows)
    (table,) = summary.tables
    assert table.title == "GPT4Tools (upstream-compatible)"
    assert table.headers == ["items", "scored/total", "errors", "SR_thought", "SR_act", "SR_args", "SR", "IoU"]
    assert [cells[:3] for cells in table.rows] == [["all", "4/4", 0], ["tool-use", "2/2", 0], ["no-tool", "2/2", 0]]
    assert [cells[3:] for cells in table.rows] == [
        [0.75, 0.5, pytest.approx(0.75), 0.5, pytest.approx((1 + 2 / 3 + 1 + 1) / 4)],
        [1.0, 0.5, pytest.approx(1.0), 0.5, pytest.approx((1 + 2 / 3) / 2)],
        [0.5, 0.5, 0.5, 0.5, 1.0],
    ]
    assert summary.figures["sr"] == 0.5
    assert summary.figures["tool.action"] == 0.5
    assert summary.figures["no_tool.thought"] == 0.5
    assert len(summary.figures) == 15
    assert not summary.partial
    assert summary.counts == {
        "total": 4,
        "scored": 4,
        "passed": 2,
        "failed": 2,
        "errors": 0,
        "context_overflows": 0,
        "malformed_replies": 0,
        "over_time": 0,
    }
    assert summary.data["subsets"]["no_tool"] == {
        "n": 2,
        "total": 2,
        "ran": 2,
        "errors": 0,
        "thought": 0.5,
        "action": 0.5,
        "args": 0.5,
        "sr": 0.5,
        "iou": 1.0,
    }


def test_a_malformed_reply_is_scored_as_an_empty_prediction() -> None:
    """Nothing usable came back (errors.MalformedReply), or scoring passed its time limit: no metrics, yet in N,
    with what upstream gives an empty prediction, 0 everywhere; an errored item stays out of N."""
    malformed = {**row(0, TOOL_GT, ""), "outcome": "failed", "details": {}, "error_type": "malformed_reply"}
    rows = [
        malformed,
        row(1, TOOL_GT, TOOL_GT),
        row(2, NO_TOOL_GT, NO_TOOL_GT),
        {**row(3, NO_TOOL_GT, ""), "outcome": "failed", "details": {}, "error_type": "scoring_time_limit"},
    ]
    empty = summarize_gpt4tools(
        [row(0, TOOL_GT, ""), row(1, TOOL_GT, TOOL_GT), row(2, NO_TOOL_GT, NO_TOOL_GT), row(3, NO_TOOL_GT, "")]
    )
    summary = summarize_gpt4tools(rows)
    assert summary.tables[0].rows == empty.tables[0].rows
    assert summary.figures == empty.figures and summary.figures["sr"] == 0.5
    assert summary.counts["scored"] == 4 and not summary.partial
    assert summary.counts["malformed_replies"] == 1 and summary.counts["over_time"] == 1
    assert summarize_gpt4tools([*rows[1:], row(0, TOOL_GT, None)]).tables[0].rows[0][:3] == ["all", "3/4", 1]


def test_an_empty_subset_renders_as_dashes_and_gives_no_figure() -> None:
    rows = [row(0, TOOL_GT, TOOL_GT, sizes=(1, 0))]
    summary = summarize_gpt4tools(rows)
    text = render_summary(RunSummary({"gpt4tools": summary}))
    assert text.splitlines()[:6] == [
        "GPT4Tools (upstream-compatible)",
        "items     scored/total      errors    SR_thought    SR_act    SR_args     SR    IoU",
        "--------  --------------  --------  ------------  --------  ---------  -----  -----",
        "all       1/1                    0         1.000     1.000      1.000  1.000  1.000",
        "tool-use  1/1                    0         1.000     1.000      1.000  1.000  1.000",
        "no-tool   0/0                    0         -         -          -      -      -",  # none ran
    ]
    assert not any(name.startswith("no_tool") for name in summary.figures)
    assert summary.data["subsets"]["no_tool"]["sr"] is None
    assert "nan" not in text.lower()


def test_a_nan_item_gives_a_nan_mean_kept_out_of_figures_and_json() -> None:
    # a ground truth with an action but no thought line, answered without thoughts: upstream's mean of nothing
    gold = "Action: Segment the Image\nAction Input: image/abcdefgh.png\n"
    assert math.isnan(item_metrics(gold, gold).thought)
    bare = row(0, gold, gold, sizes=(1, 0))
    assert bare["details"]["thought"] is None and bare["outcome"] == "passed"
    summary = summarize_gpt4tools([bare])
    assert "thought" not in summary.figures
    assert summary.figures["sr"] == 1.0
    assert summary.data["subsets"]["all"]["thought"] is None
    json.dumps(summary.data, allow_nan=False)  # strict JSON: NaN never reaches the report's summary


def test_errors_count_per_subset_and_make_the_run_partial() -> None:
    rows = [
        row(0, TOOL_GT, TOOL_GT),
        row(1, TOOL_GT, None),
        row(2, NO_TOOL_GT, NO_TOOL_GT),
        row(3, NO_TOOL_GT, NO_TOOL_GT),
    ]
    summary = summarize_gpt4tools(rows)
    (table,) = summary.tables
    assert [cells[:3] for cells in table.rows] == [["all", "3/4", 1], ["tool-use", "1/2", 1], ["no-tool", "2/2", 0]]
    assert table.title == "GPT4Tools (upstream-compatible): partial run (not every item was scored)"
    assert summary.partial and summary.counts["errors"] == 1
    assert summary.figures["sr"] == 1.0  # N counts scored items only, as upstream's matched predictions


def test_a_run_of_part_of_the_test_set_counts_scored_of_what_ran() -> None:
    """-k or --tooleval-sample: scored/total is of the items that ran, as every suite's table (issue 41); the run is
    partial, and the report keeps the test set's size as `total`."""
    summary = summarize_gpt4tools([row(0, TOOL_GT, TOOL_GT), row(2, NO_TOOL_GT, NO_TOOL_GT, sizes=(2, 3))])
    (table,) = summary.tables
    assert [cells[:3] for cells in table.rows] == [["all", "2/2", 0], ["tool-use", "1/1", 0], ["no-tool", "1/1", 0]]
    assert summary.partial
    assert {key: (value["n"], value["ran"], value["total"]) for key, value in summary.data["subsets"].items()} == {
        "all": (2, 2, 5),
        "tool": (1, 1, 2),
        "no_tool": (1, 1, 3),
    }


def test_the_stop_variant_is_labelled() -> None:
    summary = summarize_gpt4tools([row(0, TOOL_GT, TOOL_GT, variant="stop-at-observation")])
    assert summary.tables[0].title.startswith("GPT4Tools (variant: stop at 'Observation:', not upstream-compatible)")
    assert (summary.data["variant"], summary.data["upstream_compatible"]) == ("stop-at-observation", False)
