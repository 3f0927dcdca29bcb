"""--tooleval-repeats k: every sample asked k times over the real client (distinct cache keys, so each repeat is
asked), its own test id per repeat, and the summary's mean, pass^k and flaky samples."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, last_user_message
from mini_acebench import CATEGORIES, RIGHT, SAMPLES, UNVERIFIED, write_mini_acebench


@pytest.fixture
def repeats(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    asked: dict[str, int] = {}

    def answer(body: dict[str, Any]) -> str:
        question = last_user_message(body)
        asked[question] = asked.get(question, 0) + 1
        # the Paris sample is right on its first ask only: flaky; everything else always right
        if "weather in Paris" in question and asked[question] > 1:
            return "[]"
        return next((text for needle, text in RIGHT.items() if needle in question), "[]")

    server = FakeOpenAI(responder=answer).start()
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    yield (
        server,
        [
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=k",
            f"--tooleval-data-dir={data}",
            UNVERIFIED,
            f"--tooleval-categories={CATEGORIES}",
            f"--tooleval-cache-dir={pytester.path / 'cache'}",
            "-p",
            "no:cacheprovider",
            "--tooleval-report=report.json",
            "--tooleval-repeats=3",
            "--tooleval-concurrency=1",
        ],
    )  # asked in order: the first ask of each sample before its repeats
    server.stop()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_each_repeat_is_asked_and_reported(pytester: pytest.Pytester, repeats: Any, workers: list[str]) -> None:
    server, args = repeats
    result = pytester.runpytest_subprocess(
        *args, *workers, "-v", "--tooleval-fail-under=en.normal_atom_bool.pass_k=0.4"
    )
    result.assert_outcomes(passed=3 * SAMPLES - 2, failed=2)
    assert server.stats.requests == 3 * SAMPLES  # the repeats are real samples, not cache hits of the first
    lines = result.stdout.lines
    assert any("[en-normal_atom_bool_0-r3]" in line and "FAILED" in line for line in lines)
    assert any("[en-normal_atom_bool_0]" in line and "PASSED" in line for line in lines)
    result.stdout.fnmatch_lines(
        [
            "repeats: 3 asks of each sample (mean = pass@1; pass^3: passed all 3)",
            "en.normal_atom_bool * 2 * 0.667 * 0.500 * 1*",
            "tooleval repeats: 1 acebench unit flaky (passed some asks, failed others): "
            "en.normal_atom_bool/normal_atom_bool_0",
            "tooleval gate: acebench.en.normal_atom_bool.pass_k = 0.500 >= 0.400 ok",
        ]
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert {row.get("repeat", 1) for row in report["samples"]} == {1, 2, 3}
    block = report["summary"]["acebench"]
    assert block["en"]["categories"]["normal_atom_bool"]["accuracy"] == 1.0  # the tables are the first ask's
    assert block["repeats"]["figures"]["en.normal_atom_bool.mean"] == pytest.approx(4 / 6)
    assert block["repeats"]["flaky"] == ["en.normal_atom_bool/normal_atom_bool_0"]


def test_a_rerun_finds_every_repeat_in_the_cache(pytester: pytest.Pytester, repeats: Any) -> None:
    server, args = repeats
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=3 * SAMPLES - 2, failed=2)
    server.reset_stats()
    pytester.runpytest_subprocess(*args, "--tooleval-cache=reuse").assert_outcomes(passed=3 * SAMPLES - 2, failed=2)
    assert server.stats.requests == 0  # each repeat kept under its own key: the same verdicts again


def test_no_repeats_at_all_is_refused(pytester: pytest.Pytester, repeats: Any) -> None:
    _, args = repeats
    result = pytester.runpytest_subprocess(*args, "--tooleval-repeats=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        "ERROR: --tooleval-repeats: 0 must be at least 1 (1: each sample once)"
    ]


def test_a_comparison_pairs_samples_with_all_their_asks(pytester: pytest.Pytester, repeats: Any) -> None:
    server, args = repeats
    responder = server.responder
    server.responder = lambda body: next(
        (text for needle, text in RIGHT.items() if needle in last_user_message(body)), "[]"
    )
    pytester.runpytest_subprocess(*args, "--tooleval-report=baseline.json").assert_outcomes(passed=3 * SAMPLES)
    server.responder = responder  # now the Paris sample is right on one ask of three
    result = pytester.runpytest_subprocess(*args, "--tooleval-baseline=baseline.json", "--tooleval-no-cache")
    result.assert_outcomes(passed=3 * SAMPLES - 2, failed=2)
    comparison = json.loads((pytester.path / "report.json").read_text())["comparison"]
    entry = next(item for item in comparison["figures"] if item["figure"] == "acebench.en.normal_atom_bool")
    # two samples, each with its three asks: 3/3 and 3/3 before, 1/3 and 3/3 now
    assert entry["kind"] == "mean" and entry["units"] == 2
    assert (entry["baseline"], entry["current"]) == (1.0, pytest.approx(4 / 6))
    assert (entry["pass_to_fail"], entry["fail_to_pass"]) == (1, 0)
    assert [flip["unit"] for flip in comparison["flips"]["pass_to_fail"]] == ["en.normal_atom_bool/normal_atom_bool_0"]
    result.stdout.fnmatch_lines(["acebench.en.normal_atom_bool * 1.000 * 0.667 * -0.333 * exact, 2 *"])
