"""Fixtures of the multi-turn tests: the API tables lifted from the pinned wheel, and the 800 samples."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_tooleval.suites.bfcl.multi_turn.data import load_samples
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from pytest_tooleval.suites.bfcl.upstream import WHEEL_ENV, load_tables


@pytest.fixture(scope="session")
def mt_tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    """The tables of the wheel TOOLEVAL_BFCL_WHEEL points at (the test skips, named, without it)."""
    wheel = os.environ.get(WHEEL_ENV)
    if not wheel:
        pytest.skip(
            f"needs the upstream bfcl-eval 2026.3.23 wheel for the API tables: set {WHEEL_ENV} "
            "(pip download --no-deps bfcl-eval==2026.3.23)"
        )
    return load_tables(tmp_path_factory.mktemp("tables-cache"), True, wheel=Path(wheel))


@pytest.fixture(scope="session")
def mt_samples(bfcl_dir: Path) -> dict[str, list[MultiTurnSample]]:
    """The four categories' samples, by category, read by the suite's loader."""
    return {category: load_samples(bfcl_dir, category) for category in CATEGORIES}
