"""Bad input ends as one clear line: exit status 4 for data and options, a test error naming the reason for an
endpoint that cannot answer. Never a traceback from deep inside, never a run that evaluates nothing and passes.

(Unknown categories, 'overal:0.8' thresholds, bad choices and a malformed JSON line are pinned in tests/plugin.)
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _reliability import error_section

from fake_openai import FakeOpenAI
from mini_acebench import SAMPLES as MINI_SAMPLES

DATA = Path("data") / "acebench"
EN = DATA / "data_all" / "data_en"


def rewrite(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(row) + "\n" for row in change(rows)))


def assert_one_usage_line(result: pytest.RunResult, expected: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [expected]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def set_first(field: str, value: object) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[0][field] = value
        return rows

    return change


# (what is done to the mini tree, the one line expected; {root} is the pytester folder)
BROKEN_DATA = {
    "no-data-folder": (
        lambda root: None,
        "--tooleval-data-dir={root}/nowhere",
        "ERROR: {root}/nowhere: no ACEBench data there (expected data_all/data_en/... under it or "
        "under {root}/nowhere/acebench-56dd66c)",
    ),  # the default revision's folder of a data root
    "prompt-file-missing": (
        lambda root: (root / EN / "data_normal_atom_bool.json").unlink(),
        None,
        f"ERROR: {{root}}/{EN}/data_normal_atom_bool.json: file is missing",
    ),
    "answer-file-missing": (
        lambda root: (root / EN / "possible_answer" / "data_special_incomplete.json").unlink(),
        None,
        f"ERROR: {{root}}/{EN}/possible_answer/data_special_incomplete.json: file is missing",
    ),
    "answers-truncated": (
        lambda root: rewrite(root / EN / "possible_answer" / "data_normal_atom_bool.json", lambda rows: rows[:1]),
        None,
        "ERROR: {root}/"
        f"{EN}/possible_answer/data_normal_atom_bool.json: 1 records, but "
        "{root}/"
        f"{EN}/data_normal_atom_bool.json has 2",
    ),
    "both-files-empty": (
        lambda root: [
            (root / EN / sub / "data_normal_atom_bool.json").write_text("") for sub in ("", "possible_answer")
        ],
        None,
        f"ERROR: {{root}}/{EN}/data_normal_atom_bool.json: no records",
    ),
    "not-utf8": (
        lambda root: (root / EN / "data_special_irrelevant.json").write_bytes(b'{"id": "caf\xe9"}\n'),
        None,
        f"ERROR: {{root}}/{EN}/data_special_irrelevant.json:1: not UTF-8 text (invalid continuation byte at byte 11)",
    ),
    "not-an-object": (
        lambda root: (root / EN / "data_special_irrelevant.json").write_text('["a", "list"]\n'),
        None,
        f"ERROR: {{root}}/{EN}/data_special_irrelevant.json:1: expected a JSON object, got list",
    ),
    "record-without-id": (
        lambda root: rewrite(
            root / EN / "data_normal_atom_bool.json",
            lambda rows: [{k: v for k, v in rows[0].items() if k != "id"}, rows[1]],
        ),
        None,
        f"ERROR: {{root}}/{EN}/data_normal_atom_bool.json:1: id: Field required",
    ),
    "ids-do-not-match": (
        lambda root: rewrite(
            root / EN / "possible_answer" / "data_normal_atom_bool.json", set_first("id", "normal_atom_bool_99")
        ),
        None,
        "ERROR: {root}/"
        f"{EN}/possible_answer/data_normal_atom_bool.json:1: id "
        "'normal_atom_bool_99' does not match 'normal_atom_bool_0'",
    ),
    "ground-truth-not-calls": (
        lambda root: rewrite(
            root / EN / "possible_answer" / "data_normal_atom_bool.json", set_first("ground_truth", "get_weather")
        ),
        None,
        "ERROR: {root}/"
        f"{EN}/possible_answer/data_normal_atom_bool.json:1: ground_truth: "
        "expected {{api: {{parameter: value}}}} (or a list of them), got str",
    ),
    "ground-truth-empty-list": (
        lambda root: rewrite(
            root / EN / "possible_answer" / "data_normal_atom_bool.json", set_first("ground_truth", [])
        ),
        None,
        "ERROR: {root}/"
        f"{EN}/possible_answer/data_normal_atom_bool.json:1: ground_truth: "
        "expected {{api: {{parameter: value}}}} (or a list of them), got an empty list",
    ),
    "special-ground-truth-shape": (
        lambda root: rewrite(
            root / EN / "possible_answer" / "data_special_incomplete.json", set_first("ground_truth", 5)
        ),
        None,
        "ERROR: {root}/"
        f"{EN}/possible_answer/data_special_incomplete.json:1: "
        "ground_truth: expected {{api or parameter: [names or values]}}, got int",
    ),
    "prompts-missing": (
        lambda root: (root / DATA / "prompts.json").unlink(),
        None,
        f"ERROR: {{root}}/{DATA}/prompts.json: file is missing",
    ),
    "prompts-truncated": (
        lambda root: (root / DATA / "prompts.json").write_text('{"model_inference/prompt_en.py": {'),
        None,
        f"ERROR: {{root}}/{DATA}/prompts.json:1:35: malformed JSON (Expecting property name enclosed in double quotes)",
    ),
    "prompts-without-a-template": (
        lambda root: (root / DATA / "prompts.json").write_text(
            '{"model_inference/prompt_en.py": {"USER_PROMPT_EN": "{question}"}}'
        ),
        None,
        f"ERROR: {{root}}/{DATA}/prompts.json: model_inference/prompt_en.py has no SYSTEM_PROMPT_FOR_NORMAL_DATA_EN",
    ),
}


@pytest.mark.parametrize(("damage", "data_option", "expected"), BROKEN_DATA.values(), ids=BROKEN_DATA.keys())
def test_broken_data_stops_the_run_with_one_line(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live: list[str],
    damage: Callable[[Path], object],
    data_option: str | None,
    expected: str,
) -> None:
    root = pytester.path
    damage(root)
    args = live if data_option is None else [*live, data_option.format(root=root)]
    assert_one_usage_line(pytester.runpytest(*args), expected.format(root=root))
    assert fake_openai.stats.requests == 0  # found before anything was asked


BAD_OPTIONS = {
    "fail-under-no-fraction": (
        "--tooleval-fail-under=overall",
        "ERROR: --tooleval-fail-under: 'overall' is not a valid threshold; expected GROUP=FRACTION, e.g. overall=0.80",
    ),
    "fail-under-not-a-number": (
        "--tooleval-fail-under=overall=high",
        "ERROR: --tooleval-fail-under: 'overall=high' is not a valid threshold; expected "
        "GROUP=FRACTION, e.g. overall=0.80",
    ),
    "fail-under-no-name": (
        "--tooleval-fail-under==0.8",
        "ERROR: --tooleval-fail-under: '=0.8' is not a valid threshold; expected GROUP=FRACTION, e.g. overall=0.80",
    ),
    "fail-under-percent": (
        "--tooleval-fail-under=overall=85",
        "ERROR: --tooleval-fail-under: 'overall=85': the fraction must lie between 0 and 1",
    ),
    "fail-under-nan": (
        "--tooleval-fail-under=overall=nan",
        "ERROR: --tooleval-fail-under: 'overall=nan': the fraction must lie between 0 and 1",
    ),
    "timeout-word": ("--tooleval-timeout=soon", "ERROR: --tooleval-timeout: 'soon' is not a number, e.g. 0.5"),
    "timeout-zero": ("--tooleval-timeout=0", "ERROR: --tooleval-timeout: '0' must be more than 0"),
    "timeout-negative": ("--tooleval-timeout=-5", "ERROR: --tooleval-timeout: '-5' must be more than 0"),
    "temperature-nan": ("--tooleval-temperature=nan", "ERROR: --tooleval-temperature: 'nan' is not a finite number"),
    "top-p-inf": ("--tooleval-top-p=inf", "ERROR: --tooleval-top-p: 'inf' is not a finite number"),
    "concurrency-negative": ("--tooleval-concurrency=-1", "ERROR: --tooleval-concurrency: '-1' must not be negative"),
    "retries-fraction": (
        "--tooleval-max-retries=1.5",
        "ERROR: --tooleval-max-retries: '1.5' is not a whole number, e.g. 8",
    ),
    "error-rate-word": (
        "--tooleval-max-error-rate=few",
        "ERROR: --tooleval-max-error-rate: 'few' is not a number, e.g. 0.5",
    ),
    "error-rate-percent": (
        "--tooleval-max-error-rate=2",
        "ERROR: --tooleval-max-error-rate: '2' must lie between 0 and 1, e.g. 0.02",
    ),
    "error-rate-negative": (
        "--tooleval-max-error-rate=-0.1",
        "ERROR: --tooleval-max-error-rate: '-0.1' must lie between 0 and 1, e.g. 0.02",
    ),
    "report-under-a-file": (
        "--tooleval-report=/dev/null/report.json",
        "ERROR: --tooleval-report: cannot write /dev/null/report.json: /dev/null is not a folder",
    ),
    # a relative path is resolved once, against the folder pytest started in (the message shows where it points)
    "report-is-a-folder": (
        "--tooleval-report=data",
        "ERROR: --tooleval-report: {root}/data is a folder; name a file, e.g. {root}/data/report.json",
    ),
    "replay-missing": (
        "--tooleval-model=replay:nowhere.jsonl",
        "ERROR: --tooleval-model replay:nowhere.jsonl: no such file or folder",
    ),
}


@pytest.mark.parametrize(("option", "expected"), BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_a_bad_option_value_is_one_usage_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], option: str, expected: str
) -> None:
    assert_one_usage_line(pytester.runpytest(*live, option), expected.format(root=pytester.path))
    assert fake_openai.stats.requests == 0


def test_a_bad_value_from_the_environment_is_one_usage_line(
    pytester: pytest.Pytester, live: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLEVAL_MAX_ERROR_RATE", "5%")
    assert_one_usage_line(
        pytester.runpytest(*live), "ERROR: TOOLEVAL_MAX_ERROR_RATE=5%: '5%' is not a number, e.g. 0.5"
    )


def test_a_bad_value_from_the_ini_file_names_the_file(pytester: pytest.Pytester, live: list[str]) -> None:
    ini = pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\ntooleval_language = fr\n")
    assert_one_usage_line(
        pytester.runpytest(*live),
        f"ERROR: tooleval_language = fr in {ini}: 'fr' is not valid; choose one of en, zh, all",
    )


def closed_port() -> int:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_endpoint_stops_the_run_with_one_line(pytester: pytest.Pytester, mini: list[str]) -> None:
    """Fail fast (models/breaker.py): the first attempts all refused, nothing answered: the run stops; what ran
    errors with the reason, what did not run is in no figure, and nothing is scored."""
    port = closed_port()
    result = pytester.runpytest(
        *mini,
        "--tooleval-model=m",
        f"--tooleval-base-url=http://127.0.0.1:{port}/v1",
        "--tooleval-max-retries=1",
        "--tooleval-report=report.json",
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == outcomes.get("failed", 0) == 0 and 1 <= outcomes["errors"] < MINI_SAMPLES
    assert [line for line in result.stdout.lines if line.strip()][-1] == (
        f"tooleval stopped the run: 5 requests to model 'm' at 127.0.0.1:{port}/v1 failed (connection error "
        "(ConnectError)) and none was answered: is the server running? check --tooleval-base-url (or OPENAI_BASE_URL)"
    )
    samples = json.loads((pytester.path / "report.json").read_text())["samples"]
    assert samples and {(s["outcome"], s["valid"]) for s in samples} == {("error", None)}


def test_a_wrong_key_stops_the_run_without_retrying(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    fake_openai.require_api_key = "sk-the-right-one"
    result = pytester.runpytest(*live, "--tooleval-concurrency=1")  # one request at a time: five, then the stop
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert error_section(result.stdout.str(), "normal_atom_bool_0") == [
        f"InfrastructureError: model 'fake-model' at 127.0.0.1:{fake_openai.port}/v1: HTTP 401: Incorrect API key "
        "provided. (not retried: only 408, 409, 429, 5xx, timeouts, connection errors and malformed responses are)"
    ]
    assert fake_openai.stats.requests == 5  # each asked once, and none after the breaker tripped
    assert [line for line in result.stdout.lines if line.strip()][-1].endswith(
        "failed (HTTP 401: Incorrect API key provided.) and none was answered: check --tooleval-api-key (or "
        "OPENAI_API_KEY)"
    )


def test_a_gated_run_where_everything_errored_never_passes(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """The most lenient gate there is still needs something scored: no figure is not a figure of 0 or 1."""
    fake_openai.require_api_key = "sk-the-right-one"
    result = pytester.runpytest(*live, "--tooleval-fail-under=overall=0", "--tooleval-max-error-rate=1")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # the dead endpoint stopped it; the gate says why it fails too
    result.stdout.fnmatch_lines(
        [
            "tooleval gate: overall MISSED: no such figure in this run (threshold 0.000)",
            "tooleval gate: error rate 1.000 <= 1.000 ok",
            "tooleval gate: FAILED (partial run: *)",
        ]
    )


DAMAGED_REPLAY = {
    "invalid-utf8": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n{"id": "x", "result": "caf\xe9"}\n',
        "ERROR: {path}:2: not UTF-8 text (invalid continuation byte at byte 74)",
    ),
    "nul-bytes": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n\x00\x00\x00\n',
        "ERROR: {path}:2:1: malformed JSON (Expecting value)",
    ),
    "truncated": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n{"id": "normal_atom_bool_1", "res',
        "ERROR: {path}:2:30: malformed JSON (Unterminated string starting at)",
    ),
    "not-rows": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n[1, 2]\n',
        'ERROR: {path}:2: expected an object with an "id"',
    ),
    # issue 40: what the JSON decoder gives up on, and one sample recorded twice
    "nested-100000-deep": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n{"id": "x", "result": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}\n",
        "ERROR: {path}:2: lists and objects nested too deeply to read",
    ),
    "integer-of-5000-digits": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n{"id": "x", "result": ' + b"7" * 5_000 + b"}\n",
        "ERROR: {path}:2: an integer of more than 4,300 digits, longer than Python reads",
    ),
    "an-id-twice": (
        b'{"id": "normal_atom_bool_0", "result": "[f()]"}\n{"id": "normal_atom_bool_1", "result": '
        b'"[f()]"}\n{"id": "normal_atom_bool_0", "result": "[g()]"}\n',
        "ERROR: --tooleval-model replay:{path}: id 'normal_atom_bool_0' is recorded twice with different "
        "contents ({path} lines 1 and 3): keep one row per id (a row repeated exactly is read once)",
    ),
}


@pytest.mark.parametrize(("content", "expected"), DAMAGED_REPLAY.values(), ids=DAMAGED_REPLAY.keys())
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_damaged_replay_file_is_one_line_naming_where(
    pytester: pytest.Pytester, mini: list[str], content: bytes, expected: str, workers: list[str]
) -> None:
    path = pytester.path / "outputs.jsonl"
    path.write_bytes(content)
    result = pytester.runpytest_subprocess(*mini, *workers, f"--tooleval-model=replay:{path}")
    assert_one_usage_line(result, expected.format(path=path))
