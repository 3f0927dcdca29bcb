"""A replayed BFCL result folder of single-turn, multi-turn and memory sums up as bfcl's leaderboard sums it
(docs/upstream/bfcl.md section 6, docs/bfcl.md#the-memory-run): every verdict, the categories, Multi Turn Overall
Acc, Agentic Overall Acc and Overall Acc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfcl_results import MULTI_TURN_VERDICTS, SINGLE_TURN_VERDICTS, memory_rows, pick_rows, write_result_folder
from upstream_data import recorded

UNIT = Path(__file__).parents[1] / "unit" / "bfcl"
EXPECTED = json.loads((UNIT / "leaderboard_expected_multi_turn.json").read_text())
SINGLE_TURN = json.loads((UNIT / "leaderboard_expected.json").read_text())
WITH_MEMORY = json.loads((UNIT / "leaderboard_expected_memory.json").read_text())


def test_a_replayed_folder_with_memory_sums_up_as_bfcls_leaderboard(
    pytester: pytest.Pytester, bfcl_args: list[str], bfcl_dir: Path
) -> None:
    """Prompt protocol (a result folder holds one): one official-verdict row per sample of the 17 single- and
    multi-turn categories and a synthetic result per question of memory_kv and memory_rec_sum, written as bfcl
    writes a model's results, replayed through the plugin with two workers."""
    picked = {
        **pick_rows(recorded(bfcl_dir, SINGLE_TURN_VERDICTS)),
        **pick_rows(recorded(bfcl_dir, MULTI_TURN_VERDICTS)),
    }
    assert set(picked) == set(EXPECTED["categories"])
    memory = memory_rows(bfcl_dir)
    folder = write_result_folder(pytester.path / "result" / "gpt-4o-2024-11-20", {**picked, **memory})
    # bfcl writes the prerequisite conversations' results beside the questions': a replay does not read them
    prerequisites = folder / "agentic" / "memory" / "kv" / "BFCL_v4_memory_kv_prereq_result.json"
    prerequisites.write_text('{"id": "memory_kv_prereq_0-student-0", "result": "not a list of turns"}\n')
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder}",
        "--tooleval-bfcl-categories",
        ",".join([*EXPECTED["categories"], *memory]),
        "--tooleval-mode",
        "prompt",
        "--tooleval-report",
        "report.json",
        *bfcl_args,
        "-n",
        "2",
        "-q",
    )
    verdicts = WITH_MEMORY["verdicts"]
    assert set(verdicts) == {row["id"] for rows in memory.values() for row in rows}
    valid = {category: sum(bool(row["valid"]) for row in rows) for category, rows in picked.items()}
    valid.update({category: sum(verdicts[row["id"]] for row in rows) for category, rows in memory.items()})
    total = sum(len(rows) for rows in picked.values()) + len(verdicts)
    assert total == 3641 + 800 + 310
    result.assert_outcomes(passed=sum(valid.values()), failed=total - sum(valid.values()))
    report = json.loads((pytester.path / "report.json").read_text())
    # each memory question's verdict is bfcl's own
    outcomes = {row["id"]: row["outcome"] == "passed" for row in report["samples"] if row["id"] in verdicts}
    assert outcomes == verdicts
    summary = report["summary"]["bfcl"]["prompt"]
    assert not summary["partial"], summary["partial_reasons"]
    # each category: every sample scored, as many passed as the official verdicts say
    categories = summary["categories"]
    assert {name: (entry["passed"], entry["scored"], entry["errors"]) for name, entry in categories.items()} == {
        name: (valid[name], len({**picked, **memory}[name]), 0) for name in valid
    }
    assert {name: entry["accuracy"] for name, entry in categories.items()} == pytest.approx(
        WITH_MEMORY["categories"], abs=1e-12
    )
    assert {name: WITH_MEMORY["categories"][name] for name in EXPECTED["categories"]} == EXPECTED["categories"]
    # the combined figures: what bfcl-eval's own leaderboard code computed from those accuracies; bfcl's
    # "Overall Acc" columns of non-live and live are their AST summaries, which the suite does not repeat
    assert EXPECTED["figures"]["non_live.overall"] == EXPECTED["figures"]["non_live.ast"]
    assert EXPECTED["figures"]["live.overall"] == EXPECTED["figures"]["live.ast"]
    expected = {name: value for name, value in EXPECTED["figures"].items() if name.split(".")[1:] != ["overall"]}
    expected["multi_turn.overall"] = EXPECTED["figures"]["multi_turn.overall"]
    # with memory: bfcl's Agentic Overall Acc (web search and memory_vector count 0) and Overall Acc
    expected["agentic.overall"] = WITH_MEMORY["figures"]["agentic.overall"]
    expected["overall"] = WITH_MEMORY["figures"]["overall"]
    expected["memory.overall"] = (
        WITH_MEMORY["categories"]["memory_kv"] + WITH_MEMORY["categories"]["memory_rec_sum"]
    ) / 2
    # and the single-turn part alone, as bfcl computes it without multi-turn (test_bfcl_runs.py holds it too)
    expected["overall.single_turn"] = SINGLE_TURN["figures"]["overall.single_turn"]
    groups = {name: entry["value"] for name, entry in summary["groups"].items()}
    assert groups == pytest.approx(expected, abs=1e-12)
    # the terminal table shows them, to three places
    figures = {**EXPECTED["figures"], **WITH_MEMORY["figures"]}
    result.stdout.fnmatch_lines(
        [
            "*BFCL v4 single-turn, multi-turn and memory (prompt)*",
            *(f"*{name}*200/200*{EXPECTED['categories'][name]:.3f}*" for name in picked if name.startswith("multi_")),
            f"*memory_kv*155/155*{WITH_MEMORY['categories']['memory_kv']:.3f}*",
            f"*Multi-turn overall*{figures['multi_turn.overall']:.3f}*",
            f"*Agentic Overall Acc*{figures['agentic.overall']:.3f}*",
            f"*Overall Acc (bfcl's weights; the parts not run count 0: see the note)*{figures['overall']:.3f}*",
        ]
    )
    assert summary["overall_note"] == (
        "bfcl's Overall Acc; of its agentic part (40%), web_search_base, web_search_no_snippet, memory_vector are "
        "not run: each counts 0"
    )
