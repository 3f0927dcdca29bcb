"""A replayed BFCL result folder of every category the suite runs (single-turn, multi-turn, memory, web search,
format sensitivity) sums up as bfcl's leaderboard sums it (docs/bfcl.md#the-figures-and-the-leaderboard): every
verdict, and every column of every leaderboard file bfcl writes, to 1e-9, its cost and latency columns from the
latency and token counts the rows carry (docs/bfcl.md#cost-and-latency)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfcl_results import (
    MULTI_TURN_VERDICTS,
    SINGLE_TURN_VERDICTS,
    agentic_rows,
    format_rows,
    pick_rows,
    possible_answers,
    write_prerequisites,
    write_result_folder,
)
from pytest_tooleval.suites.bfcl.upstream import load_web_search
from upstream_data import recorded

UNIT = Path(__file__).parents[1] / "unit" / "bfcl"
EXPECTED = json.loads((UNIT / "leaderboard_expected_multi_turn.json").read_text())
SINGLE_TURN = json.loads((UNIT / "leaderboard_expected.json").read_text())
AGENTIC = json.loads((UNIT / "leaderboard_expected_agentic.json").read_text())
FORMAT_VERDICTS = json.loads((UNIT / "fs_verdicts.json").read_text())
#: (bfcl's leaderboard file, its column) -> the figure of ours it is; `category:` names a category's accuracy,
#: `format:` a figure of the format-sensitivity block
COLUMNS = {
    ("data_overall.csv", "Overall Acc"): "overall",
    ("data_overall.csv", "Non-Live AST Acc"): "non_live.ast",
    ("data_overall.csv", "Non-Live Simple AST"): "non_live.simple",
    ("data_overall.csv", "Non-Live Multiple AST"): "category:multiple",
    ("data_overall.csv", "Non-Live Parallel AST"): "category:parallel",
    ("data_overall.csv", "Non-Live Parallel Multiple AST"): "category:parallel_multiple",
    ("data_overall.csv", "Live Acc"): "live.ast",
    ("data_overall.csv", "Live Simple AST"): "category:live_simple",
    ("data_overall.csv", "Live Multiple AST"): "category:live_multiple",
    ("data_overall.csv", "Live Parallel AST"): "category:live_parallel",
    ("data_overall.csv", "Live Parallel Multiple AST"): "category:live_parallel_multiple",
    ("data_overall.csv", "Multi Turn Acc"): "multi_turn.overall",
    ("data_overall.csv", "Multi Turn Base"): "category:multi_turn_base",
    ("data_overall.csv", "Multi Turn Miss Func"): "category:multi_turn_miss_func",
    ("data_overall.csv", "Multi Turn Miss Param"): "category:multi_turn_miss_param",
    ("data_overall.csv", "Multi Turn Long Context"): "category:multi_turn_long_context",
    ("data_overall.csv", "Web Search Acc"): "web_search.overall",
    ("data_overall.csv", "Web Search Base"): "category:web_search_base",
    ("data_overall.csv", "Web Search No Snippet"): "category:web_search_no_snippet",
    ("data_overall.csv", "Memory Acc"): "memory.overall",
    ("data_overall.csv", "Memory KV"): "category:memory_kv",
    ("data_overall.csv", "Memory Vector"): "category:memory_vector",
    ("data_overall.csv", "Memory Recursive Summarization"): "category:memory_rec_sum",
    ("data_overall.csv", "Relevance Detection"): "hallucination.relevance",
    ("data_overall.csv", "Irrelevance Detection"): "hallucination.irrelevance",
    ("data_overall.csv", "Format Sensitivity Max Delta"): "format:max_delta",
    ("data_overall.csv", "Format Sensitivity Standard Deviation"): "format:std",
    ("data_non_live.csv", "Non-Live Overall Acc"): "non_live.ast",
    ("data_non_live.csv", "AST Summary"): "non_live.ast",
    ("data_non_live.csv", "Simple AST"): "non_live.simple",
    ("data_non_live.csv", "Python Simple AST"): "category:simple_python",
    ("data_non_live.csv", "Java Simple AST"): "category:simple_java",
    ("data_non_live.csv", "JavaScript Simple AST"): "category:simple_javascript",
    ("data_non_live.csv", "Multiple AST"): "category:multiple",
    ("data_non_live.csv", "Parallel AST"): "category:parallel",
    ("data_non_live.csv", "Parallel Multiple AST"): "category:parallel_multiple",
    ("data_non_live.csv", "Irrelevance Detection"): "category:irrelevance",
    ("data_live.csv", "Live Overall Acc"): "live.ast",
    ("data_live.csv", "AST Summary"): "live.ast",
    ("data_live.csv", "Python Simple AST"): "category:live_simple",
    ("data_live.csv", "Python Multiple AST"): "category:live_multiple",
    ("data_live.csv", "Python Parallel AST"): "category:live_parallel",
    ("data_live.csv", "Python Parallel Multiple AST"): "category:live_parallel_multiple",
    ("data_live.csv", "Irrelevance Detection"): "category:live_irrelevance",
    ("data_live.csv", "Relevance Detection"): "category:live_relevance",
    ("data_multi_turn.csv", "Multi Turn Overall Acc"): "multi_turn.overall",
    ("data_multi_turn.csv", "Base"): "category:multi_turn_base",
    ("data_multi_turn.csv", "Miss Func"): "category:multi_turn_miss_func",
    ("data_multi_turn.csv", "Miss Param"): "category:multi_turn_miss_param",
    ("data_multi_turn.csv", "Long Context"): "category:multi_turn_long_context",
    ("data_agentic.csv", "Agentic Overall Acc"): "agentic.overall",
    ("data_agentic.csv", "Web Search Summary"): "web_search.overall",
    ("data_agentic.csv", "Web Search Base"): "category:web_search_base",
    ("data_agentic.csv", "Web Search No Snippet"): "category:web_search_no_snippet",
    ("data_agentic.csv", "Memory Summary"): "memory.overall",
    ("data_agentic.csv", "Memory KV"): "category:memory_kv",
    ("data_agentic.csv", "Memory Vector"): "category:memory_vector",
    ("data_agentic.csv", "Memory Recursive Summarization"): "category:memory_rec_sum",
    ("data_format_sensitivity.csv", "Format Sensitivity Max Delta"): "format:max_delta",
    ("data_format_sensitivity.csv", "Format Sensitivity Standard Deviation"): "format:std",
    ("data_overall.csv", "Total Cost ($)"): "cost:cost",
    ("data_overall.csv", "Latency Mean (s)"): "cost:latency_mean",
    ("data_overall.csv", "Latency Standard Deviation (s)"): "cost:latency_std",
    ("data_overall.csv", "Latency 95th Percentile (s)"): "cost:latency_p95",
}
#: the columns bfcl leaves N/A for this folder: none (its rows carry latency and token counts, as bfcl's generation
#: writes them)
NOT_AVAILABLE: set[str] = set()
TEXT_COLUMNS = {"Rank", "Model", "Model Link", "Organization", "License"}


def test_a_replayed_whole_folder_gives_every_column_of_bfcls_leaderboard(
    pytester: pytest.Pytester, bfcl_args: list[str], bfcl_dir: Path, bfcl_wheel: Path, tmp_path: Path
) -> None:
    """Prompt protocol (a result folder holds one): one official-verdict row per sample of the 17 single- and
    multi-turn categories, a synthetic result per question of the three memory and both web search categories,
    and per format-sensitivity entry, written as bfcl writes a model's results, replayed through the
    plugin with two workers."""
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
    formats = format_rows(bfcl_dir, FORMAT_VERDICTS)
    format_results = [{"id": entry_id, "result": answer} for entry_id, answer, _ in formats]
    folder = write_result_folder(
        pytester.path / "result" / "gpt-4o-2024-11-20",
        {**picked, **memory, "format_sensitivity": format_results},
        usage=True,
    )
    # bfcl writes the prerequisite conversations' results beside the questions': a replay reads neither their
    # verdicts nor their latency and token counts, as bfcl's leaderboard does not
    write_prerequisites(folder)
    counted_files = sorted(
        str(path.relative_to(folder)) for path in folder.rglob("BFCL_v4_*_result.json") if "prereq" not in path.name
    )
    assert counted_files == AGENTIC["cost_latency_files"]
    result = pytester.runpytest(
        "--tooleval-model",
        f"replay:{folder}",
        "--tooleval-bfcl-categories",
        "all",
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
    valid["format_sensitivity"] = sum(label == "valid" for _, _, label in formats)
    total = sum(len(rows) for rows in picked.values()) + len(verdicts) + len(formats)
    assert total == 3641 + 800 + 465 + 200 + 5200
    result.assert_outcomes(passed=sum(valid.values()), failed=total - sum(valid.values()))
    report = json.loads((pytester.path / "report.json").read_text())
    # each agentic and format-sensitivity verdict is bfcl's own
    outcomes = {row["id"]: row["outcome"] == "passed" for row in report["samples"]}
    assert {entry_id: outcomes[entry_id] for entry_id in verdicts} == verdicts
    assert {entry_id: outcomes[entry_id] for entry_id, _, _ in formats} == {
        entry_id: label == "valid" for entry_id, _, label in formats
    }
    summary = report["summary"]["bfcl"]["prompt"]
    assert not summary["partial"], summary["partial_reasons"]
    # each category: every sample scored, as many passed as the official verdicts say
    categories = summary["categories"]
    sizes = {**{name: len(rows) for name, rows in {**picked, **memory}.items()}, "format_sensitivity": 5200}
    assert {name: (entry["passed"], entry["scored"], entry["errors"]) for name, entry in categories.items()} == {
        name: (valid[name], sizes[name], 0) for name in valid
    }
    accuracies = {name: entry["accuracy"] for name, entry in categories.items() if name != "format_sensitivity"}
    assert accuracies == pytest.approx(AGENTIC["categories"], abs=1e-12)
    assert {name: AGENTIC["categories"][name] for name in EXPECTED["categories"]} == EXPECTED["categories"]
    # the combined figures: what bfcl-eval's own leaderboard code computed from those accuracies; bfcl's
    # "Overall Acc" columns of non-live and live are their AST summaries, which the suite does not repeat
    assert EXPECTED["figures"]["non_live.overall"] == EXPECTED["figures"]["non_live.ast"]
    assert EXPECTED["figures"]["live.overall"] == EXPECTED["figures"]["live.ast"]
    expected = {name: value for name, value in EXPECTED["figures"].items() if name.split(".")[1:] != ["overall"]}
    expected["multi_turn.overall"] = EXPECTED["figures"]["multi_turn.overall"]
    # with the agentic part: bfcl's Web Search Summary, Memory Summary, Agentic Overall Acc, Overall Acc
    expected["web_search.overall"] = AGENTIC["figures"]["web_search.summary"]
    expected["agentic.overall"] = AGENTIC["figures"]["agentic.overall"]
    expected["overall"] = AGENTIC["figures"]["overall"]
    memory_accuracies = [AGENTIC["categories"][name] for name in ("memory_kv", "memory_vector", "memory_rec_sum")]
    expected["memory.overall"] = sum(memory_accuracies) / 3
    # and the single-turn part alone, as bfcl computes it without multi-turn (test_bfcl_runs.py holds it too)
    expected["overall.single_turn"] = SINGLE_TURN["figures"]["overall.single_turn"]
    groups = {name: entry["value"] for name, entry in summary["groups"].items()}
    assert groups == pytest.approx(expected, abs=1e-12)
    # the terminal table shows them, to three places
    figures = {**EXPECTED["figures"], **AGENTIC["figures"]}
    result.stdout.fnmatch_lines(
        [
            "*BFCL v4 single-turn, multi-turn, memory, web search and format sensitivity (prompt)*",
            *(f"*{name}*200/200*{EXPECTED['categories'][name]:.3f}*" for name in picked if name.startswith("multi_")),
            f"*memory_kv*155/155*{AGENTIC['categories']['memory_kv']:.3f}*",
            f"*Multi-turn overall*{figures['multi_turn.overall']:.3f}*",
            f"*Agentic Overall Acc*{figures['agentic.overall']:.3f}*",
            f"*Overall Acc (bfcl's weights; the parts not run count 0: see the note)*{figures['overall']:.3f}*",
        ]
    )
    assert summary["overall_note"] == "bfcl's Overall Acc: every part of it ran"
    # every column of every file bfcl's leaderboard writes for this folder: ours, or N/A there and why
    sensitivity = summary["format_sensitivity"]
    ours = {**groups, **{f"category:{name}": value for name, value in accuracies.items()}}
    ours.update({"format:max_delta": sensitivity["max_delta"], "format:std": sensitivity["std"]})
    ours.update({f"format:{name}": entry["accuracy"] for name, entry in sensitivity["configs"].items()})
    usage = summary["cost_latency"]
    ours.update({f"cost:{name}": usage[name] for name in ("cost", "latency_mean", "latency_std", "latency_p95")})
    # as bfcl's CSV prints them, from the replayed rows, priced as bfcl prices the folder's model
    assert usage["cells"] == AGENTIC["cost_latency_cells"] and usage["note"] is None
    assert (usage["basis"], usage["model"], usage["rows"]) == (
        "replay",
        "gpt-4o-2024-11-20",
        total - unused_rows(folder),
    )
    assert usage["pricing"]["input_price"] == 2.5 and usage["pricing"]["output_price"] == 10
    result.stdout.fnmatch_lines(
        [
            "*BFCL v4 cost and latency (prompt), from the replayed result rows, model gpt-4o-2024-11-20*",
            f"*Latency Mean (s)*{AGENTIC['cost_latency_cells']['Latency Mean (s)']} s *latencies*",
        ]
    )
    compared, missing = 0, set()
    for file, row in AGENTIC["csv_rows"].items():
        for column, value in row.items():
            if column in TEXT_COLUMNS:
                continue
            if value == "N/A":
                missing.add(column)
                continue
            key = COLUMNS.get((file, column)) or f"format:{column.removeprefix('Config ')}"
            assert ours[key] == pytest.approx(value, abs=1e-9), (file, column)
            compared += 1
    assert missing == NOT_AVAILABLE and compared == len(COLUMNS) + 26


def unused_rows(folder: Path) -> int:
    """The result rows that carry no latency or token count at all (an inference error's): none of their values
    counts, and the replay gives their samples no cost detail."""
    keys = ("latency", "input_token_count", "output_token_count")
    rows = [
        json.loads(line)
        for path in folder.rglob("BFCL_v4_*_result.json")
        if "prereq" not in path.name
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return sum(not any(key in row for key in keys) for row in rows)
