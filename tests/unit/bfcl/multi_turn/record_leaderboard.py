"""Record what bfcl-eval's own leaderboard arithmetic gives for a replayed single- and multi-turn result folder:
numbers only (docs/upstream/bfcl.md section 6).

Run in a scratch venv that has bfcl-eval 2026.3.23 and what its modules import
(../shared/tools/bfcl-reference/README.md), never in CI and never with the project's package:

    /tmp/bfcl-ref-mt/bin/python tests/unit/bfcl/multi_turn/record_leaderboard.py --data-dir ../shared/data/bfcl

It picks the rows tests/plugin/test_bfcl_multi_turn_leaderboard.py replays (tests/bfcl_results.py: one prompt row
of each conformance file per sample), takes each category's accuracy from their official verdicts, hands those
to `eval_runner_helper.generate_leaderboard_csv` as bfcl's score files would (accuracy and entry count per
category; web search and memory absent), and captures the rows it passes to its CSV writer, before they are
formatted as percentages. It writes tests/unit/bfcl/leaderboard_expected_multi_turn.json. Nothing here is
evaluated: the leaderboard code only sees numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # tests/: bfcl_results (standard library only)
import bfcl_results

OUTPUT = Path(__file__).resolve().parents[1] / "leaderboard_expected_multi_turn.json"
MODEL = "gpt-4o-2024-11-20"
#: our figure name -> (bfcl's CSV file, its column)
FIGURES = {
    "non_live.simple": ("data_non_live.csv", "Simple AST"),
    "non_live.ast": ("data_non_live.csv", "AST Summary"),
    "non_live.overall": ("data_non_live.csv", "Non-Live Overall Acc"),
    "live.ast": ("data_live.csv", "AST Summary"),
    "live.overall": ("data_live.csv", "Live Overall Acc"),
    "hallucination.irrelevance": ("data_overall.csv", "Irrelevance Detection"),
    "hallucination.relevance": ("data_overall.csv", "Relevance Detection"),
    "multi_turn.overall": ("data_multi_turn.csv", "Multi Turn Overall Acc"),
    "overall": ("data_overall.csv", "Overall Acc"),
}
MULTI_TURN_COLUMNS = {
    "multi_turn_base": "Base",
    "multi_turn_miss_func": "Miss Func",
    "multi_turn_miss_param": "Miss Param",
    "multi_turn_long_context": "Long Context",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--stand-ins", type=Path, default=Path("../shared/tools/bfcl-reference"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()

    sys.path.insert(0, str(options.stand_ins.resolve()))
    import stand_ins  # type: ignore[import-not-found]  # noqa: F401 (answers the vendor SDKs' imports)
    from bfcl_eval.eval_checker import eval_runner_helper

    picked = {
        **bfcl_results.pick_rows(options.data_dir / bfcl_results.SINGLE_TURN_VERDICTS),
        **bfcl_results.pick_rows(options.data_dir / bfcl_results.MULTI_TURN_VERDICTS),
    }
    categories = bfcl_results.accuracies(picked)
    table: dict[str, Any] = {}
    for category, rows in picked.items():  # what bfcl's score files hand the leaderboard
        eval_runner_helper.record_result(table, MODEL, category, categories[category], len(rows))

    captured = bfcl_results.leaderboard_rows(eval_runner_helper, table)

    multi_turn = captured["data_multi_turn.csv"]
    assert all(multi_turn[column] == categories[name] for name, column in MULTI_TURN_COLUMNS.items())
    assert captured["data_agentic.csv"]["Agentic Overall Acc"] == 0  # not run: counts 0 in Overall Acc
    expected = {
        "how": "One prompt-mode row per sample of conformance/official_verdicts.jsonl and of "
        "conformance/multi_turn_official_verdicts.jsonl (tests/bfcl_results.py: the row at crc32(id) modulo the "
        "sample's number of prompt rows, in variant order, ties in file order); `categories` are the official "
        "verdicts' accuracies over those rows; `figures` are what bfcl-eval 2026.3.23's "
        "eval_runner_helper.generate_leaderboard_csv computed from them (agentic not run), captured before "
        "formatting (tests/unit/bfcl/multi_turn/record_leaderboard.py, in the scratch venv).",
        "categories": categories,
        "figures": {name: captured[file][column] for name, (file, column) in FIGURES.items()},
    }
    options.output.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(expected["figures"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
