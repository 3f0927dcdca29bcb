"""Record bfcl-eval's own agentic checker on the synthetic results of agentic_cases.py
(docs/bfcl.md#the-agentic-checker).

Run in a scratch venv that has bfcl-eval 2026.3.23 with what its handlers import (perf/bfcl_side.py's docstring
builds one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_agentic.py --data-dir ../shared/data/bfcl

Each case goes through `_evaluate_single_agentic_entry` with an `OpenAICompletionsHandler` in the case's mode (its
`decode_execute` parses the steps; nothing is executed). It writes agentic_verdicts.json: per case key, upstream's
`valid` and error type, or `crash` with the exception's type where upstream's evaluation raises (its runner has no
guard: one such entry ends bfcl's whole evaluation), and a sha256 of the case so that a changed generator shows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import agentic_cases
else:  # run as a script, outside any package: the module is beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import agentic_cases

OUTPUT = Path(__file__).with_name("agentic_verdicts.json")


def case_digest(mode: str, result: Any, accepted: list[str]) -> str:
    canonical = json.dumps([mode, result, accepted], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")  # the handler makes a client it never uses here

    from bfcl_eval.eval_checker.eval_runner import _evaluate_single_agentic_entry
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    handlers = {
        "prompt": OpenAICompletionsHandler("gpt-4o-2024-11-20", 0.001, "gpt-4o-2024-11-20", False),
        "fc": OpenAICompletionsHandler("gpt-4o-2024-11-20", 0.001, "gpt-4o-2024-11-20-FC", True),
    }
    verdicts: dict[str, dict[str, Any]] = {}
    for key, mode, result, accepted in agentic_cases.cases(options.data_dir):
        entry: dict[str, Any] = {"digest": case_digest(mode, result, accepted)}
        try:
            outcome = _evaluate_single_agentic_entry(
                handlers[mode], key, json.loads(json.dumps(result)), list(accepted), {"question": []}, "m", "memory_kv"
            )
        except Exception as exc:  # upstream's runner would stop here
            entry["crash"] = type(exc).__name__
        else:
            entry["valid"] = outcome["valid"]
            entry["error_type"] = "" if outcome["valid"] else outcome["error"]["error_type"]
        verdicts[key] = entry
    document = {
        "about": "bfcl-eval's own _evaluate_single_agentic_entry (OpenAICompletionsHandler, prompt and FC) on "
        "agentic_cases.py's synthetic results, recorded by record_agentic.py in a scratch venv; accepted "
        "answers named by memory entry id are read from the data at test time, none is kept here.",
        "bfcl_eval": "2026.3.23",
        "python": sys.version.split()[0],
        "verdicts": verdicts,
    }
    # a case a line: what a re-recording changed reads as a diff
    lines = ",\n".join(f"  {json.dumps(key)}: {json.dumps(entry, sort_keys=True)}" for key, entry in verdicts.items())
    head = json.dumps({name: value for name, value in document.items() if name != "verdicts"}, indent=1)
    options.output.write_text(f'{head[:-2]},\n "verdicts": {{\n{lines}\n }}\n}}\n', encoding="utf-8")
    counts: dict[str, int] = {}
    for entry in verdicts.values():
        label = entry.get("crash") or entry["error_type"] or "valid"
        counts[label] = counts.get(label, 0) + 1
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
