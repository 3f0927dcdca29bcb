"""Where the suite finds its files: under the paths pytest collects, skipping the folders pytest skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tooleval.suites.yamlsuite import discovery


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the walk's state is the process's: the run's own is back after the test
    monkeypatch.setattr(discovery, "_roots", discovery._roots)
    monkeypatch.setattr(discovery, "_found", discovery._found)
    for name in (
        "benchmarks/examples/assistant.tooleval.yaml",
        "benchmarks/cases/weather.tooleval.yaml",
        "benchmarks/cases/examples/deep.tooleval.yaml",
        "benchmarks/cases/.hidden/x.tooleval.yaml",
        "benchmarks/cases/notes.yaml",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    return tmp_path


def found(root: Path) -> list[str]:
    return [str(path.relative_to(root)) for path in discovery.suite_files()]


def test_a_pattern_with_a_slash_skips_that_folder_only(tree: Path) -> None:
    # as pytest's norecursedirs reads it: the end of the folder's path, so benchmarks/cases/examples stays
    discovery.configure(tree, ["benchmarks"], [".*", "benchmarks/examples"])
    assert found(tree) == ["benchmarks/cases/examples/deep.tooleval.yaml", "benchmarks/cases/weather.tooleval.yaml"]


def test_a_pattern_without_one_skips_every_folder_of_that_name(tree: Path) -> None:
    discovery.configure(tree, ["benchmarks"], [".*", "examples"])
    assert found(tree) == ["benchmarks/cases/weather.tooleval.yaml"]


def test_a_skipped_folder_named_on_the_command_line_is_walked(tree: Path) -> None:
    discovery.configure(tree, ["benchmarks/examples"], [".*", "benchmarks/examples"])
    assert found(tree) == ["benchmarks/examples/assistant.tooleval.yaml"]
