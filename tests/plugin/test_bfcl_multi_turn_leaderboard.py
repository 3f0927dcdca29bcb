"""A replayed single- and multi-turn BFCL result folder sums up as bfcl's leaderboard sums it (issue 43's "done
when"; docs/upstream/bfcl.md section 6): the multi-turn categories, Multi Turn Overall Acc and Overall Acc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfcl_results import MULTI_TURN_VERDICTS, SINGLE_TURN_VERDICTS, pick_rows, write_result_folder
from upstream_data import recorded

UNIT = Path(__file__).parents[1] / "unit" / "bfcl"
EXPECTED = json.loads((UNIT / "leaderboard_expected_multi_turn.json").read_text())
SINGLE_TURN = json.loads((UNIT / "leaderboard_expected.json").read_text())


def test_a_replayed_single_and_multi_turn_folder_sums_up_as_bfcls_leaderboard(
    pytester: pytest.Pytester, bfcl_args: list[str], bfcl_dir: Path
) -> None:
    """Prompt protocol (a result folder holds one): one official-verdict row per sample of all 17 categories,
    written as bfcl writes a model's results, replayed through the plugin with two workers."""
    picked = {
        **pick_rows(recorded(bfcl_dir, SINGLE_TURN_VERDICTS)),
        **pick_rows(recorded(bfcl_dir, MULTI_TURN_VERDICTS)),
    }
    assert set(picked) == set(EXPECTED["categories"])
    folder = write_result_folder(pytester.path / "result" / "gpt-4o-2024-11-20", picked)
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder}",
        "--tooleval-bfcl-categories",
        ",".join(EXPECTED["categories"]),
        "--tooleval-mode",
        "prompt",
        "--tooleval-report",
        "report.json",
        *bfcl_args,
        "-n",
        "2",
        "-q",
    )
    valid = {category: sum(bool(row["valid"]) for row in rows) for category, rows in picked.items()}
    total = sum(len(rows) for rows in picked.values())
    assert total == 3641 + 800
    result.assert_outcomes(passed=sum(valid.values()), failed=total - sum(valid.values()))
    summary = json.loads((pytester.path / "report.json").read_text())["summary"]["bfcl"]["prompt"]
    assert not summary["partial"], summary["partial_reasons"]
    # each category: every sample scored, as many passed as the official verdicts say
    categories = summary["categories"]
    assert {name: (entry["passed"], entry["scored"], entry["errors"]) for name, entry in categories.items()} == {
        name: (valid[name], len(picked[name]), 0) for name in picked
    }
    assert {name: entry["accuracy"] for name, entry in categories.items()} == pytest.approx(
        EXPECTED["categories"], abs=1e-12
    )
    # the combined figures: what bfcl-eval's own leaderboard code computed from those accuracies; bfcl's
    # "Overall Acc" columns of non-live and live are their AST summaries, which the suite does not repeat
    assert EXPECTED["figures"]["non_live.overall"] == EXPECTED["figures"]["non_live.ast"]
    assert EXPECTED["figures"]["live.overall"] == EXPECTED["figures"]["live.ast"]
    expected = {name: value for name, value in EXPECTED["figures"].items() if name.split(".")[1:] != ["overall"]}
    expected["multi_turn.overall"] = EXPECTED["figures"]["multi_turn.overall"]
    # and the single-turn part alone, as bfcl computes it without multi-turn (test_bfcl_runs.py holds it too)
    expected["overall.single_turn"] = SINGLE_TURN["figures"]["overall.single_turn"]
    groups = {name: entry["value"] for name, entry in summary["groups"].items()}
    assert groups == pytest.approx(expected, abs=1e-12)
    # the terminal table shows them, to three places
    figures = EXPECTED["figures"]
    result.stdout.fnmatch_lines(
        [
            "*BFCL v4 single- and multi-turn (prompt)*",
            *(f"*{name}*200/200*{EXPECTED['categories'][name]:.3f}*" for name in picked if name.startswith("multi_")),
            f"*Multi-turn overall*{figures['multi_turn.overall']:.3f}*",
            f"*Overall Acc (agentic 40% not run: counts 0)*{figures['overall']:.3f}*",
        ]
    )
