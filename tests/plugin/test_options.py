"""Options: CLI > TOOLEVAL_* env > ini > default, the header line, the cost of an unused plugin, scorer modes."""

from __future__ import annotations

import json

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_acebench import UNVERIFIED, write_mini_acebench

THIN_TEST = benchmark_source("acebench")


@pytest.fixture
def mini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "--tooleval-categories=normal_atom_bool",
        "-p",
        "no:cacheprovider",
    ]


def test_header_shows_values_and_where_they_came_from(
    pytester: pytest.Pytester, mini: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLEVAL_TEMPERATURE", "0.3")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-header-secret")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\ntooleval_max_tokens = 77\n")
    result = pytester.runpytest("--tooleval-model", "oracle", "--collect-only", *mini)
    header = next(line for line in result.stdout.lines if line.startswith("tooleval:"))
    assert "model=oracle (cli)" in header
    assert "temperature=0.3 (env)" in header
    assert "max-tokens=77 (ini)" in header
    assert "api-key=set (env OPENAI_API_KEY)" in header
    # defaults are left out, but for the two the figures depend on whatever else is set (docs/options.md)
    defaults = [
        part.removesuffix(" (default)")
        for part in header.removeprefix("tooleval: ").split(", ")
        if part.endswith(" (default)")
    ]
    assert defaults == ["acebench-revision=56dd66c", "scorer=official"] or defaults == [
        "scorer=official",
        "acebench-revision=56dd66c",
    ]
    assert "sk-header-secret" not in result.stdout.str()


def test_cli_beats_env_beats_ini(pytester: pytest.Pytester, mini: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\ntooleval_language = zh\n")
    monkeypatch.setenv("TOOLEVAL_LANGUAGE", "en")
    result = pytester.runpytest("--tooleval-model", "oracle", "--collect-only", "-q", *mini)
    result.stdout.fnmatch_lines(["*test_acebench[[]en-normal_atom_bool_0[]]"])
    result = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-language", "zh", "--collect-only", *mini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the mini tree has no zh prompts: the CLI value was used
    result.stderr.fnmatch_lines(["*prompts.json: model_inference/prompt_zh.py has no *_ZH"])


def test_bad_choice_names_option_value_and_choices(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-scorer", "lenient", *mini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --tooleval-scorer: 'lenient' is not valid; choose one of official, fixed"])
    result = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-scorer", "offical", *mini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --tooleval-scorer: 'offical' is not valid; choose one of official, fixed (did you mean 'official'?)"]
    )


def test_an_unused_plugin_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
import sys

def test_plain():
    assert "openai" not in sys.modules
    assert "pytest_tooleval.suites.acebench.checker" not in sys.modules
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_fixed_scorer_decides_the_outcome_and_both_verdicts_are_reported(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, mini: list[str]
) -> None:
    # ACEBench quirk: top-level numbers are only type-checked, so days=99 passes the official scorer
    fake_openai.replies.update(
        {"Rome for 3 days": "[get_weather(city='Rome', days=99)]", "weather in Paris": "[get_weather(city='Paris')]"}
    )
    live = ["--tooleval-model", "m", f"--tooleval-base-url={fake_openai.base_url}", "--tooleval-api-key=sk-x"]
    official = pytester.runpytest(*live, *mini, "--tooleval-report=official.json")
    official.assert_outcomes(passed=2)
    fixed = pytester.runpytest(*live, *mini, "--tooleval-scorer", "fixed", "--tooleval-report=fixed.json")
    fixed.assert_outcomes(passed=1, failed=1)
    fixed.stdout.fnmatch_lines(["*normal_atom_bool_1*(scorer: fixed)*", "*note: the official scorer says valid*"])
    for name in ("official.json", "fixed.json"):
        report = json.loads((pytester.path / name).read_text())
        rome = next(s for s in report["samples"] if s["id"] == "normal_atom_bool_1")
        assert (rome["valid"], rome["details"]["fixed_valid"]) == (True, False)
    assert json.loads((pytester.path / "fixed.json").read_text())["fingerprint"]["scorer"] == "fixed"
