"""A run against a baseline run, paired by sample (--tooleval-baseline, --tooleval-max-regression): the fake
server answers one ACEBench category right, then with some samples flipped to wrong."""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, last_user_message
from pytest_tooleval.suites.acebench.revisions import DEFAULT, revision

DATA = os.environ.get("TOOLEVAL_DATA_DIR")
pytestmark = pytest.mark.skipif(not DATA, reason="needs the upstream data (TOOLEVAL_DATA_DIR)")
CATEGORY = "normal_atom_bool"  # 50 samples, all answerable


@pytest.fixture
def gate_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    """run(wrong=ids, *args) -> (result, report): the category answered right except the `wrong` samples."""
    data = Path(DATA or "").resolve()
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(data))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    common = [f"--tooleval-categories={CATEGORY}", "-p", "no:cacheprovider", "--tooleval-no-cache"]
    # the right answers: what the oracle writes (its report's outputs), by question
    oracle = pytester.runpytest_subprocess("--tooleval-model=oracle", *common, "--tooleval-report=oracle.json")
    assert oracle.ret == 0
    outputs = {row["id"]: row["output"] for row in json.loads((pytester.path / "oracle.json").read_text())["samples"]}
    prompts = data / revision(DEFAULT).folder / "data_all" / "data_en" / f"data_{CATEGORY}.json"  # what the run reads
    questions = {json.loads(line)["question"]: json.loads(line)["id"] for line in prompts.open()}
    server = FakeOpenAI().start()
    wrong: set[str] = set()

    def answer(body: dict[str, Any]) -> str:
        sample = next(sample for question, sample in questions.items() if question in last_user_message(body))
        return "[]" if sample in wrong else outputs[sample]

    server.responder = answer

    def run(flipped: set[str], *args: str, report: str = "current.json") -> tuple[pytest.RunResult, dict[str, Any]]:
        wrong.clear()
        wrong.update(flipped)
        result = pytester.runpytest_subprocess(
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=sk-x",
            *common,
            f"--tooleval-report={report}",
            *args,
        )
        path = pytester.path / report
        return result, json.loads(path.read_text()) if path.exists() else {}

    yield run
    server.stop()


def ids(n: int) -> set[str]:
    return {f"{CATEGORY}_{index}" for index in range(n)}


def figure(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(entry for entry in report["comparison"]["figures"] if entry["figure"] == name)
    return found


def test_two_identical_runs_compare_as_no_change(gate_run: Any) -> None:
    gate_run(set(), report="baseline.json")
    result, report = gate_run(set(), "--tooleval-baseline=baseline.json", "--tooleval-max-regression=overall=0.01")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "Compared with *baseline.json (model fake-model), paired by sample",
            "flipped: none (every paired sample has the baseline's outcome)",
            "*acebench.en.overall: 1.000 -> 1.000, +0.000 * within margin 0.010 ok",
        ]
    )
    for entry in report["comparison"]["figures"]:
        low, high = entry["interval"]
        assert entry["difference"] == 0 and low <= 0 <= high and entry["p"] == 1.0, entry
    category = figure(report, f"acebench.en.{CATEGORY}")
    assert (category["units"], category["pass_to_fail"], category["fail_to_pass"]) == (50, 0, 0)
    assert report["comparison"]["fingerprint_differences"] == []


def test_eight_flips_of_fifty_are_a_significant_regression(gate_run: Any) -> None:
    gate_run(set(), report="baseline.json")
    result, report = gate_run(ids(8), "--tooleval-baseline=baseline.json", f"--tooleval-max-regression={CATEGORY}=0.05")
    assert result.ret == 1
    category = figure(report, f"acebench.en.{CATEGORY}")
    assert (category["baseline"], category["current"], category["pass_to_fail"]) == (1.0, 0.84, 8)
    assert category["p"] == pytest.approx(2 * 0.5**8)  # exact McNemar, 8 discordant pairs all one way
    assert category["interval"][1] < 0
    result.stdout.fnmatch_lines(
        [
            f"tooleval gate: acebench.en.{CATEGORY}: 1.000 -> 0.840, -0.160 ?*?, p=0.00781 "
            "(Holm 0.00781): drop > margin 0.050, significant: REGRESSION",
            "tooleval gate: FAILED (partial run: *)",
        ]
    )
    flipped = {flip["unit"] for flip in report["comparison"]["flips"]["pass_to_fail"]}
    assert flipped == {f"en.{CATEGORY}/{sample}" for sample in ids(8)}
    # named by their test ids, as -k selects them (issue 41), the report's units keeping their keys
    shown = ", ".join(f"en-{CATEGORY}_{index}" for index in range(8))
    result.stdout.fnmatch_lines([f"flipped pass -> fail: 8: {shown}"])
    assert sorted(
        test_id for flip in report["comparison"]["flips"]["pass_to_fail"] for test_id in flip["test_ids"]
    ) == sorted(f"en-{sample}" for sample in ids(8))


def test_four_flips_of_fifty_are_not_evidence(gate_run: Any) -> None:
    gate_run(set(), report="baseline.json")
    result, report = gate_run(ids(4), "--tooleval-baseline=baseline.json", f"--tooleval-max-regression={CATEGORY}=0.05")
    assert result.ret == 0  # the gate decides: a drop of 0.08, but p = 0.125
    assert figure(report, f"acebench.en.{CATEGORY}")["p"] == pytest.approx(0.125)
    result.stdout.fnmatch_lines(
        [
            f"*acebench.en.{CATEGORY}: 1.000 -> 0.920, -0.080 * p=0.125 (Holm 0.125): drop > "
            "margin 0.050, not significant at 0.05 ok",
            "tooleval gate: PASSED (partial run: *)",
        ]
    )
    # the run's other failures do not fail it: the gate is what decides (as with --tooleval-fail-under)
    assert report["gate"]["passed"] is True


def test_a_baseline_made_differently_is_named_or_refused(gate_run: Any) -> None:
    gate_run(set(), report="baseline.json")
    result, report = gate_run(set(), "--tooleval-baseline=baseline.json", "--tooleval-scorer=fixed")
    result.stdout.fnmatch_lines(["tooleval baseline: made differently: scorer was 'official', is 'fixed' *"])
    assert report["comparison"]["fingerprint_differences"] == [
        {"key": "scorer", "baseline": "official", "current": "fixed"}
    ]
    result, _ = gate_run(
        set(),
        "--tooleval-baseline=baseline.json",
        "--tooleval-scorer=fixed",
        "--tooleval-strict-baseline",
        report="strict.json",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert line.startswith("ERROR: --tooleval-strict-baseline: /") and line.endswith(
        "/baseline.json was made differently: scorer was 'official', is 'fixed'; compare runs made alike, or drop "
        "the flag"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--tooleval-max-regression=overall=0.02"],
            "ERROR: --tooleval-max-regression needs a run to compare with: "
            "pass --tooleval-baseline PATH (a previous run's --tooleval-report)",
        ),
        (
            ["--tooleval-baseline=nowhere.json"],
            "ERROR: --tooleval-baseline: no such file */nowhere.json: name a file "
            "a previous run wrote with --tooleval-report",
        ),
    ],
)
def test_a_gate_without_a_baseline_is_one_line(gate_run: Any, args: list[str], message: str) -> None:
    result, _ = gate_run(set(), *args, report="none.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert fnmatch.fnmatch(line, message), line
