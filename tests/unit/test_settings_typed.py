"""Settings are typed: the core options are declared fields of `Settings`, each suite's options a model of its own
(`options_model`, whose fields are the suite's options table), both the same set of the same types as the table,
so mypy --strict checks every read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from pytest_tooleval.errors import ToolevalUsageError
from pytest_tooleval.settings.options import (
    CORE_OPTIONS,
    Option,
    Settings,
    SuiteSettings,
    _value_type,
    option_field,
    parse_positive,
)
from pytest_tooleval.suites import registered
from pytest_tooleval.suites.base import SuitePlugin
from toy_suite.toyecho import SUITE as TOYECHO

ROOT = Path(__file__).parents[2]


def declared_and_parsed(
    model: type[BaseModel], options: tuple[Option, ...]
) -> tuple[dict[str, object], dict[str, object]]:
    declared: dict[str, object] = {
        name: field.annotation for name, field in model.model_fields.items() if name != "sources"
    }
    return declared, {option.name.replace("-", "_"): _value_type(option) for option in options}


def test_the_declared_core_fields_are_the_core_options_of_the_table() -> None:
    declared, parsed = declared_and_parsed(Settings, CORE_OPTIONS)
    assert declared == parsed


@pytest.mark.parametrize("suite", [*registered().values(), TOYECHO], ids=lambda suite: suite.name)
def test_a_suites_options_model_declares_its_options(suite: SuitePlugin[Any]) -> None:
    declared, parsed = declared_and_parsed(suite.options_model, suite.options_model.declared_options())
    assert declared == parsed


def test_a_suites_options_table_is_read_from_its_fields() -> None:
    class Mine(SuiteSettings):
        mine_switch: bool = option_field("a switch", False)
        mine_mode: Literal["a", "b"] = option_field("a or b", "a")
        mine_list: tuple[str, ...] = option_field("a comma list", ())
        mine_key: str | None = option_field("a key", secret=True)
        mine_folder: str | None = option_field("a folder", path=True)
        mine_rate: float = option_field("more than 0", 1.5, parse_positive)

    switch, mode, words, key, folder, rate = Mine.declared_options()
    assert switch.parse and mode.parse and words.parse and rate.parse  # each has its parser (key: below)
    assert (switch.name, switch.flag, switch.parse("mine-switch", "true")) == ("mine-switch", True, True)
    with pytest.raises(ToolevalUsageError, match="choose one of a, b"):
        mode.parse("mine-mode", "c")  # a Literal field's parser is a choice
    assert words.parse("mine-list", "x, y") == ("x", "y")
    assert (key.secret, key.parse, folder.path, rate.default) == (True, None, True, 1.5)
    with pytest.raises(ToolevalUsageError, match=r"more than 0|positive"):
        rate.parse("mine-rate", "0")


def test_a_field_declared_without_option_field_or_of_an_unparsed_type_is_refused() -> None:
    class Bare(SuiteSettings):
        bare_count: int

    class Odd(SuiteSettings):
        odd_prices: dict[str, float] = option_field("prices", {})

    with pytest.raises(ToolevalUsageError, match=r"Bare.bare_count: declare the option with .*option_field"):
        Bare.declared_options()
    with pytest.raises(ToolevalUsageError, match=r"Odd.odd_prices: no parser for a field of type .*parse="):
        Odd.declared_options()


@pytest.mark.slow  # a mypy run of 20 s; the typed settings are also held by mypy --strict over the package
def test_mypy_reports_a_misspelt_setting_and_passes_the_right_names(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    head = (
        "from pytest_tooleval.settings.options import Settings\n"
        "from pytest_tooleval.suites.gpt4tools.plugin_suite import GPT4ToolsSettings\n\n\n"
        "def read(settings: Settings) -> object:\n"
    )
    wrong = [
        "settings.gpt4tool_pathh",  # misspelt
        "settings.gpt4tools_path",  # a suite's option: read through the suite's model
        "GPT4ToolsSettings.of(settings).gpt4tool_pathh",
    ]
    right = ["settings.concurrency", "GPT4ToolsSettings.of(settings).gpt4tools_path"]
    (tmp_path / "wrong.py").write_text(head + "".join(f"    {read}\n" for read in wrong) + "    return None\n")
    (tmp_path / "right.py").write_text(head + f"    return ({', '.join(right)})\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(tmp_path / "wrong.py"),
            str(tmp_path / "right.py"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line for line in errors if "right.py" in line] == [], result.stdout + result.stderr
    head_lines = head.count("\n")
    for number, read in enumerate(wrong, start=head_lines + 1):
        attribute = read.rpartition(".")[2]
        assert any(f"wrong.py:{number}: error:" in line and f'attribute "{attribute}"' in line for line in errors), (
            read,
            result.stdout + result.stderr,
        )
