"""Readers for the prepared ACEBench agent data, for these tests only (the suite's loader lives elsewhere)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh")
CATEGORIES = ("agent_multi_step", "agent_multi_turn")
GROUPS = [(lang, category) for lang in LANGUAGES for category in CATEGORIES]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@cache
def samples(root: str, lang: str, category: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """{id: (record, possible_answer)}, paired by line as upstream does (and checked by id)."""
    folder = Path(root) / "data_all" / f"data_{lang}"
    records = _jsonl(folder / f"data_{category}.json")
    answers = _jsonl(folder / "possible_answer" / f"data_{category}.json")
    assert [r["id"] for r in records] == [a["id"] for a in answers], f"{lang}/{category}: files not aligned"
    return {r["id"]: (r, a) for r, a in zip(records, answers, strict=True)}


@cache
def gold(root: str) -> dict[str, Any]:
    return json.loads((Path(root) / "agent_gold_sequences.json").read_text(encoding="utf-8"))


@cache
def prompts(root: str) -> dict[str, dict[str, str]]:
    return json.loads((Path(root) / "prompts.json").read_text(encoding="utf-8"))


@cache
def traces(root: str) -> tuple[dict[str, Any], ...]:
    return tuple(_jsonl(Path(root) / "conformance" / "official_agent_traces.jsonl"))


def observation_text(message: Any) -> str:
    """An execution message in the form the recorded files use: JSON for a list, the string otherwise."""
    return json.dumps(message, ensure_ascii=False) if isinstance(message, list) else message
