"""A clone of the repository runs what the package ships: a bare `pytest` there collects exactly what
`pytest --pyargs pytest_tooleval.benchmarks` collects, every built-in suite, `-m bfcl` selects BFCL, and a
benchmark run started in the clone never takes on the project's own test configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = {f"pytest_tooleval/benchmarks/test_{suite}.py" for suite in ("acebench", "bfcl", "gpt4tools", "toolalpaca")}


def collected(*args: str) -> tuple[list[str], str]:
    """The test ids `pytest --collect-only` lists in the clone itself, and its whole output; the environment
    is a user's: none of the tests' own settings, the data folder kept."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "TOOLEVAL_", "PYTEST_")) or name == "TOOLEVAL_DATA_DIR"
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", "--tooleval-model=oracle", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line], done.stdout


@pytest.fixture(scope="module")
def bare(data_root: Path) -> list[str]:
    ids, _ = collected("-q")
    return ids


def test_a_bare_pytest_collects_every_shipped_suite_as_pyargs_does(bare: list[str]) -> None:
    assert {test_id.split("::")[0] for test_id in bare} == SHIPPED
    assert sum("test_bfcl.py::" in test_id for test_id in bare) == 3641
    assert sum("test_acebench.py::" in test_id for test_id in bare) == 1023  # en, the default language
    shipped, _ = collected("-q", "--pyargs", "pytest_tooleval.benchmarks")
    assert shipped == bare


def test_a_pyargs_run_in_the_clone_keeps_the_users_settings(data_root: Path) -> None:
    # pytest reads the conftest of every test* folder where it starts when its arguments are no paths, so this
    # run reads the project's tests/conftest.py, which must leave it alone: the endpoint probe stays on
    _, output = collected("--pyargs", "pytest_tooleval.benchmarks", "-k", "normal_atom_bool_0")
    header = next(line for line in output.splitlines() if line.startswith("tooleval: "))
    assert header.startswith("tooleval: model=oracle (cli), data-dir=")
    assert "no-probe" not in header


def test_the_bfcl_marker_selects_bfcl(bare: list[str]) -> None:
    bfcl, _ = collected("-q", "-m", "bfcl")
    assert bfcl == [test_id for test_id in bare if "test_bfcl.py::" in test_id]
