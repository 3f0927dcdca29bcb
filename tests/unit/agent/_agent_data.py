"""The prepared ACEBench agent data for these tests, read with the suite's own loader where it has one."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pytest_tooleval.data.files import read_jsonl
from pytest_tooleval.suites.acebench.categories import AGENT_COLLECTION_ORDER as CATEGORIES
from pytest_tooleval.suites.acebench.data import LANGUAGES, load_category, load_prompts

GROUPS = [(lang, category) for lang in LANGUAGES for category in CATEGORIES]


@cache
def samples(root: str, lang: str, category: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """{id: (record, possible_answer)}, paired by line as upstream does (and checked by id)."""
    return {case.id: (case.record, case.answer) for case in load_category(Path(root), lang, category)}


@cache
def gold(root: str) -> dict[str, Any]:
    sequences = json.loads((Path(root) / "agent_gold_sequences.json").read_text(encoding="utf-8"))
    assert isinstance(sequences, dict)
    return sequences


def prompts(root: str) -> dict[str, dict[str, str]]:
    return load_prompts(Path(root))


@cache
def traces(root: str) -> tuple[dict[str, Any], ...]:
    return tuple(read_jsonl(Path(root) / "conformance" / "official_agent_traces.jsonl"))


def observation_text(message: Any) -> str:
    """An execution message in the form the recorded files use: JSON for a list, the string otherwise."""
    return json.dumps(message, ensure_ascii=False) if isinstance(message, list) else message
