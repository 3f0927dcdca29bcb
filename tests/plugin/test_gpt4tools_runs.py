"""GPT4Tools end to end: the real openai client against the fake server, replayed upstream predictions, xdist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_gpt4tools import ITEMS, RIGHT, THOUGHT, tool_step, write_test_set
from pytest_tooleval.suites.gpt4tools.metrics import ItemMetrics, aggregate, uses_tool

THIN_TEST = benchmark_source("gpt4tools")

KEY = "sk-test-0123456789abcdef"
INSTRUCTIONS = {str(item["id"]): str(item["instruction"]) for item in ITEMS}
GOLD = {str(item["id"]): str(item["output"]) for item in ITEMS}


@pytest.fixture
def test_set(pytester: pytest.Pytester) -> Path:
    return write_test_set(pytester.path / "gpt4tools_test.json")


@pytest.fixture
def base_args(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_GPT4TOOLS_PATH"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_gpt4tools=THIN_TEST)  # and no other suite's data anywhere
    return [f"--tooleval-cache-dir={pytester.path / 'cache'}", "--tooleval-offline", "-p", "no:cacheprovider"]


@pytest.fixture
def live_args(base_args: list[str], fake_openai: FakeOpenAI) -> list[str]:
    return [
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        KEY,
        *base_args,
    ]


@pytest.fixture
def run_args(live_args: list[str], test_set: Path) -> list[str]:
    return [*live_args, f"--tooleval-gpt4tools-path={test_set}"]


def read_report(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, Any]:
    report = json.loads((pytester.path / name).read_text())
    assert isinstance(report, dict)
    return report


def write_json(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_right_answers_pass_and_the_three_way_table_is_printed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    result = pytester.runpytest(*run_args, "--tooleval-report", "report.json")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*tooleval summary*",
            "GPT4Tools (upstream-compatible)",
            "items * scored/total * errors * SR_thought * SR_act * SR_args * SR * IoU",
            "all * 4/4 * 0 * 1.000 * 1.000 * 1.000 * 1.000 * 1.000",
            "tool-use * 2/2 * 0 * 1.000 * 1.000 * 1.000 * 1.000 * 1.000",
            "no-tool * 2/2 * 0 * 1.000 * 1.000 * 1.000 * 1.000 * 1.000",
            "gpt4tools: 4/4 scored, 4 passed, 0 failed, 0 errors",
        ]
    )
    # upstream's inference: the raw instruction as the whole prompt, greedy, 512 new tokens, no stop strings
    bodies = sorted(fake_openai.stats.json_bodies, key=lambda body: body["messages"][0]["content"])
    assert [body["messages"] for body in bodies] == [
        [{"role": "user", "content": text}] for text in sorted(INSTRUCTIONS.values())
    ]
    assert {(body["max_tokens"], body["temperature"], "stop" in body) for body in bodies} == {(512, 0.0, False)}
    report = read_report(pytester)
    assert report["fingerprint"]["gpt4tools"]["max_tokens"] == 512
    assert report["fingerprint"]["gpt4tools"]["stop"] is None
    subsets = report["summary"]["gpt4tools"]["subsets"]
    assert {key: (value["n"], value["total"], value["sr"]) for key, value in subsets.items()} == {
        "all": (4, 4, 1.0),
        "tool": (2, 2, 1.0),
        "no_tool": (2, 2, 1.0),
    }
    assert {sample["id"]: sample["category"] for sample in report["samples"]} == {
        "1": "tool",
        "2": "tool",
        "3": "no_tool",
        "q-4": "no_tool",
    }


def test_wrong_answers_fail_with_the_metrics_and_both_outputs(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["REQ-1"] = tool_step("Answer Question About The Image", "image/abcdefgh.png")
    # a different image and a paraphrased question: args 0.9 >= 0.5, so the item still passes
    fake_openai.replies["REQ-2"] = tool_step(
        "Answer Question About The Image", "image/zzzzzzzz.png, what colour is the car?"
    )
    fake_openai.replies["REQ-3"] = f"{THOUGHT}No\nParis."  # no "AI: ", so the thought is forced to 0
    result = pytester.runpytest(*run_args, "--tooleval-report", "report.json")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*gpt4tools en/1: action (scorer: official)",
            '  error:    ["action"]',
            f"  expected: {THOUGHT}Yes",
            "Action: Segment the Image",
            '  decoded:  {"thoughts": [[]"Yes"[]], "actions": [[]"Answer Question About The Image"[]], *',
            "  thought: 1.0",
            "  action: 0.0",
            "  args: 1.0",
            "  sr: 0.0",
            "  iou: 0.666666*",
            f"  output:   {THOUGHT}Yes",
            "Action: Answer Question About The Image",
        ]
    )
    result.stdout.fnmatch_lines(["*gpt4tools en/3: thought (scorer: official)", "  thought: 0.0", "  iou: 1.0"])
    result.stdout.fnmatch_lines(
        ["all * 4/4 * 0 * 0.750 * 0.500 * 0.725 * 0.500 * 0.908", "tool-use * 2/2 *", "no-tool * 2/2 *"]
    )
    samples = {sample["id"]: sample for sample in read_report(pytester)["samples"]}
    assert samples["2"]["outcome"] == "passed"
    assert samples["2"]["details"]["args"] == pytest.approx(0.9)


def test_without_a_test_set_file_one_line_says_where_to_get_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live_args: list[str]
) -> None:
    result = pytester.runpytest(*live_args, "-rs")
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_gpt4tools.py:*: GPT4Tools: no test-set file; download gpt4tools_test_unseen.json by "
            "hand from the links in the GPT4Tools README (github.com/AILab-CVC/GPT4Tools; Google Drive id *), "
            "then pass --tooleval-gpt4tools-path FILE or set TOOLEVAL_GPT4TOOLS_PATH",
        ]
    )
    assert "tooleval summary" not in result.stdout.str()
    assert fake_openai.stats.requests == 0


def test_the_environment_variable_names_the_file(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live_args: list[str],
    test_set: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLEVAL_GPT4TOOLS_PATH", str(test_set))
    fake_openai.replies.update(RIGHT)
    result = pytester.runpytest(*live_args)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([f"tooleval: *gpt4tools-path={test_set} (env)*"])


def test_the_ini_file_names_the_file_and_the_command_line_wins(
    pytester: pytest.Pytester, base_args: list[str], test_set: Path
) -> None:
    pytester.makeini(f"[pytest]\nasyncio_default_fixture_loop_scope = function\ntooleval_gpt4tools_path = {test_set}\n")
    result = pytester.runpytest("--tooleval-model", "oracle", *base_args)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([f"tooleval: *gpt4tools-path={test_set} (ini)*"])
    one_item = write_test_set(pytester.path / "one.json", ITEMS[:1])
    result = pytester.runpytest("--tooleval-model", "oracle", f"--tooleval-gpt4tools-path={one_item}", *base_args)
    result.assert_outcomes(passed=1)


def test_an_explicit_max_tokens_replaces_upstreams_512(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    pytester.runpytest(*run_args, "--tooleval-max-tokens", "64").assert_outcomes(passed=4)
    assert {body["max_tokens"] for body in fake_openai.stats.json_bodies} == {64}


def test_the_stop_flag_sends_the_stop_and_labels_the_variant(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    result = pytester.runpytest(*run_args, "--tooleval-gpt4tools-stop", "--tooleval-report", "report.json")
    result.assert_outcomes(passed=4)
    assert [body["stop"] for body in fake_openai.stats.json_bodies] == [["Observation:"]] * 4
    result.stdout.fnmatch_lines(["GPT4Tools (variant: stop at 'Observation:', not upstream-compatible)"])
    report = read_report(pytester)
    assert report["fingerprint"]["gpt4tools"]["stop"] == ["Observation:"]
    assert (report["summary"]["gpt4tools"]["variant"], report["summary"]["gpt4tools"]["upstream_compatible"]) == (
        "stop-at-observation",
        False,
    )


def test_the_oracle_passes_every_item(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    result = pytester.runpytest("--tooleval-model", "oracle", f"--tooleval-gpt4tools-path={test_set}", *base_args)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["all * 4/4 * 0 * 1.000 * 1.000 * 1.000 * 1.000 * 1.000"])


def test_upstreams_nan_is_null_in_the_report(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    # a gold answer with an action but no thought line, answered alike: upstream's thought is a mean of nothing
    bare = "Action: Segment the Image\nAction Input: image/abcdefgh.png\n"
    write_test_set(test_set, [*ITEMS, {"id": 5, "instruction": "REQ-5", "input": "", "output": bare}])
    result = pytester.runpytest(
        "--tooleval-model",
        "oracle",
        f"--tooleval-gpt4tools-path={test_set}",
        "--tooleval-report",
        "report.json",
        *base_args,
    )
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["all * 5/5 * 0 * - * 1.000 * 1.000 * 1.000 * 1.000"])

    def reject(constant: str) -> None:
        raise AssertionError(f"{constant} in report.json")

    report = json.loads((pytester.path / "report.json").read_text(), parse_constant=reject)
    assert {sample["id"]: sample["details"]["thought"] for sample in report["samples"]}["5"] is None
    assert report["summary"]["gpt4tools"]["subsets"]["tool"]["thought"] is None


def test_a_bad_test_set_is_one_line_naming_the_file_and_the_item(
    pytester: pytest.Pytester, run_args: list[str], test_set: Path
) -> None:
    items = [dict(item) for item in ITEMS]
    del items[1]["output"]
    write_test_set(test_set, items)
    result = pytester.runpytest(*run_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # found before any test runs
    result.stderr.fnmatch_lines([f"ERROR: --tooleval-gpt4tools-path: {test_set}: item [[]1[]] (id 2): output: missing"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_markers_select_tool_and_no_tool_items(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    result = pytester.runpytest(
        "--collect-only", "-q", "-m", "gpt4tools_no_tool", f"--tooleval-gpt4tools-path={test_set}", *base_args
    )
    result.stdout.fnmatch_lines(
        [
            "test_gpt4tools.py::test_gpt4tools[[]gpt4tools-3[]]",
            "test_gpt4tools.py::test_gpt4tools[[]gpt4tools-q-4[]]",
            "2/4 tests collected (2 deselected)*",
        ]
    )


def test_the_gate_reads_the_gpt4tools_figures(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["REQ-1"] = tool_step("Answer Question About The Image", "image/abcdefgh.png")
    result = pytester.runpytest(*run_args, "--tooleval-fail-under", "gpt4tools.sr=0.7,gpt4tools.tool.sr=0.6")
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "tooleval gate: gpt4tools.sr = 0.750 >= 0.700 ok",
            "tooleval gate: gpt4tools.tool.sr MISSED: 0.500 < 0.600 (short by 0.100)",
        ]
    )


# -- replay of upstream prediction files -------------------------------------------------------------------


def local_output(item_id: str, continuation: str | None = None) -> str:
    """What upstream saves for a local model: the decoded prompt followed by the generation."""
    return INSTRUCTIONS[item_id] + (GOLD[item_id] if continuation is None else continuation)


def test_replay_of_an_upstream_prediction_file(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    predictions = write_json(
        pytester.path / "preds.json",
        [
            {"id": 1, "output": local_output("1")},
            {"id": 2, "output": [local_output("2"), "a second sample upstream ignores"]},
            {"id": 3, "output": local_output("3", f"{THOUGHT}Yes\nAction: Segment the Image\n")},
        ],
    )
    result = pytester.runpytest(
        f"--tooleval-model=replay:{predictions}",
        f"--tooleval-gpt4tools-path={test_set}",
        "--tooleval-report",
        "report.json",
        *base_args,
    )
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*no recorded output for en/q-4 in *preds.json*"])
    result.stdout.fnmatch_lines(["all * 3/4 * 1 * 0.667 *", "tool-use * 2/2 * 0 *", "no-tool * 1/2 * 1 *"])
    samples = {sample["id"]: sample for sample in read_report(pytester)["samples"]}
    assert samples["1"]["output"] == GOLD["1"].strip()  # scored and reported without the prompt


def test_replay_of_chunked_prediction_files(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    folder = pytester.path / "save" / "run"
    chunks: list[list[dict[str, object]]] = [[] for _ in range(11)]
    chunks[0] = [{"id": 1, "output": GOLD["1"]}]
    chunks[1] = [{"id": 2, "output": GOLD["2"]}]
    chunks[2] = [{"id": 3, "output": GOLD["3"]}]
    chunks[3] = [{"id": "q-4", "output": GOLD["q-4"]}]
    chunks[10] = [{"id": 3, "output": GOLD["3"]}]  # chunk 10 is read too; a record repeated exactly is read once
    for number, rows in enumerate(chunks):
        write_json(folder / f"run_{number}.json", rows)
    result = pytester.runpytest(
        f"--tooleval-model=replay:{folder}", f"--tooleval-gpt4tools-path={test_set}", *base_args
    )
    result.assert_outcomes(passed=4)


def test_chunks_recording_an_item_differently_are_one_line(
    pytester: pytest.Pytester, base_args: list[str], test_set: Path
) -> None:
    """Upstream's gather keeps the last record of an id; which of two different outputs is the answer is not the
    plugin's to guess (issue 40): the run stops, naming both."""
    folder = pytester.path / "save" / "run"
    first = write_json(folder / "run_0.json", [{"id": 3, "output": "Thought: Do I need to use a tool? Yes"}])
    second = write_json(folder / "run_10.json", [{"id": 1, "output": GOLD["1"]}, {"id": 3, "output": GOLD["3"]}])
    result = pytester.runpytest(
        f"--tooleval-model=replay:{folder}", f"--tooleval-gpt4tools-path={test_set}", *base_args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --tooleval-model replay:{folder}: id '3' is recorded twice with different contents ({first} item "
        f"[0], {second} item [1]): keep one row per id (a row repeated exactly is read once)"
    ]


def test_replay_of_json_lines_result_rows(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    rows = [{"id": item_id, "result": gold} for item_id, gold in GOLD.items()]
    rows[0]["result"] = f"{THOUGHT}No\nAI: I cannot see images."
    predictions = pytester.path / "results.jsonl"
    predictions.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    result = pytester.runpytest(
        f"--tooleval-model=replay:{predictions}", f"--tooleval-gpt4tools-path={test_set}", *base_args
    )
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*gpt4tools en/1: thought (scorer: official)"])


@pytest.mark.parametrize(("mode", "outcome"), [("auto", "failed"), ("yes", "passed"), ("no", "failed")])
def test_prompt_in_output_decides_how_a_misdecoded_prompt_is_cut(
    pytester: pytest.Pytester, base_args: list[str], test_set: Path, mode: str, outcome: str
) -> None:
    # a decode one character longer than the instruction: upstream cuts len(instruction) characters regardless
    decoded = INSTRUCTIONS["3"].replace("Let's think", "Let's  think") + GOLD["3"]
    predictions = write_json(pytester.path / "preds.json", [{"id": 3, "output": decoded}])
    result = pytester.runpytest(
        f"--tooleval-model=replay:{predictions}",
        f"--tooleval-gpt4tools-path={test_set}",
        f"--tooleval-gpt4tools-prompt-in-output={mode}",
        "-k",
        "gpt4tools-3",
        *base_args,
    )
    result.assert_outcomes(**{outcome: 1})


def test_a_bad_prediction_file_is_one_line(pytester: pytest.Pytester, base_args: list[str], test_set: Path) -> None:
    predictions = write_json(pytester.path / "preds.json", [{"id": 1}])
    result = pytester.runpytest(
        f"--tooleval-model=replay:{predictions}", f"--tooleval-gpt4tools-path={test_set}", *base_args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --tooleval-model replay:{predictions}: {predictions}: item [[]0[]] (id 1): output: missing"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_xdist_run_aggregates_the_table_on_the_controller(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["REQ-1"] = tool_step("Answer Question About The Image", "image/abcdefgh.png")
    result = pytester.runpytest_subprocess(*run_args, "-n", "2", "--tooleval-report", "report.json")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*tooleval summary*", "all * 4/4 * 0 * 1.000 * 0.750 * 1.000 * 0.750 * 0.917"])
    subsets = read_report(pytester)["summary"]["gpt4tools"]["subsets"]
    assert (subsets["tool"]["sr"], subsets["no_tool"]["sr"]) == (0.5, 1.0)


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_official_metric_cases_score_identically_through_the_plugin(
    pytester: pytest.Pytester, base_args: list[str], gpt4tools_dir: Path, variant: int
) -> None:
    """Each variant of the upstream-scored rows, replayed as a prediction file: every item's five numbers and
    the summary's means equal the values upstream's evaluator computed."""
    lines = (gpt4tools_dir / "official_metric_cases.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [row for row in map(json.loads, filter(str.strip, lines)) if row["variant"] == variant]
    test_set = write_json(pytester.path / "test.json", [row["gt"] for row in rows])
    predictions = write_json(
        pytester.path / "preds.json", [{"id": row["id"], "output": row["prediction"]} for row in rows]
    )
    result = pytester.runpytest(
        f"--tooleval-model=replay:{predictions}",
        f"--tooleval-gpt4tools-path={test_set}",
        "--tooleval-gpt4tools-prompt-in-output=no",
        "--tooleval-report",
        "report.json",
        *base_args,
    )
    passed = sum(1 for row in rows if row["sr"] == 1.0)
    result.assert_outcomes(passed=passed, failed=len(rows) - passed)
    report = read_report(pytester)
    samples = {sample["id"]: sample["details"] for sample in report["samples"]}
    metrics = ("thought", "action", "args", "sr", "iou")
    assert [[samples[str(row["id"])][m] for m in metrics] for row in rows] == [
        [row[m] for m in metrics] for row in rows
    ]
    expected = aggregate(
        ItemMetrics(**{m: row[m] for m in metrics}, uses_tool=uses_tool(row["gt"]["output"])) for row in rows
    )
    subsets = report["summary"]["gpt4tools"]["subsets"]
    for key, means in zip(("all", "tool", "no_tool"), (expected.overall, expected.tool, expected.no_tool), strict=True):
        assert [subsets[key][m] for m in ("n", *metrics)] == [getattr(means, m) for m in ("n", *metrics)]
