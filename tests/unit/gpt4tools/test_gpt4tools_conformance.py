"""Every row of official_metric_cases.jsonl must score exactly as upstream evaluate_result.py scored it."""

from __future__ import annotations

import json
import math
from pathlib import Path

from pytest_tooleval.suites.gpt4tools.scoring import score_item

METRICS = ("thought", "action", "args", "sr", "iou")


def _same(ours: object, theirs: float) -> bool:
    return ours == theirs or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs))


def test_every_official_case_agrees_on_every_metric(gpt4tools_dir: Path) -> None:
    lines = (gpt4tools_dir / "official_metric_cases.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert rows, "official_metric_cases.jsonl has no rows"

    mismatches: list[str] = []
    agree = dict.fromkeys(METRICS, 0)
    for row in rows:
        verdict = score_item(row["gt"], row["prediction"])
        label = f"id={row['id']} variant={row['variant']} kind={row['kind']}"
        for metric in METRICS:
            ours, theirs = verdict.details[metric], row[metric]
            if _same(ours, theirs):
                agree[metric] += 1
            else:
                mismatches.append(f"{label} {metric}: ours {ours!r}, upstream {theirs!r}")
        if verdict.valid != (row["sr"] == 1.0):
            mismatches.append(f"{label} valid={verdict.valid} but upstream sr={row['sr']!r}")

    summary = ", ".join(f"{metric} {agree[metric]}/{len(rows)}" for metric in METRICS)
    assert not mismatches, f"{len(mismatches)} mismatches ({summary}):\n" + "\n".join(mismatches)
