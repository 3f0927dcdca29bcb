"""Record bfcl-eval's own verdicts on the synthetic format-sensitivity answers of format_sensitivity_cases.py
(docs/bfcl.md#format-sensitivity).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its handlers import (perf/bfcl_side.py's docstring
builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/fs_record_verdicts.py --data-dir ../shared/data/bfcl

Each answer is judged as bfcl's `format_sensitivity_runner` judges an entry: the configuration is read from the
entry's id with `parse_prompt_variation_params`, and `_evaluate_single_ast_entry` decodes the answer with an
`OpenAICompletionsHandler` in prompting mode and runs the AST checker, on bfcl's own entry and possible answer at
the case's index. It writes fs_verdicts.json: per case, in fs_cases.cases() order, an index into a table of
labels (`valid`, an error type, or `crash:<exception>` where bfcl's evaluation raises: its runner has no guard),
and a digest of all the answers so that a changed generator shows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the cases (standard library only)
import format_sensitivity_cases as fs_cases

OUTPUT = Path(__file__).with_name("fs_verdicts.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")  # the handler makes a client it never uses here

    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker.eval_runner import _evaluate_single_ast_entry
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.model_handler.utils import parse_prompt_variation_params
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    prompts = load_dataset_entry("format_sensitivity")
    answers = load_ground_truth_entry("format_sensitivity")
    ours = fs_cases.entries(options.data_dir)
    assert [entry["id"] for entry in prompts] == [entry.id for entry in ours]
    model = "gpt-4o-2024-11-20"
    handler = OpenAICompletionsHandler(model, 0.001, model, False)
    rows = fs_cases.cases(options.data_dir)
    labels: list[str] = []
    verdicts: list[int] = []
    for _key, index, answer in rows:
        entry_id = prompts[index]["id"]
        return_format, tag, _, _, _ = parse_prompt_variation_params(entry_id.split(":")[1])
        try:
            outcome = _evaluate_single_ast_entry(
                handler,
                entry_id,
                answer,
                answers[index]["ground_truth"],
                prompts[index],
                model,
                "format_sensitivity",
                language=Language.PYTHON,
                return_format=ReturnFormat(return_format),
                has_tool_call_tag=tag,
            )
        except Exception as exc:  # upstream's runner would stop here
            label = f"crash:{type(exc).__name__}"
        else:
            label = "valid" if outcome["valid"] else outcome["error_type"]
        if label not in labels:
            labels.append(label)
        verdicts.append(labels.index(label))
    document: dict[str, Any] = {
        "about": "bfcl-eval's own verdicts (format_sensitivity_runner's per-entry evaluation, "
        "OpenAICompletionsHandler in prompting mode) on format_sensitivity_cases.py's synthetic answers, recorded by "
        "fs_record_verdicts.py in a scratch venv; verdicts index the labels, in fs_cases.cases() order.",
        "bfcl_eval": "2026.3.23",
        "python": sys.version.split()[0],
        "cases": len(rows),
        "answers_digest": fs_cases.outputs_digest(rows),
        "labels": labels,
        "verdicts": "".join(chr(ord("A") + number) for number in verdicts),
    }
    options.output.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for number in verdicts:
        counts[labels[number]] = counts.get(labels[number], 0) + 1
    print(len(rows), json.dumps(counts, sort_keys=True, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
