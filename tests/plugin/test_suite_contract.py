"""The suite contract: a fourth benchmark in a throwaway installed package gets everything the built-in suites
get (ids, markers, -k/-m, its own option, the summary, gate figures, the JSON report with its fingerprint block,
replay, the response cache, xdist), and a run of one suite never reads or needs another suite's data."""

from __future__ import annotations

import json
import os
import socket

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_gpt4tools import ITEMS, write_test_set
from mini_toolalpaca import write_mini_toolalpaca
from pytest_tooleval.suites import REQUIRED
from pytest_tooleval.suites.base import SuitePlugin
from refused_runs import refused_line
from toy_suite.install import install_toy_suite

TOY_TEST = """
import pytest


@pytest.mark.tooleval("toyecho")
def test_toyecho(tooleval_case):
    tooleval_case.check()
"""
WORDS = ["cat", "dog", "elephant", "kangaroo", "hippopotamus"]


@pytest.fixture
def toy(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    site = install_toy_suite(pytester.path / "site")
    pytester.syspathinsert(site)  # this process (in-process runs)
    # subprocess runs; the PYTHONPATH the tests run with stays after it, so they import the plugin under test
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH")))))
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_toy=TOY_TEST)
    return [f"--tooleval-cache-dir={pytester.path / 'cache'}", "-p", "no:cacheprovider"]


