"""Repository-level conftest: keep a bare `pytest` in this checkout to the benchmarks.

pytest looks for its ini file before plugins declare their options, so an option value that is a path
outside this folder (`--tooleval-data-dir ../data`) can make it miss pyproject.toml and its `testpaths`.
Then a bare `pytest` would also collect the project's own tests and the packaged copy of the benchmarks;
this hook restores what `testpaths = ["benchmarks"]` says. Explicit paths (`pytest tests`) are untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
BENCHMARKS_ONLY = (HERE / "tests", HERE / "pytest_tooleval")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.inipath is not None or config.invocation_params.dir != HERE:
        return None  # the ini was found, or pytest runs elsewhere (e.g. --pyargs from another folder)
    given = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    for folder in BENCHMARKS_ONLY:
        inside = collection_path == folder or folder in collection_path.parents
        asked_for = any(path == folder or folder in path.parents for path in given)
        if inside and not asked_for:
            return True
    return None
