"""A minimal reader for the prepared ACEBench data, for these tests only (the suite's loader lives elsewhere)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

NORMAL_CATEGORIES = (
    "normal_single_turn_single_function",
    "normal_single_turn_parallel_function",
    "normal_multi_turn_user_adjust",
    "normal_multi_turn_user_switch",
    "normal_similar_api",
    "normal_preference",
    "normal_atom_bool",
    "normal_atom_enum",
    "normal_atom_number",
    "normal_atom_list",
    "normal_atom_object_deep",
    "normal_atom_object_short",
)
SPECIAL_CATEGORIES = ("special_incomplete", "special_error_param", "special_irrelevant")
LANGUAGES = ("en", "zh")


class Record(NamedTuple):
    id: str
    functions: Any
    ground_truth: Any


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@lru_cache(maxsize=None)
def _records(root: str, lang: str, category: str) -> tuple[Record, ...]:
    folder = Path(root) / "data_all" / f"data_{lang}"
    prompts = read_jsonl(folder / f"data_{category}.json")
    answers = read_jsonl(folder / "possible_answer" / f"data_{category}.json")
    assert len(prompts) == len(answers), f"{lang}/{category}: prompt and answer files differ in length"
    # Upstream pairs the two files by line; the ids agree too, which we check rather than assume.
    for prompt, answer in zip(prompts, answers):
        assert prompt["id"] == answer["id"], f"{lang}/{category}: line ids differ ({prompt['id']} vs {answer['id']})"
    return tuple(Record(p["id"], p["function"], a["ground_truth"]) for p, a in zip(prompts, answers))


def records(root: Path, lang: str, category: str) -> tuple[Record, ...]:
    """The category's records, prompt and answer sides paired by line."""
    return _records(str(root), lang, category)


def records_by_id(root: Path, lang: str, category: str) -> dict[str, Record]:
    return {record.id: record for record in records(root, lang, category)}
