"""Seeded result rows for bfcl's cost and latency columns (docs/bfcl.md#cost-and-latency).

Standard library only: the recorder (record_cost.py, run in a scratch venv through bfcl-eval's own
`record_cost_latency` and `get_cost_latency_info`) and the test (test_cost.py, through suites/bfcl/cost.py) read the
same cases. A case is a model bfcl knows and the result rows of one run of it, each row holding what bfcl's
generation writes (`latency`, `input_token_count`, `output_token_count`): a value per single-turn row, a list per
turn of one value per request for a multi-turn one.

- `cases()`: (name, model, rows), hand-made ones first (each a branch or a quirk of bfcl's), then seeded mixes.
"""

from __future__ import annotations

import random
from typing import Any

SEED = 20260323
MIXES = 60
#: bfcl's names of a model with prices, one with whole-dollar prices and one it hosts itself (no prices)
PRICED, WHOLE_PRICED, LOCAL = "gpt-4o-2024-11-20", "gpt-4.1-2025-04-14", "deepseek-ai/DeepSeek-R1"
KEYS = ("latency", "input_token_count", "output_token_count")


def row(latency: Any, inputs: Any, outputs: Any) -> dict[str, Any]:
    return {"id": "x", "result": "", "latency": latency, "input_token_count": inputs, "output_token_count": outputs}


def cases() -> list[tuple[str, str, list[dict[str, Any]]]]:
    single = [row(1.25, 812, 17), row(0.5, 903, 40), row(3.75, 1200, 3)]
    turns = [row([[1.5, 2.25], [0.75]], [[100, 220], [340]], [[10, 12], [30]]), row([[4.0]], [[50]], [[5]])]
    found: list[tuple[str, str, list[dict[str, Any]]]] = [
        ("priced, single-turn", PRICED, single),
        ("priced, multi-turn", PRICED, turns),
        ("priced, both kinds", WHOLE_PRICED, single + turns),
        ("local model: the cost from the latencies", LOCAL, single + turns),
        ("local model, no latency: nothing", LOCAL, [row(0, 10, 10), row(None, 20, 5)]),
        ("priced, tokens but no latency", PRICED, [row(0, 10, 10), row("1.5", 20, 5)]),
        ("priced, no output token: no cost", PRICED, [row(1.0, 10, 0), row(2.0, 20, False)]),
        ("one latency: stdev stops bfcl", PRICED, [row(1.0, 10, 10), row(0, 20, 5)]),
        ("one latency, local model", LOCAL, [row(2.5, 10, 10)]),
        ("only booleans: numpy stops bfcl", PRICED, [row(True, 10, 10), row(True, 20, 5)]),
        ("no row", PRICED, []),
        ("rows without counts", PRICED, [{"id": "x", "result": "", "traceback": "..."}]),
        ("whole latencies: an int mean", PRICED, [row(1, 10, 10), row(3, 20, 5), row(2, 5, 5)]),
        ("a boolean among numbers counts 1", PRICED, [row(True, True, 10), row(3, 20, True)]),
        ("numpy rounds the percentile its own way", PRICED, [row(90.385, 10, 10)] * 3),
        ("a half cent", PRICED, [row(1.0, 1000, 0.5), row(2.0, 1000, 0)]),
        (
            "skipped shapes",
            PRICED,
            [row([1.0, 2.0], [[1, 2]], [[1], None]), row([[1.0, [2.0]], []], [[3, "4"]], [[5, 0]]), row({}, [], [[]])],
        ),
        ("a NaN latency", PRICED, [row(float("nan"), 10, 10), row(2.0, 10, 10), row(1.0, 10, 10)]),
        ("an infinite latency", PRICED, [row(float("inf"), 10, 10), row(2.0, 10, 10)]),
        ("an infinite latency, local model", LOCAL, [row(float("inf"), 10, 10), row(2.0, 10, 10)]),
        ("negative values", PRICED, [row(-0.004, -10, 10), row(-0.001, 10, -20)]),
    ]
    seed = random.Random(SEED)
    for number in range(MIXES):
        model = seed.choice((PRICED, WHOLE_PRICED, LOCAL))
        found.append((f"mix {number}", model, [_mixed_row(seed) for _ in range(seed.randint(1, 40))]))
    return found


def _mixed_row(seed: random.Random) -> dict[str, Any]:
    """A row of one of bfcl's shapes, its values now and then zero, a boolean, text, or of another shape."""

    def value(key: str) -> Any:
        pick = seed.random()
        if pick < 0.06:
            return seed.choice((0, 0.0, False, True, None, "2", [1, 2]))
        if key == "latency":
            return round(seed.uniform(0.01, 30.0), seed.choice((1, 2, 3, 17)))
        return seed.randint(1, 9000) if pick > 0.1 else seed.choice((1, 2**40))

    if seed.random() < 0.5:
        return {key: value(key) for key in KEYS if seed.random() < 0.95}
    shape = [seed.randint(1, 3) for _ in range(seed.randint(1, 4))]
    return {key: [[value(key) for _ in range(steps)] for steps in shape] for key in KEYS}
