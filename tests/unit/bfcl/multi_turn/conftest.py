"""Fixtures of the multi-turn tests: the pinned wheel, the API tables lifted from it, and the 800 samples."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.data import load_samples
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from pytest_tooleval.suites.bfcl.upstream import WHEEL_ENV, load_tables


@pytest.fixture(scope="session")
def wheel() -> Path:
    """The wheel TOOLEVAL_BFCL_WHEEL points at (the test skips, named, without it)."""
    found = os.environ.get(WHEEL_ENV)
    if not found:
        pytest.skip(
            f"needs the upstream bfcl-eval 2026.3.23 wheel for the request texts and API tables: set {WHEEL_ENV} "
            "(pip download --no-deps bfcl-eval==2026.3.23)"
        )
    return Path(found)


@pytest.fixture(scope="session")
def tables(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    return load_tables(tmp_path_factory.mktemp("tables-cache"), True, wheel=wheel)


@pytest.fixture(scope="session")
def samples(bfcl_dir: Path) -> dict[str, MultiTurnSample]:
    """The four categories' 800 samples by id, read by the suite's loader."""
    return {sample.id: sample for category in CATEGORIES for sample in load_samples(bfcl_dir, category)}
