"""Fixtures of the multi-turn tests: the pinned wheel, the API tables lifted from it, and the 800 samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.data import load_samples
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from pytest_tooleval.suites.bfcl.upstream import load_tables


@pytest.fixture(scope="session")
def wheel(bfcl_wheel: Path) -> Path:
    """The pinned wheel (tests/conftest.py's `bfcl_wheel`), by the name these tests use."""
    return bfcl_wheel


@pytest.fixture(scope="session")
def tables(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    return load_tables(tmp_path_factory.mktemp("tables-cache"), True, wheel=wheel)


@pytest.fixture(scope="session")
def samples(bfcl_dir: Path) -> dict[str, MultiTurnSample]:
    """The four categories' 800 samples by id, read by the suite's loader."""
    return {sample.id: sample for category in CATEGORIES for sample in load_samples(bfcl_dir, category)}
