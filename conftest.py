"""Repository-level conftest: keep a bare `pytest` in this checkout to the benchmark tests the package ships.

pytest looks for its ini file before plugins declare their options, so an option value that is a path
outside this folder (`--tooleval-data-dir ../data`) can make it miss pyproject.toml and its `testpaths`.
Then a bare `pytest` would also collect the project's own tests and the tooling beside them; this hook
restores what `testpaths = ["pytest_tooleval/benchmarks"]` says. Explicit paths (`pytest tests`) are untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
BENCHMARKS = HERE / "pytest_tooleval" / "benchmarks"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.inipath is not None or config.invocation_params.dir != HERE:
        return None  # the ini was found, or pytest runs elsewhere (e.g. --pyargs from another folder)
    given = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    if any(path != HERE for path in given):
        return None  # named paths are collected as named
    # the benchmarks, and the folders on the way to them
    if collection_path == BENCHMARKS or BENCHMARKS in collection_path.parents or collection_path in BENCHMARKS.parents:
        return None
    return True
