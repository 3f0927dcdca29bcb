"""Settings are typed: the core options are declared fields of `Settings`, each suite's options a model of its own
(`options_model`), both the same set of the same types as the options table, so mypy --strict checks every read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from pytest_tooleval.settings.options import CORE_OPTIONS, Option, Settings, _value_type
from pytest_tooleval.suites import registered
from toy_suite.toyecho import SUITE as TOYECHO

ROOT = Path(__file__).parents[2]


def declared_and_parsed(model: type[BaseModel], options: tuple[Option, ...]) -> tuple[dict[str, object], ...]:
    declared = {name: field.annotation for name, field in model.model_fields.items() if name != "sources"}
    return declared, {option.name.replace("-", "_"): _value_type(option) for option in options}


def test_the_declared_core_fields_are_the_core_options_of_the_table() -> None:
    declared, parsed = declared_and_parsed(Settings, CORE_OPTIONS)
    assert declared == parsed


@pytest.mark.parametrize("suite", [*registered().values(), TOYECHO], ids=lambda suite: suite.name)
def test_a_suites_options_model_declares_its_options(suite: object) -> None:
    declared, parsed = declared_and_parsed(suite.options_model, tuple(suite.options))  # type: ignore[attr-defined]
    assert declared == parsed


def test_mypy_reports_a_misspelt_setting_and_passes_the_right_names(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    head = ("from pytest_tooleval.settings.options import Settings\n"
            "from pytest_tooleval.suites.gpt4tools.plugin_suite import GPT4ToolsSettings\n\n\n"
            "def read(settings: Settings) -> object:\n")
    wrong = ["settings.gpt4tool_pathh",  # misspelt
             "settings.gpt4tools_path",  # a suite's option: read through the suite's model
             "GPT4ToolsSettings.of(settings).gpt4tool_pathh"]
    right = ["settings.concurrency", "GPT4ToolsSettings.of(settings).gpt4tools_path"]
    (tmp_path / "wrong.py").write_text(head + "".join(f"    {read}\n" for read in wrong) + "    return None\n")
    (tmp_path / "right.py").write_text(head + f"    return ({', '.join(right)})\n")
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"),
                             "--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
                             str(tmp_path / "wrong.py"), str(tmp_path / "right.py")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line for line in errors if "right.py" in line] == [], result.stdout + result.stderr
    head_lines = head.count("\n")
    for number, read in enumerate(wrong, start=head_lines + 1):
        attribute = read.rpartition(".")[2]
        assert any(f"wrong.py:{number}: error:" in line and f'attribute "{attribute}"' in line for line in errors), \
            (read, result.stdout + result.stderr)
