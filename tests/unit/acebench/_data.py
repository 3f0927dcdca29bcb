"""The prepared ACEBench data for these tests, read by the suite's own loader (pairing by line, id checks)."""

from __future__ import annotations

from pathlib import Path

from pytest_tooleval.data.files import read_jsonl
from pytest_tooleval.suites.acebench.categories import NORMAL_COLLECTION_ORDER as NORMAL_CATEGORIES
from pytest_tooleval.suites.acebench.categories import SPECIAL_CATEGORIES
from pytest_tooleval.suites.acebench.data import (
    LANGUAGES,
    AceCase,
    load_category,
)

# re-exported for the tests
__all__ = ["LANGUAGES", "NORMAL_CATEGORIES", "SPECIAL_CATEGORIES", "read_jsonl", "records", "records_by_id"]


def records(root: Path, lang: str, category: str) -> tuple[AceCase, ...]:
    """The category's records, prompt and answer sides paired by line."""
    return load_category(Path(root), lang, category)


def records_by_id(root: Path, lang: str, category: str) -> dict[str, AceCase]:
    return {record.id: record for record in records(root, lang, category)}
