"""Samples become tests: ids, markers, selection, and the runs a user makes without a model."""

from __future__ import annotations

import pytest

from benchmark_modules import benchmark_source
from mini_acebench import CATEGORIES as MINI_CATEGORIES
from mini_acebench import UNVERIFIED, write_mini_acebench

THIN_TEST = benchmark_source("acebench")


@pytest.fixture
def mini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        "--tooleval-categories",
        MINI_CATEGORIES,
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


def test_ids_are_language_and_record_id(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("--collect-only", "-q", *mini)
    result.stdout.fnmatch_lines(
        [
            "test_acebench.py::test_acebench[[]en-normal_atom_bool_0[]]",
            "test_acebench.py::test_acebench[[]en-normal_multi_turn_user_adjust_0_1[]]",
            "test_acebench.py::test_acebench[[]en-special_irrelevant_0[]]",
            "7 tests collected*",
        ]
    )


def test_k_selects_one_category(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("--collect-only", "-q", "-k", "special_irrelevant", *mini)
    result.stdout.fnmatch_lines(["*test_acebench[[]en-special_irrelevant_0[]]", "1/7 tests collected (6 deselected)*"])


def test_family_and_language_markers(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("--collect-only", "-q", "-m", "special and en", *mini)
    result.stdout.fnmatch_lines(["2/7 tests collected (5 deselected)*"])


def test_without_a_model_every_sample_is_skipped_with_the_reason(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("-rs", *mini)
    result.assert_outcomes(skipped=7)
    result.stdout.fnmatch_lines(["*no model to evaluate: pass --tooleval-model*"])
    assert "tooleval summary" not in result.stdout.str()


def test_without_model_or_data_one_placeholder_skips(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    pytester.makepyfile(test_acebench=THIN_TEST)
    result = pytester.runpytest("-rs", "--tooleval-offline", f"--tooleval-cache-dir={pytester.path / 'c'}")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no model and no local data*"])


def test_unknown_category_is_a_usage_error(pytester: pytest.Pytester, mini: list[str]) -> None:
    args = [a if a != MINI_CATEGORIES else "normal_atom_bool,special_irelevant" for a in mini]
    result = pytester.runpytest("--tooleval-model", "oracle", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown category 'special_irelevant'*"])


def test_bad_threshold_is_a_usage_error(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-fail-under", "overal:0.8", *mini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --tooleval-fail-under: 'overal:0.8' is not a valid threshold; expected GROUP=FRACTION, "
            "e.g. overall=0.80"
        ]
    )


def test_malformed_data_file_names_file_and_line(pytester: pytest.Pytester, mini: list[str]) -> None:
    data = pytester.path / "data" / "acebench" / "data_all" / "data_en" / "data_normal_atom_bool.json"
    lines = data.read_text().splitlines()
    data.write_text(lines[0] + "\n" + lines[1][:40] + "\n")
    result = pytester.runpytest("--tooleval-model", "oracle", *mini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *data_normal_atom_bool.json:2:41: malformed JSON (Expecting value)"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_run_beside_hypothesis_and_the_asyncio_plugins_is_the_same(
    pytester: pytest.Pytester, mini: list[str]
) -> None:
    """The inner runs of these tests leave the test environment's hypothesis, pytest-asyncio and anyio plugins out
    (tests/conftest.py, for CPU); a user's run may have them: here they are loaded, in the workers too."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("--tooleval-model", "oracle", "-n", "2", "-v", *mini)
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["plugins: *", "*tooleval summary*"])
    plugins = next(line for line in result.outlines if line.startswith("plugins: "))
    assert all(name in plugins for name in ("hypothesis", "asyncio", "anyio", "xdist", "tooleval")), plugins
