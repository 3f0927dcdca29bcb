"""A replayed BFCL result folder of single-turn, multi-turn, memory and web search sums up as bfcl's leaderboard
sums it (docs/upstream/bfcl.md section 6, docs/bfcl.md#the-memory-run): every verdict, the categories, Multi Turn
Overall Acc, Web Search Summary, Agentic Overall Acc and Overall Acc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfcl_results import (
    MULTI_TURN_VERDICTS,
    SINGLE_TURN_VERDICTS,
    agentic_rows,
    pick_rows,
    possible_answers,
    write_result_folder,
)
from pytest_tooleval.suites.bfcl.upstream import load_web_search
from upstream_data import recorded

UNIT = Path(__file__).parents[1] / "unit" / "bfcl"
EXPECTED = json.loads((UNIT / "leaderboard_expected_multi_turn.json").read_text())
SINGLE_TURN = json.loads((UNIT / "leaderboard_expected.json").read_text())
AGENTIC = json.loads((UNIT / "leaderboard_expected_agentic.json").read_text())


def test_a_replayed_folder_with_agentic_results_sums_up_as_bfcls_leaderboard(
    pytester: pytest.Pytester, bfcl_args: list[str], bfcl_dir: Path, bfcl_wheel: Path, tmp_path: Path
) -> None:
    """Prompt protocol (a result folder holds one): one official-verdict row per sample of the 17 single- and
    multi-turn categories and a synthetic result per question of memory_kv, memory_rec_sum and both web search
    categories, written as bfcl writes a model's results, replayed through the plugin with two workers."""
    picked = {
        **pick_rows(recorded(bfcl_dir, SINGLE_TURN_VERDICTS)),
        **pick_rows(recorded(bfcl_dir, MULTI_TURN_VERDICTS)),
    }
    assert set(picked) == set(EXPECTED["categories"])
    answers = {
        "memory": possible_answers((bfcl_dir / "possible_answer" / "BFCL_v4_memory.json").read_text(encoding="utf-8")),
        "web_search": possible_answers(load_web_search(tmp_path, True, wheel=bfcl_wheel).answers),
    }
    memory = agentic_rows(answers)
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
    verdicts = AGENTIC["verdicts"]
    assert set(verdicts) == {row["id"] for rows in memory.values() for row in rows}
    valid = {category: sum(bool(row["valid"]) for row in rows) for category, rows in picked.items()}
    valid.update({category: sum(verdicts[row["id"]] for row in rows) for category, rows in memory.items()})
    total = sum(len(rows) for rows in picked.values()) + len(verdicts)
    assert total == 3641 + 800 + 310 + 200
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
        AGENTIC["categories"], abs=1e-12
    )
    assert {name: AGENTIC["categories"][name] for name in EXPECTED["categories"]} == EXPECTED["categories"]
    # the combined figures: what bfcl-eval's own leaderboard code computed from those accuracies; bfcl's
    # "Overall Acc" columns of non-live and live are their AST summaries, which the suite does not repeat
    assert EXPECTED["figures"]["non_live.overall"] == EXPECTED["figures"]["non_live.ast"]
    assert EXPECTED["figures"]["live.overall"] == EXPECTED["figures"]["live.ast"]
    expected = {name: value for name, value in EXPECTED["figures"].items() if name.split(".")[1:] != ["overall"]}
    expected["multi_turn.overall"] = EXPECTED["figures"]["multi_turn.overall"]
    # with the agentic part: bfcl's Web Search Summary, Agentic Overall Acc (memory_vector counts 0), Overall Acc
    expected["web_search.overall"] = AGENTIC["figures"]["web_search.summary"]
    expected["agentic.overall"] = AGENTIC["figures"]["agentic.overall"]
    expected["overall"] = AGENTIC["figures"]["overall"]
    expected["memory.overall"] = (AGENTIC["categories"]["memory_kv"] + AGENTIC["categories"]["memory_rec_sum"]) / 2
    # and the single-turn part alone, as bfcl computes it without multi-turn (test_bfcl_runs.py holds it too)
    expected["overall.single_turn"] = SINGLE_TURN["figures"]["overall.single_turn"]
    groups = {name: entry["value"] for name, entry in summary["groups"].items()}
    assert groups == pytest.approx(expected, abs=1e-12)
    # the terminal table shows them, to three places
    figures = {**EXPECTED["figures"], **AGENTIC["figures"]}
    result.stdout.fnmatch_lines(
        [
            "*BFCL v4 single-turn, multi-turn, memory and web search (prompt)*",
            *(f"*{name}*200/200*{EXPECTED['categories'][name]:.3f}*" for name in picked if name.startswith("multi_")),
            f"*memory_kv*155/155*{AGENTIC['categories']['memory_kv']:.3f}*",
            f"*Multi-turn overall*{figures['multi_turn.overall']:.3f}*",
            f"*Agentic Overall Acc*{figures['agentic.overall']:.3f}*",
            f"*Overall Acc (bfcl's weights; the parts not run count 0: see the note)*{figures['overall']:.3f}*",
        ]
    )
    assert summary["overall_note"] == (
        "bfcl's Overall Acc; of its agentic part (40%), memory_vector is not run: it counts 0"
    )
