"""Answers cut at max_tokens (issue 26): each row keeps its finish_reason, the failure text names `length`,
and the totals count the cut answers per role; the score is the one the cut text gets, as upstream's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fake_openai import FakeOpenAI
from mini_acebench import RIGHT, SAMPLES, live_mini_run

CUT = {"special_irrelevant_0", "special_incomplete_0"}  # the two right answers longer than three words


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # a server that stops every answer at three (whitespace) tokens, as one that shortens max_tokens to fit
    # its context does
    with FakeOpenAI(replies=RIGHT, default="no idea", max_answer_tokens=3) as fake:
        yield fake


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_cut_answer_is_named_in_its_row_its_failure_and_the_totals(
    pytester: pytest.Pytester, server: FakeOpenAI, workers: list[str]
) -> None:
    args = live_mini_run(pytester, server.base_url, "fake-model", "sk-cut-0123456789")
    result = pytester.runpytest_subprocess(*args, "--tooleval-markdown=summary.md", *workers)
    result.assert_outcomes(passed=SAMPLES - len(CUT), failed=len(CUT))
    rows = {row["id"]: row for row in json.loads((pytester.path / "report.json").read_text())["samples"]}
    assert {sample for sample, row in rows.items() if row["finish_reason"] == "length"} == CUT
    assert all(
        row["cut"] == {"model": 1} and row["outcome"] == "failed" for sample, row in rows.items() if sample in CUT
    )
    assert all(row["finish_reason"] == "stop" and "cut" not in row for sample, row in rows.items() if sample not in CUT)
    assert rows["special_irrelevant_0"]["output"] == "Due to the"  # scored as it came
    # the failure text says the answer was cut; the totals count it, by role, in the terminal and the Markdown
    result.stdout.fnmatch_lines(
        [
            "acebench en/special_irrelevant_0: *",
            "  finish_reason: length (the answer stopped at max_tokens; scored as it is, as upstream does)",
        ]
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["totals"]["cut"] == {"model": 2}
    result.stdout.fnmatch_lines(
        [f"tooleval totals: {SAMPLES} samples (*), * completion tokens, 2 answers cut at max_tokens (model 2), * s"]
    )
    assert "2 answers cut at max_tokens (model 2)" in (pytester.path / "summary.md").read_text()


def test_a_run_with_no_cut_answer_says_nothing_of_them(pytester: pytest.Pytester, server: FakeOpenAI) -> None:
    server.max_answer_tokens = None
    result = pytester.runpytest_subprocess(*live_mini_run(pytester, server.base_url, "fake-model", "sk-cut-01234567"))
    result.assert_outcomes(passed=SAMPLES)
    assert json.loads((pytester.path / "report.json").read_text())["totals"]["cut"] == {}
    assert "max_tokens" not in result.stdout.str() and "finish_reason" not in result.stdout.str()
