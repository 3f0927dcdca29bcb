"""Record bfcl-eval's own verdicts on the synthetic memory and web search results of tests/bfcl_results.py, and what
its leaderboard arithmetic gives for a replayed result folder of every category it runs here (single-turn,
multi-turn, memory, web search, format sensitivity): numbers only (docs/bfcl.md#the-figures-and-the-leaderboard).

Run in a scratch venv that has bfcl-eval 2026.3.23 and what its modules import (perf/bfcl_side.py's docstring builds
one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_leaderboard_agentic.py --data-dir ../shared/data/bfcl

The single- and multi-turn rows are those of record_leaderboard.py; the agentic rows are bfcl_results.agentic_rows
(web search's possible answers read from the installed bfcl-eval, whose data folder keeps them), each judged by
bfcl's `_evaluate_single_agentic_entry` with a prompting `OpenAICompletionsHandler` (its decoder parses the steps;
nothing is executed). The format-sensitivity rows are bfcl_results.format_rows (verdicts recorded by
fs_record_verdicts.py), aggregated by bfcl's `format_sensitivity_runner` (its per-entry evaluation replaced by the
recorded verdict, as fs_record_figures.py does). The cost and latency columns: the whole folder is written as the
test writes it (bfcl_results.write_result_folder with each row's latency and token counts, and the memory
prerequisite results beside it), and each result file bfcl's runner would evaluate goes through its
`record_cost_latency`, found and read as its runner finds and reads them (docs/bfcl.md#cost-and-latency). Each
category's accuracy and entry count, and the format-sensitivity header, go to
`eval_runner_helper.generate_leaderboard_csv` as bfcl's score files would hand them, and the rows it passes to its
CSV writer are captured before formatting, every column. It writes tests/unit/bfcl/leaderboard_expected_agentic.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: bfcl_results (standard library only)
import bfcl_results

OUTPUT = Path(__file__).with_name("leaderboard_expected_agentic.json")
VERDICTS = Path(__file__).with_name("fs_verdicts.json")
COST_COLUMNS = ("Total Cost ($)", "Latency Mean (s)", "Latency Standard Deviation (s)", "Latency 95th Percentile (s)")
MODEL = "gpt-4o-2024-11-20"
#: our figure name -> (bfcl's CSV file, its column)
FIGURES = {
    "non_live.ast": ("data_non_live.csv", "AST Summary"),
    "live.ast": ("data_live.csv", "AST Summary"),
    "hallucination.irrelevance": ("data_overall.csv", "Irrelevance Detection"),
    "multi_turn.overall": ("data_multi_turn.csv", "Multi Turn Overall Acc"),
    "agentic.overall": ("data_agentic.csv", "Agentic Overall Acc"),
    "web_search.summary": ("data_agentic.csv", "Web Search Summary"),
    "overall": ("data_overall.csv", "Overall Acc"),
}
COLUMNS = {
    "memory_kv": "Memory KV",
    "memory_vector": "Memory Vector",
    "memory_rec_sum": "Memory Recursive Summarization",
    "web_search_base": "Web Search Base",
    "web_search_no_snippet": "Web Search No Snippet",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")  # the handler makes a client it never uses here

    import bfcl_eval
    from bfcl_eval.eval_checker import eval_runner, eval_runner_helper
    from bfcl_eval.eval_checker.eval_runner import _evaluate_single_agentic_entry
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    handler = OpenAICompletionsHandler(MODEL, 0.001, MODEL, False)
    files = {
        "memory": options.data_dir / "possible_answer" / "BFCL_v4_memory.json",
        "web_search": Path(bfcl_eval.__file__).parent / "data" / "possible_answer" / "BFCL_v4_web_search.json",
    }
    possible = {name: bfcl_results.possible_answers(path.read_text(encoding="utf-8")) for name, path in files.items()}
    answers = {row["id"]: row["ground_truth"] for rows in possible.values() for row in rows}
    picked = {
        **bfcl_results.pick_rows(options.data_dir / bfcl_results.SINGLE_TURN_VERDICTS),
        **bfcl_results.pick_rows(options.data_dir / bfcl_results.MULTI_TURN_VERDICTS),
    }
    categories = bfcl_results.accuracies(picked)
    counts = {category: len(rows) for category, rows in picked.items()}
    verdicts: dict[str, bool] = {}
    agentic_results = bfcl_results.agentic_rows(possible)
    formats = bfcl_results.format_rows(options.data_dir, json.loads(VERDICTS.read_text(encoding="utf-8")))
    table: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as temporary:  # first, as bfcl's runner records them before each verdict
        format_results = [{"id": entry_id, "result": answer} for entry_id, answer, _ in formats]
        folder = bfcl_results.write_result_folder(
            Path(temporary) / MODEL, {**picked, **agentic_results, "format_sensitivity": format_results}, usage=True
        )
        bfcl_results.write_prerequisites(folder)
        counted_files = record_counts(eval_runner_helper, folder, table)
    for category, rows in agentic_results.items():
        for row in rows:
            accepted = answers[row["id"].replace(category, bfcl_results.AGENTIC[category], 1)]
            outcome = _evaluate_single_agentic_entry(
                handler, row["id"], copy.deepcopy(row["result"]), list(accepted), {"question": []}, MODEL, category
            )
            verdicts[row["id"]] = bool(outcome["valid"])
        categories[category] = sum(verdicts[row["id"]] for row in rows) / len(rows)
        counts[category] = len(rows)
    for category, accuracy in categories.items():  # what bfcl's score files hand the leaderboard
        eval_runner_helper.record_result(table, MODEL, category, accuracy, counts[category])
    table[MODEL]["format_sensitivity"] = format_header(eval_runner, formats)

    captured = bfcl_results.leaderboard_rows(eval_runner_helper, table)

    agentic = captured["data_agentic.csv"]
    assert all(agentic[column] == categories[name] for name, column in COLUMNS.items())
    expected = {
        "how": "The single- and multi-turn rows of leaderboard_expected_multi_turn.json and the agentic rows of "
        "tests/bfcl_results.py agentic_rows; `verdicts` are bfcl-eval 2026.3.23's _evaluate_single_agentic_entry "
        "on each agentic row, `categories` the accuracies, `figures` what its eval_runner_helper."
        "generate_leaderboard_csv computed from them, captured before formatting, its cost and latency columns from "
        "the latency and token counts of bfcl_results.usage_fields in every row of the folder, each file its runner "
        "reads (`cost_latency_files`) through its record_cost_latency "
        "(tests/unit/bfcl/record_leaderboard_agentic.py, in the scratch venv).",
        "categories": categories,
        "verdicts": verdicts,
        "figures": {name: captured[file][column] for name, (file, column) in FIGURES.items()},
        "memory_summary_shown": agentic["Memory Summary"],
        "format_sensitivity": table[MODEL]["format_sensitivity"],
        "csv_rows": captured,
        "cost_latency_files": counted_files,
        # as bfcl's CSV writer prints them: str() of each (a numpy float's, for the percentile)
        "cost_latency_cells": {column: str(captured["data_overall.csv"][column]) for column in COST_COLUMNS},
    }
    options.output.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(expected["figures"], indent=1), expected["memory_summary_shown"])
    return 0


def record_counts(helper: Any, folder: Path, table: dict[str, Any]) -> list[str]:
    """bfcl's runner over a model's result folder, its cost and latency part only: every result file it finds
    (its rglob pattern), of a category it evaluates (`all`, less what it skips: memory prerequisites among them),
    read as it reads them (sorted by id), through `record_cost_latency`; the files counted, relative."""
    from bfcl_eval.constants.eval_config import RESULT_FILE_PATTERN
    from bfcl_eval.utils import (
        extract_test_category,
        is_chatable,
        is_executable,
        is_memory_prereq,
        is_sql,
        load_file,
        parse_test_category_argument,
    )

    categories = parse_test_category_argument(["all"])
    counted = []
    for path in folder.rglob(RESULT_FILE_PATTERN):
        category = extract_test_category(path)
        if category not in categories:
            continue
        if is_chatable(category) or is_sql(category) or is_executable(category) or is_memory_prereq(category):
            continue
        helper.record_cost_latency(table, folder.name, load_file(path, sort_by_id=True))
        counted.append(str(path.relative_to(folder)))
    return sorted(counted)


def format_header(eval_runner: Any, rows: list[tuple[str, Any, str]]) -> dict[str, Any]:
    """The score-file header bfcl's format_sensitivity_runner writes for the picked format-sensitivity rows."""
    valid = {entry_id: label == "valid" for entry_id, _, label in rows}
    kept: list[dict[str, Any]] = []
    eval_runner._evaluate_single_ast_entry = lambda handler, index, *args, **kwargs: {"valid": valid[index]}

    def save(result: Any, correct: int, model_result: Any, *args: Any, extra_header_fields: Any = None) -> Any:
        kept.append(
            {
                "accuracy": correct / len(model_result),
                "correct_count": correct,
                "total_count": len(model_result),
                **extra_header_fields,
            }
        )
        return kept[-1]["accuracy"], len(model_result)

    eval_runner.save_eval_results = save
    results = [{"id": entry_id, "result": ""} for entry_id, _, _ in rows]
    eval_runner.format_sensitivity_runner(
        None, results, [{}] * len(rows), [{"ground_truth": []}] * len(rows), "m", "format_sensitivity", Path(".")
    )
    return kept[-1]


if __name__ == "__main__":
    sys.exit(main())
