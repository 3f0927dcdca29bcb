"""Record bfcl-eval's own format-sensitivity figures on the score sets of tests/format_sensitivity_cases.py, and the
leaderboard file it prints from them (docs/bfcl.md#format-sensitivity).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its handlers import (perf/bfcl_side.py's docstring
builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/fs_record_figures.py

Each score set goes through bfcl's `format_sensitivity_runner` with its per-entry evaluation replaced by the set's
verdict and its score writer by one that keeps the header; the headers then go, one model each, through
`generate_leaderboard_csv` (with one model more that has no run), whose data_format_sensitivity.csv is kept whole.
It writes fs_figures.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the cases (standard library only)
import format_sensitivity_cases as fs_cases

OUTPUT = Path(__file__).with_name("fs_figures.json")


def main() -> int:
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.eval_checker.eval_runner_helper import generate_leaderboard_csv

    verdicts: dict[str, bool] = {}
    kept: list[dict[str, Any]] = []
    eval_runner._evaluate_single_ast_entry = lambda handler, index, *args, **kwargs: {"valid": verdicts[index]}

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
    sets = fs_cases.score_sets()
    headers = {}
    for name, results in sets:
        verdicts.clear()
        model_result = []
        for number, (config, valid) in enumerate(results):
            entry_id = f"format_sensitivity_{number}:{config}:simple_python_0"
            verdicts[entry_id] = valid
            model_result.append({"id": entry_id, "result": ""})
        eval_runner.format_sensitivity_runner(
            None,
            model_result,
            [{}] * len(results),
            [{"ground_truth": []}] * len(results),
            "m",
            "format_sensitivity",
            Path("."),
        )
        headers[name] = kept[-1]
    models = [name for name, config in MODEL_CONFIG_MAPPING.items() if not config.is_fc_model][: len(sets) + 1]
    table = {
        model.replace("/", "_"): {"format_sensitivity": headers[name]}
        for model, (name, _) in zip(models, sets, strict=False)
    }
    table[models[len(sets)].replace("/", "_")] = {}
    with tempfile.TemporaryDirectory() as folder:
        generate_leaderboard_csv(table, Path(folder))
        csv = (Path(folder) / "data_format_sensitivity.csv").read_text(encoding="utf-8")
    document = {
        "about": "bfcl-eval's own format_sensitivity_runner figures (score file header) on fs_cases.score_sets(), "
        "and its generate_leaderboard_csv's data_format_sensitivity.csv for them, one model each in this order "
        "(the last without a run), recorded by fs_record_figures.py in a scratch venv.",
        "bfcl_eval": "2026.3.23",
        "headers": headers,
        "models": [MODEL_CONFIG_MAPPING[model].display_name for model in models],
        "csv": csv,
    }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(len(headers), "score sets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
