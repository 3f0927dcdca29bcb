"""Our verdicts against the ones bfcl-eval's own checker gave, row by row (needs TOOLEVAL_DATA_DIR; bfcl §3-§5).

``bfcl/conformance/official_verdicts.jsonl`` holds 21,396 answers (gold renderings, realistic mistakes, format
breaks) to the 13 single-turn categories, in prompting and function-calling form, each with bfcl's ``valid`` and
``error_type``. Every row must agree on both.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.bfcl.checker import CATEGORIES, RELEVANCE_CATEGORIES, check_answer
from upstream_data import recorded

EXPECTED_ROWS = 21_396


@pytest.fixture
def folder(bfcl_dir: Path) -> Path:
    """The data root's bfcl/, with the verdicts recorded from bfcl-eval's checker (the test skips without them)."""
    recorded(bfcl_dir, "conformance/official_verdicts.jsonl")
    return bfcl_dir


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@cache
def conformance_rows(folder: Path) -> tuple[dict[str, Any], ...]:
    return tuple(read_jsonl(folder / "conformance" / "official_verdicts.jsonl"))


@cache
def samples(folder: Path, category: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(questions by id, possible answers by id) of one category."""
    questions = {entry["id"]: entry for entry in read_jsonl(folder / f"BFCL_v4_{category}.json")}
    answers = {}
    if category not in RELEVANCE_CATEGORIES:
        answers = {entry["id"]: entry for entry in read_jsonl(folder / "possible_answer" / f"BFCL_v4_{category}.json")}
    return questions, answers


def test_the_conformance_file_covers_every_category(folder: Path) -> None:
    rows = conformance_rows(folder)
    assert len(rows) == EXPECTED_ROWS
    assert set(Counter(row["category"] for row in rows)) == set(CATEGORIES)
    assert {row["mode"] for row in rows} == {"prompt", "fc"}


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_verdict_agrees(folder: Path, category: str) -> None:
    questions, answers = samples(folder, category)
    rows = [row for row in conformance_rows(folder) if row["category"] == category]
    assert rows, f"no conformance rows for {category}"
    disagreements = []
    for row in rows:
        ground_truth = answers[row["id"]]["ground_truth"] if answers else None
        verdict = check_answer(category, row["mode"], row["output"], questions[row["id"]]["function"], ground_truth)
        expected = (row["valid"], row["error_type"] or "")
        if (verdict.valid, verdict.error_type) != expected:
            disagreements.append(
                f"{row['id']} variant {row['variant']} ({row['kind']}, {row['mode']}): expected {expected}, "
                f"got {(verdict.valid, verdict.error_type)} {verdict.errors[:1]}; output {str(row['output'])[:200]!r}"
            )
        json.dumps(verdict.decoded, allow_nan=False)  # the decoded calls go into a report as they are
    assert not disagreements, (
        f"{len(disagreements)} of {len(rows)} {category} rows disagree with bfcl-eval; the first 20:\n"
        + "\n".join(disagreements[:20])
    )
