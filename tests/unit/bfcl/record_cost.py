"""Record bfcl-eval's own cost and latency columns on the cases of cost_cases.py, and its price table
(docs/bfcl.md#cost-and-latency).

Run in a scratch venv that has bfcl-eval 2026.3.23 and what its modules import (perf/bfcl_side.py's docstring builds
one), never in CI and never with the project's package:

    /tmp/bfcl-gen/bin/python tests/unit/bfcl/record_cost.py

Each case's rows go through `eval_runner_helper.record_cost_latency` and the result through its
`get_cost_latency_info` under the case's model: the four values (before its CSV writer prints them, and as it prints
them, `str()`), or the exception it raises. The price table is every `MODEL_CONFIG_MAPPING` entry's input and output
price with the two local-model constants, as its canonical sha256. It writes cost_figures.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy reads this folder as the package it is under pytest
    from . import cost_cases
else:  # run as a script, outside any package: the cases are beside it (standard library only)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import cost_cases

OUTPUT = Path(__file__).with_name("cost_figures.json")


def main() -> int:
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")
    from bfcl_eval.constants.eval_config import H100_X8_PRICE_PER_HOUR, LOCAL_SERVER_MAX_CONCURRENT_REQUEST
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
    from bfcl_eval.eval_checker.eval_runner_helper import get_cost_latency_info, record_cost_latency

    recorded: dict[str, Any] = {}
    for name, model, rows in cost_cases.cases():
        table: dict[str, Any] = {}
        record_cost_latency(table, model, rows)
        try:
            values = get_cost_latency_info(model, table[model]["cost"], table[model]["latency"])
        except Exception as exc:  # bfcl's leaderboard stops here
            recorded[name] = {"raises": type(exc).__name__}
            continue
        recorded[name] = {
            "values": [None if value == "N/A" else float(value) for value in values],
            "cells": [str(value) for value in values],
        }
    try:
        get_cost_latency_info("no-such-model", {"input_data": [], "output_data": []}, {"data": []})
        unknown = "none"
    except Exception as exc:
        unknown = type(exc).__name__
    content = {
        "models": {name: [config.input_price, config.output_price] for name, config in MODEL_CONFIG_MAPPING.items()},
        "gpu_price_per_hour": H100_X8_PRICE_PER_HOUR,
        "concurrent_requests": LOCAL_SERVER_MAX_CONCURRENT_REQUEST,
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False)
    expected = {
        "how": "bfcl-eval 2026.3.23's record_cost_latency and get_cost_latency_info on the cases of cost_cases.py "
        "(tests/unit/bfcl/record_cost.py, in the scratch venv): per case the four values and the text its CSV writer "
        "prints, or the exception it raises; the price table's canonical sha256.",
        "cases": recorded,
        "unknown_model_raises": unknown,
        "models": len(MODEL_CONFIG_MAPPING),
        "price_table_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "local_constants": [H100_X8_PRICE_PER_HOUR, LOCAL_SERVER_MAX_CONCURRENT_REQUEST],
    }
    OUTPUT.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    print(len(recorded), "cases;", sum("raises" in case for case in recorded.values()), "raise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
