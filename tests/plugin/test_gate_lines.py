"""The gate's last lines, over real runs against the fake server: one flip in categories of one case is no
regression (the exact test, not a bootstrap of nothing); a missed error rate names its largest cause; a partial
run says so in the verdict, even under --tb=no -rN -q."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fake_openai import FakeOpenAI, Fault, last_user_message
from mini_acebench import RIGHT, live_mini_run

# three categories of one case each: a user's own small YAML file
CASES = """\
tools:
  - name: noop
    description: Does nothing.
    parameters: {type: object, properties: {}}
cases:
  - {name: alpha, category: first, user: Say alpha., expect: {no_call: true, contains: [alpha]}}
  - {name: beta, category: second, user: Say beta., expect: {no_call: true, contains: [beta]}}
  - {name: gamma, category: third, user: Say gamma., expect: {no_call: true, contains: [gamma]}}
"""


@pytest.fixture
def small(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> list[str]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    (pytester.path / "mine.tooleval.yaml").write_text(CASES, encoding="utf-8")
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-x",
        "--tooleval-no-cache",
        "-p",
        "no:cacheprovider",
    ]


def words(wrong: str = "") -> Any:
    """A responder that says each case's word, but something else for the case whose word is `wrong`."""

    def answer(body: dict[str, Any]) -> str:
        word = last_user_message(body).removeprefix("Say ").rstrip(".")
        return "I would rather not." if word == wrong else f"{word.capitalize()}."

    return answer


def test_one_flip_in_categories_of_one_case_is_not_a_regression(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, small: list[str]
) -> None:
    fake_openai.responder = words()
    assert pytester.runpytest_subprocess(*small, "--tooleval-report=baseline.json").ret == pytest.ExitCode.OK
    fake_openai.responder = words(wrong="gamma")
    result = pytester.runpytest_subprocess(
        *small,
        "--tooleval-baseline=baseline.json",
        "--tooleval-report=now.json",
        "--tooleval-max-regression=overall=0.0",
        "--tb=no",
        "-rN",
        "-q",
    )
    # before: yaml.overall: 1.000 -> 0.667, -0.333 [-0.333, -0.333], p=0.001 (Holm 0.001): ... REGRESSION, exit 1
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(
        [
            "yaml.overall * 1.000 * 0.667 * -0.333 * [[]-0.7*, +0.*[]] * 1 * exact, 3 *",
            "flipped pass -> fail: 1: mine-gamma",
        ]
    )
    assert result.stdout.lines[-4:] == [
        "tooleval gate: yaml.overall: 1.000 -> 0.667, -0.333 [-0.707, +0.196], p=1 (Holm 1): drop > margin 0.000, "
        "not significant at 0.05 ok",
        "tooleval gate: error rate 0.000 <= 0.020 ok",
        "tooleval gate: PASSED",
        f"tooleval report: {pytester.path / 'now.json'}",
    ]
    report = json.loads((pytester.path / "now.json").read_text(encoding="utf-8"))
    overall = next(entry for entry in report["comparison"]["figures"] if entry["figure"] == "yaml.overall")
    assert (overall["test"], overall["units"], overall["pass_to_fail"], overall["p"]) == ("exact", 3, 1, 1.0)
    assert report["gate"]["passed"] is True and report["gate"]["partial"] is None
    # the flip is named as -k selects it (issue 41: `third.accuracy/mine-gamma` selected nothing)
    assert [flip["test_ids"] for flip in report["comparison"]["flips"]["pass_to_fail"]] == [["mine-gamma"]]
    selected = pytester.runpytest_subprocess(*small, "--collect-only", "-q", "-k", "mine-gamma")
    assert [line for line in selected.outlines if "::" in line] == ["mine.tooleval.yaml::test_case[mine-gamma]"]


def test_a_run_of_part_of_the_cases_says_partial_in_its_verdict(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, small: list[str]
) -> None:
    fake_openai.responder = words()
    # a second case of the first category: -k can run part of a category (a category left out whole is not seen
    # by the YAML suite's summary, which knows only the cases that ran)
    (pytester.path / "mine.tooleval.yaml").write_text(
        CASES + "  - {name: delta, category: first, user: Say delta., expect: {no_call: true, contains: [delta]}}\n",
        encoding="utf-8",
    )
    whole = pytester.runpytest_subprocess(*small, "--tooleval-fail-under=overall=0.5", "--tb=no", "-rN", "-q")
    assert whole.ret == pytest.ExitCode.OK
    assert whole.stdout.lines[-1] == "tooleval gate: PASSED"
    part = pytester.runpytest_subprocess(
        *small, "--tooleval-fail-under=overall=0.5", "-k", "not delta", "--tb=no", "-rN", "-q"
    )
    assert part.ret == pytest.ExitCode.OK
    assert part.stdout.lines[-3:] == [
        "tooleval gate: yaml.overall = 1.000 >= 0.500 ok",
        "tooleval gate: error rate 0.000 <= 0.020 ok",
        "tooleval gate: PASSED (partial run: yaml: not every sample was scored)",
    ]


def test_a_missed_error_rate_names_its_largest_cause_in_the_last_lines(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "TOOLEVAL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)

    def answer(body: dict[str, Any]) -> str | Fault:
        question = last_user_message(body)
        if "weather in Paris" in question or "Rome for 3 days" in question:  # both normal_atom_bool samples
            return Fault.http(400, message="this deployment takes no tools")
        if "weather in Oslo" in question:
            return Fault.http(404, message="no such model")
        return next((text for needle, text in RIGHT.items() if needle in question), "[]")

    fake_openai.responder = answer
    live = live_mini_run(pytester, fake_openai.base_url, "fake-model", "sk-x")
    result = pytester.runpytest_subprocess(
        *live, "--tooleval-fail-under=overall=0.0", "--tooleval-markdown=gate.md", "--tb=no", "-rN", "-q"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    tail = result.stdout.lines[-5:]
    assert tail[0].startswith("tooleval gate: acebench.en.overall = ")
    assert tail[1].startswith(
        "tooleval gate: error rate MISSED: 0.429 > 0.020 (2 normal_atom_bool: InfrastructureError: "
    )
    assert tail[1].endswith("; and 1 error of 1 other cause)") and "this deployment takes no tools" in tail[1]
    assert tail[2:] == [
        "tooleval gate: FAILED (partial run: acebench: 12 of 17 categories did not run, 3 samples "
        "or dialogues have no verdict)",
        f"tooleval report: {pytester.path / 'report.json'}",
        f"tooleval report: {pytester.path / 'gate.md'}",
    ]
    gate = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))["gate"]
    cause = gate["largest_cause"]
    assert (cause["category"], cause["count"], cause["other_causes"], cause["other_errors"]) == (
        "normal_atom_bool",
        2,
        1,
        1,
    )
    assert tail[1].endswith(f"({cause['text']})")
    assert gate["partial"] == "acebench: 12 of 17 categories did not run, 3 samples or dialogues have no verdict"
    markdown = (pytester.path / "gate.md").read_text(encoding="utf-8")
    assert "**Gate: FAILED** (partial run: acebench: 12 of 17 categories did not run" in markdown
    assert "- error rate **MISSED**: 0.429 > 0.020 (2 normal_atom_bool: InfrastructureError: " in markdown
