"""Fixtures shared by the plugin's own tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_NO_DATA = (
    "needs the upstream {suite} data: set TOOLEVAL_DATA_DIR to a folder holding {suite}/ "
    "(CI uses ../shared/data)"
)


def _suite_dir(suite: str, marker_file: str) -> Path:
    """The folder with `suite`'s upstream data, from TOOLEVAL_DATA_DIR (the root, or the suite folder itself)."""
    root = os.environ.get("TOOLEVAL_DATA_DIR")
    if root:
        for candidate in (Path(root) / suite, Path(root)):
            if (candidate / marker_file).exists():
                return candidate
    pytest.skip(_NO_DATA.format(suite=suite))


@pytest.fixture(autouse=True)
def _inner_runs_configured(request: pytest.FixtureRequest) -> None:
    """pytester runs get an ini of their own: pytest-asyncio warns on every run without one."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


@pytest.fixture(scope="session")
def acebench_dir() -> Path:
    return _suite_dir("acebench", "MANIFEST.json")


@pytest.fixture(scope="session")
def toolalpaca_dir() -> Path:
    return _suite_dir("toolalpaca", "MANIFEST.json")


@pytest.fixture(scope="session")
def gpt4tools_dir() -> Path:
    return _suite_dir("gpt4tools", "official_metric_cases.jsonl")


pytest_plugins = ["fake_openai_plugin"]