def live(server: FakeOpenAI) -> list[str]:
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={server.base_url}",
        "--tooleval-api-key=sk-toy-123456789",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_fourth_suite_from_an_installed_package_runs_like_the_built_in_ones(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, toy: list[str], workers: list[str]
) -> None:
    fake_openai.replies.update({f"word {word}": word for word in WORDS if word != "kangaroo"})
    fake_openai.default = "wallaby"
    # xdist gives its workers the sys.path the controller started with: a fresh process, with PYTHONPATH
    run = pytester.runpytest_subprocess if workers else pytester.runpytest
    result = run(
        *toy,
        *live(fake_openai),
        *workers,
        "-v",
        "--tooleval-report=report.json",
        "--tooleval-fail-under=toyecho.en.short=1,en.long=0.9",
    )
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.re_match_lines(
        [
            r".*(PASSED .*test_toyecho\[toyecho-cat\]|test_toyecho\[toyecho-cat\] PASSED)",
            r".*(FAILED .*test_toyecho\[toyecho-kangaroo\]|test_toyecho\[toyecho-kangaroo\] FAILED)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*tooleval summary*",
            "toyecho en",
            "short * 2/2 * 0 * 1.000 * [[]0.342, 1.000[]]",
            "long * 3/3 * 0 * 0.667 * [[]0.208, 0.939[]]",
            "OVERALL (mean of categories) * 0.833 *",
            "toyecho: 5/5 scored, 4 passed, 1 failed, 0 errors",
            "tooleval gate: toyecho.en.short = 1.000 >= 1.000 ok",
            "tooleval gate: toyecho.en.long MISSED: 0.667 < 0.900 (short by 0.233)",
            "tooleval gate: FAILED",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["fingerprint"]["toyecho"]["shout"] is False
    assert "acebench" not in report["fingerprint"] and set(report["summary"]) == {"toyecho"}
    assert report["summary"]["toyecho"]["figures"]["en.overall"] == pytest.approx((1 + 2 / 3) / 2)
    assert sorted(row["id"] for row in report["samples"]) == sorted(f"echo_{word}" for word in WORDS)
    assert fake_openai.stats.requests == 5
    assert not (pytester.path / "cache" / "acebench").exists()  # no other suite's data was looked for

    fake_openai.reset_stats()  # the same run again, reusing: every answer comes from the response cache
    again = run(*toy, *live(fake_openai), *workers, "--tooleval-cache=reuse")
    again.assert_outcomes(passed=4, failed=1)
    assert fake_openai.stats.requests == 0


def test_the_toy_suite_takes_its_option_markers_and_selection(pytester: pytest.Pytester, toy: list[str]) -> None:
    result = pytester.runpytest(*toy, "--tooleval-model=oracle", "-m", "toyecho_long", "-v")
    result.assert_outcomes(passed=3)
    result = pytester.runpytest(*toy, "--tooleval-model=oracle", "-k", "dog or cat", "--tooleval-toyecho-shout")
    result.assert_outcomes(passed=2)  # the oracle answers as the suite's own option says
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--tooleval-toyecho-shout" in help_text and "toyecho: expect the word in capitals" in help_text
    result = pytester.runpytest(*toy, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.toyecho_long: a long word"])


def test_the_toy_suite_replays_recorded_answers(pytester: pytest.Pytester, toy: list[str]) -> None:
    recorded = pytester.path / "answers.jsonl"
    recorded.write_text("".join(json.dumps({"id": f"echo_{word}", "result": word}) + "\n" for word in WORDS[:4]))
    result = pytester.runpytest(*toy, f"--tooleval-model=replay:{recorded}", "-rE")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*SampleError: no recorded output for en/echo_hippopotamus in *answers.jsonl*"])


def test_the_suite_contract_has_twelve_members() -> None:
    """What a newcomer learns before writing a suite: six declarations, three methods (`load` and `fingerprint`
    to write, `unavailable` optional) and three objects with defaults. Every public name counts."""
    public = {name for name in dir(SuitePlugin) if not name.startswith("_")}
    members = public | set(REQUIRED)  # the declarations are annotations a type checker reads, not attributes
    assert sorted(members) == sorted([*REQUIRED, "unavailable", "load", "fingerprint", "figures", "upstream", "hints"])
    assert len(members) <= 12


# -- one suite, its own data only ------------------------------------------------------------------------


@pytest.fixture
def no_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any download would go to a port nobody listens on, and fail the run loudly."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for suite in ("ACEBENCH", "TOOLALPACA"):
        monkeypatch.setenv(f"TOOLEVAL_{suite}_URL", f"http://127.0.0.1:{port}/{suite.lower()}.tar.gz")
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_GPT4TOOLS_PATH"):
        monkeypatch.delenv(name, raising=False)


def all_benchmark_modules(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        **{f"test_{suite}": benchmark_source(suite) for suite in ("acebench", "toolalpaca", "gpt4tools")}
    )


@pytest.mark.parametrize("selection", [["test_gpt4tools.py"], ["-m", "gpt4tools"], ["-m", "gpt4tools", "-n", "2"]])
def test_gpt4tools_alone_needs_no_acebench_data(
    pytester: pytest.Pytester, no_download: None, selection: list[str]
) -> None:
    all_benchmark_modules(pytester)
    test_set = write_test_set(pytester.path / "items.json")
    predictions = pytester.path / "preds.json"
    predictions.write_text(json.dumps([{"id": item["id"], "output": item["output"]} for item in ITEMS]))
    cache = pytester.path / "cache"
    result = pytester.runpytest(
        f"--tooleval-gpt4tools-path={test_set}",
        f"--tooleval-model=replay:{predictions}",
        f"--tooleval-cache-dir={cache}",
        "-p",
        "no:cacheprovider",
        *selection,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert result.parseoutcomes()["passed"] == 4
    result.stdout.fnmatch_lines(["gpt4tools: 4/4 scored, 4 passed, 0 failed, 0 errors"])
    assert not (cache / "acebench").exists() and not (cache / "toolalpaca").exists()


@pytest.mark.parametrize("selection", [["test_toolalpaca.py"], ["-m", "toolalpaca"], ["-m", "toolalpaca", "-n", "2"]])
def test_toolalpaca_alone_needs_no_acebench_data(
    pytester: pytest.Pytester, no_download: None, selection: list[str]
) -> None:
    all_benchmark_modules(pytester)
    root = write_mini_toolalpaca(pytester.path / "data")
    assert not (root / "acebench").exists()
    episodes = pytester.path / "episodes.jsonl"
    episodes.write_text(
        json.dumps(
            {
                "id": "simulated-Toy_Weather-0",
                "episode": {"input": "q", "output": "It is sunny.", "Final Thought": "done", "intermediate_steps": []},
            }
        )
        + "\n"
    )
    result = pytester.runpytest(
        f"--tooleval-data-dir={root}",
        f"--tooleval-model=replay:{episodes}",
        "--tooleval-judge-model=judge",
        "--tooleval-judge-base-url=http://127.0.0.1:9/v1",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "-k",
        "Toy_Weather-0",
        *selection,
    )
    # an episode with no tool step is not sent to the judge (upstream's rule): scored without any request
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(["toolalpaca: 1/1 scored, 0 passed, 1 failed, 0 errors*"])
    assert not (pytester.path / "cache" / "acebench").exists()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_collected_suite_without_its_data_is_one_line_and_exit_4(
    pytester: pytest.Pytester, no_download: None, workers: list[str]
) -> None:
    all_benchmark_modules(pytester)
    empty = pytester.mkdir("empty")
    result = pytester.runpytest(
        f"--tooleval-data-dir={empty}",
        "--tooleval-model=oracle",
        "-p",
        "no:cacheprovider",
        "test_acebench.py",
        *workers,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # under the default revision, 56dd66c, its own folder of a data root is named (the root's acebench/ is e6db74b)
    expected = (
        f"ERROR: {empty}: no ACEBench data there (expected data_all/data_en/... under it or under "
        f"{empty}/acebench-56dd66c)"
    )
    assert [line for line in result.stderr.lines if line.strip()] == [expected]
    assert "Traceback" not in result.stdout.str() and "INTERNALERROR" not in result.stdout.str()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('("dog", "short")', '("cat", "short")'),
            "tooleval suite 'toyecho': its cases 'echo_cat' and 'echo_cat' have the same test id 'toyecho-cat': "
            "give each case a test id of its own (a variant's must differ too)",
        ),
        (
            ('f"toyecho-{w}"', 'f"echo-{w}"'),
            "tooleval suite 'toyecho': its case 'echo_cat' has the test id 'echo-cat', which starts with none of the "
            "suite's id_prefixes ('toyecho-')",
        ),
        (
            ('suite: str = "toyecho"', 'suite: str = "echo"'),
            "tooleval suite 'toyecho': its case 'echo_cat' names the suite 'echo': a case's suite is the SuitePlugin's "
            "name",
        ),
        (
            ('f"toyecho_{category}"', 'f"toy_{category}"'),
            "tooleval suite 'toyecho': its case 'echo_cat' is marked 'toy_short', which the suite's markers do not "
            "declare",
        ),
    ],
    ids=["same-test-id", "undeclared-prefix", "other-suite", "undeclared-marker"],
)
def test_cases_the_core_cannot_rely_on_stop_the_run_at_load(
    pytester: pytest.Pytester, toy: list[str], change: tuple[str, str], message: str
) -> None:
    """pytest would run two cases of one id as `id0` and `id1`, the xdist controller finds a test's suite by its
    prefix, and `-m` rules suites out by their declared marks: such cases are refused in one line before anything
    is asked."""
    module = pytester.path / "site" / "toyecho_suite" / "__init__.py"
    text = module.read_text(encoding="utf-8")
    assert change[0] in text
    module.write_text(text.replace(change[0], change[1]), encoding="utf-8")
    assert refused_line(pytester.runpytest_subprocess(*toy, "--tooleval-model=oracle")) == f"ERROR: {message}"
