"""A failing multi-turn sample as a user sees it (docs/bfcl-multi-turn.md#the-failure-view): a model played
through the real openai client against the local fake makes a folder of the wrong name in the first turn; the
terminal, the JSON report and the HTML page's flip table show the turn, its calls and the state difference."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest

from fake_openai import FakeOpenAI, ToolCalls

KEY = "sk-test-0123456789abcdef"
SAMPLE = "test_bfcl.py::test_bfcl[multi_turn_base_0-fc]"
WRONG = (
    ("cd", {"folder": "document"}),
    ("mkdir", {"dir_name": "tmp"}),
    ("mv", {"source": "final_report.pdf", "destination": "tmp"}),
)
CALLS = ["cd(folder='document')", "mkdir(dir_name='tmp')", "mv(source='final_report.pdf',destination='tmp')"]


def wrong_folder(body: dict[str, Any]) -> ToolCalls | str:
    """Calls for each new request of the user, and words (which end the turn) once they have run."""
    return "Done." if body["messages"][-1]["role"] == "tool" else ToolCalls.of(*WRONG)


def test_a_failing_sample_shows_its_turn_state_difference_and_calls(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    common = [SAMPLE, *bfcl_args, "--tooleval-bfcl-categories=multi_turn_base", "--tooleval-mode=fc"]
    pytester.runpytest(*common, "--tooleval-model=oracle", "--tooleval-report=baseline.json").assert_outcomes(passed=1)
    fake_openai.responder = wrong_folder
    result = pytester.runpytest(
        *common,
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
        "--tooleval-baseline=baseline.json",
        "--tooleval-report=report.json",
        "--tooleval-html=report.html",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "bfcl multi_turn_base_0: multi_turn:instance_state_mismatch (scorer: official)",
            '  error:    [[]"Model instance for GorillaFileSystem does not match the state with ground truth '
            'instance.", '
            "\"GorillaFileSystem.root/document/temp: expected {'name': 'temp', *}, actual (absent)\", "
            "\"GorillaFileSystem.root/document/tmp: expected (absent), actual {'name': 'tmp', *}\"]",
            f"  decoded:  {json.dumps(CALLS).replace('[', '[[]')}",
            "  mode: fc",
            "  category: multi_turn_base",
            "  turn: 1",
            "  turns: 4",
            "  request: Move 'final_report.pdf' within document directory to 'temp' directory in document.*",
            "  ground_truth: [[]\"cd(folder='document')\", \"mkdir(dir_name='temp')\", *]",
        ]
    )
    assert KEY not in result.stdout.str()

    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    (row,) = report["samples"]
    assert (row["outcome"], row["error_type"], row["calls"]) == ("failed", "multi_turn:instance_state_mismatch", CALLS)
    assert {key: row["details"][key] for key in ("mode", "turn", "turns")} == {"mode": "fc", "turn": 1, "turns": 4}
    assert [line.partition(":")[0] for line in row["error"][1:]] == [
        "GorillaFileSystem.root/document/temp",
        "GorillaFileSystem.root/document/tmp",
    ]

    page = html.unescape((pytester.path / "report.html").read_text(encoding="utf-8"))
    flips = page[page.index('<section id="flips">') :]
    assert "multi_turn_base_0-fc" in flips
    for line in row["error"]:  # one a line in the flip's error cell, as an agent's state differences are
        assert line in flips
