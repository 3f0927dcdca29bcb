"""A sample whose reply was malformed every time (errors.MalformedReply) is a failing row, made the same way in
every suite (outcome.malformed_result): every suite's summariser counts it as scored and failed, and a shard's
check takes the row."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_tooleval.outcome import Answer, malformed_result
from pytest_tooleval.report.shard_check import check_rows
from pytest_tooleval.suites import plugin
from pytest_tooleval.transport import result_payload

# a category of each suite, the size its summariser knows it by, and a figure the row makes
CATEGORIES = {
    "acebench": ("agent_multi_step", 50, "en.agent_multi_step"),
    "bfcl": ("simple_python", 400, "simple_python.accuracy"),
    "toolalpaca": ("simulated", 10, "simulated.overall"),
    "gpt4tools": ("tool", 10, "tool.sr"),
    "yaml": ("weather", 1, "weather.accuracy"),
}


def malformed_row(suite: str) -> dict[str, Any]:
    category, size, _ = CATEGORIES[suite]
    case = SimpleNamespace(
        suite=suite,
        id=f"{category}_0",
        category=category,
        language="en",
        index=0,
        test_id=f"{suite}-{category}_0",
        variant="",
        revision="",
        data_unverified=False,
        repeat=1,
    )
    answer = Answer(None, latency_s=1.5, tokens={"prompt": 12}, malformed="tool_calls[0] has no function name")
    return result_payload(case, size, malformed_result(answer), "official")


def test_the_row_is_a_failure_saying_what_was_wrong() -> None:
    row = malformed_row("bfcl")
    assert (row["outcome"], row["valid"], row.get("fixed_valid"), row["error_type"], row["error"]) == (
        "failed",
        False,
        None,
        "malformed_reply",
        "malformed reply: tool_calls[0] has no function name",
    )
    assert (row["output"], row["latency_s"], row["tokens"], row["process"]) == (None, 1.5, {"prompt": 12}, None)


@pytest.mark.parametrize("suite", CATEGORIES)
def test_every_suite_counts_it_scored_and_failed(suite: str) -> None:
    row = malformed_row(suite)
    check_rows("report.json", [row])  # a shard's report holding it is not refused
    summary = plugin(suite).figures.summarize([row])
    assert {key: summary.counts[key] for key in ("total", "scored", "failed", "errors", "malformed_replies")} == {
        "total": 1,
        "scored": 1,
        "failed": 1,
        "errors": 0,
        "malformed_replies": 1,
    }
    assert summary.figures[CATEGORIES[suite][2]] == 0.0  # in the denominator, as a wrong answer
