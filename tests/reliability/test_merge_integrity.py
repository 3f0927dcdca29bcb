"""A damaged shard report never passes a merged gate and never ends the merge with a traceback (issue 31).

The shards are real: two oracle runs of the synthetic ACEBench tree (`--tooleval-shard 1/2`, `2/2`), made once
for the module; each test damages a copy as a broken CI artefact would, and runs `python -m pytest_tooleval
merge` on it. Rows a shard lost make the merged run INCOMPLETE (exit status 1, the gate fails); anything else
wrong with a shard is one line on stderr, exit status 2 and no report written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _reliability import THIN_TEST

from mini_acebench import CATEGORIES, SAMPLES, UNVERIFIED, write_mini_acebench

DAMAGED = "(a damaged report: run its shard again)"
GATE = ("--fail-under", "overall=0.5")
Report = dict[str, Any]


def _environ() -> dict[str, str]:
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GITHUB_STEP_SUMMARY")
    }


def _pytest(folder: Path, *args: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--tooleval-model=oracle",
            f"--tooleval-data-dir={folder / 'data'}",
            UNVERIFIED,
            f"--tooleval-categories={CATEGORIES}",
            f"--tooleval-cache-dir={folder / 'cache'}",
            *args,
        ],
        cwd=folder,
        env=_environ(),
        capture_output=True,
        check=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the two shards' reports, shard1.json and shard2.json."""
    folder = tmp_path_factory.mktemp("shards")
    write_mini_acebench(folder / "data")
    (folder / "test_acebench.py").write_text(THIN_TEST, encoding="utf-8")
    for index in (1, 2):
        _pytest(folder, f"--tooleval-shard={index}/2", f"--tooleval-report=shard{index}.json")
    return folder


@pytest.fixture
def shards(made: Path, tmp_path: Path) -> Path:
    """A copy of the shards' reports in the test's own folder, to damage."""
    for name in ("shard1.json", "shard2.json"):
        shutil.copy(made / name, tmp_path / name)
    return tmp_path


def read(path: Path) -> Report:
    document: Report = json.loads(path.read_text(encoding="utf-8"))
    return document


def damage(folder: Path, change: Callable[[Report], object], name: str = "shard1.json") -> Report:
    """The report `name` changed by `change` (which edits it in place), written back as JSON."""
    document = read(folder / name)
    change(document)
    (folder / name).write_text(json.dumps(document), encoding="utf-8")
    return document


def merge(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_tooleval", "merge", "shard1.json", "shard2.json", "-o", "full.json", *args],
        cwd=folder,
        env=_environ(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def assert_refused(folder: Path, result: subprocess.CompletedProcess[str], line: str) -> None:
    """Exit status 2, the one line on stderr, nothing on stdout, no traceback, no merged report."""
    assert (result.returncode, result.stderr.splitlines(), result.stdout) == (2, [line], "")
    assert not (folder / "full.json").exists()


def first_row(document: Report) -> Report:
    row: Report = document["samples"][0]
    return row


# -- the intact shards: what every damage below is measured against ------------------------------------------


def test_the_intact_shards_merge_and_pass_the_gate(shards: Path) -> None:
    one, two = read(shards / "shard1.json"), read(shards / "shard2.json")
    assert len(one["samples"]) + len(two["samples"]) == SAMPLES
    assert len(one["samples"]) > 1  # rows to lose below
    result = merge(shards, *GATE)
    assert (result.returncode, result.stderr) == (0, "")
    assert "tooleval gate: PASSED" in result.stdout
    assert read(shards / "full.json")["run"]["incomplete"] is None


# -- 3. rows against the shard's own count -------------------------------------------------------------------


def test_a_shard_with_rows_removed_is_incomplete_and_fails_its_gate(shards: Path) -> None:
    """Before: the merge took the rows it found as the shard ("45/45"), the gate passed, exit status 0."""
    document = damage(shards, lambda report: report.update(samples=report["samples"][:1]))
    collected = document["run"]["collected"]
    result = merge(shards, *GATE)
    line = f"shard1.json (shard 1/2) has no row for {collected - 1} of the {collected} samples it collected"
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"tooleval merge: INCOMPLETE: {line}"]
    assert f"tooleval gate: INCOMPLETE: {line}" in result.stdout.splitlines()
    assert "tooleval gate: FAILED" in result.stdout and "PASSED" not in result.stdout
    merged = read(shards / "full.json")
    assert merged["run"]["incomplete"] == line and merged["gate"]["passed"] is False


def test_more_rows_than_the_shard_collected_are_refused(shards: Path) -> None:
    def more(report: Report) -> None:
        row = first_row(report)
        report["samples"] += [{**row, "id": f"{row['id']}{n}", "test_id": f"{row['test_id']}{n}"} for n in range(3)]

    document = damage(shards, more)
    rows, collected = len(document["samples"]), document["run"]["collected"]
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard1.json holds {rows} sample rows and 0 samples not run, more than the "
        f"{collected} samples it collected {DAMAGED}",
    )


def test_more_samples_of_a_category_than_it_has_are_refused(shards: Path) -> None:
    """Before: 104k rows of a 50-sample category merged, each one counted."""

    def flood(report: Report) -> None:
        row = first_row(report)
        report["samples"] += [
            {**row, "id": f"{row['id']}_{n}", "test_id": f"{row['test_id']}_{n}"} for n in range(2_000)
        ]
        report["run"]["collected"] = len(report["samples"])

    document = damage(shards, flood)
    row = first_row(document)
    assert row["category_size"] < 10
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard1.json holds 2,001 samples of acebench en {row['category']}, a category of "
        f"{row['category_size']} (its category_size) {DAMAGED}",
    )


def test_a_sample_twice_in_one_shard_is_refused(shards: Path) -> None:
    document = damage(shards, lambda report: report["samples"].__setitem__(1, report["samples"][0]))
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard1.json holds sample {first_row(document)['test_id']} twice {DAMAGED}",
    )


def test_two_sizes_of_one_category_are_refused(shards: Path) -> None:
    row = first_row(read(shards / "shard2.json"))
    size = row["category_size"]

    def resize(report: Report) -> None:
        for other in report["samples"]:
            if other["category"] == row["category"]:
                other["category_size"] = size + 1
        report["samples"].append({**row, "id": "added", "test_id": "en-added", "category_size": size + 1})
        report["run"]["collected"] += 1

    damage(shards, resize)
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard2.json gives acebench en {row['category']} {size}, shard1.json {size + 1} "
        f"samples (category_size): a category has one size {DAMAGED}",
    )


# -- 12. mistyped fields, deep nesting, a lone surrogate: one line, exit status 2 ------------------------------


MISTYPED = {  # before: a traceback and exit status 1, the code of a failed gate
    "tokens": (
        lambda report: first_row(report)["tokens"].update(prompt="many"),
        "samples[0].tokens.prompt is 'many', not an integer",
    ),
    "collected": (lambda report: report["run"].update(collected="6"), "run.collected is '6', not an integer"),
    "index": (lambda report: first_row(report).update(index="0"), "samples[0].index is '0', not an integer"),
    "outcome": (
        lambda report: first_row(report).update(outcome="won"),
        "samples[0].outcome is 'won', not one of 'passed', 'failed', 'error', 'skipped'",
    ),
    "valid": (
        lambda report: first_row(report).update(valid="yes"),
        "samples[0].valid is 'yes', not true or false or null",
    ),
    "not_run": (lambda report: report["run"].update(not_run="en-x"), "run.not_run is 'en-x', not an array"),
    "test_id": (lambda report: first_row(report).pop("test_id"), "samples[0] has no 'test_id'"),
    "row": (lambda report: report["samples"].append(["a", "list"]), "samples[{last}] is ['a', 'list'], not an object"),
    "prices": (
        lambda report: report["run"].update(prices={"gpt-4o": [2.5]}),
        "run.prices.gpt-4o is [2.5], not an [input, output] pair of prices",
    ),
    "suite": (
        lambda report: first_row(report).update(suite=["acebench"]),
        "samples[0].suite is ['acebench'], not a text",
    ),
}


@pytest.mark.parametrize("field", list(MISTYPED))
def test_a_mistyped_field_is_one_line_naming_the_file_and_the_field(shards: Path, field: str) -> None:
    change, said = MISTYPED[field]
    document = damage(shards, change)
    said = said.format(last=len(document["samples"]) - 1)
    assert_refused(shards, merge(shards, *GATE), f"error: merge: shard1.json: {said} {DAMAGED}")


def test_a_row_of_a_suite_not_installed_is_refused(shards: Path) -> None:
    damage(shards, lambda report: first_row(report).update(suite="nosuch"))
    assert_refused(
        shards,
        merge(shards, *GATE),
        "error: merge: shard1.json: samples[0].suite is 'nosuch', no suite "
        "installed here (acebench, bfcl, gpt4tools, toolalpaca, yaml)",
    )


def test_rows_a_summariser_cannot_read_are_refused_naming_the_shard(shards: Path) -> None:
    """A multi-turn step's id names its dialogue (normal_multi_turn_*_D_S); one without is no step."""

    def rename(report: Report) -> None:
        step = next(row for row in report["samples"] if "multi_turn" in row["category"])
        step.update(id="x", test_id="en-x")

    document = damage(shards, rename)
    assert any(row["id"] == "x" for row in document["samples"])
    assert_refused(
        shards,
        merge(shards, *GATE),
        "error: merge: shard1.json: its sample rows cannot be summarised "
        f"(IndexError: list index out of range) {DAMAGED}",
    )


def test_nesting_deeper_than_a_report_has_is_one_line(shards: Path) -> None:
    """Before: RecursionError from the JSON decoder, a traceback and exit status 1."""
    path = shards / "shard1.json"
    document = read(path)
    first_row(document)["calls"] = "HERE"
    text = json.dumps(document).replace('"HERE"', "[" * 50_000 + "]" * 50_000, 1)
    path.write_text(text, encoding="utf-8")
    assert_refused(
        shards,
        merge(shards, *GATE),
        "error: merge: shard1.json nests deeper than 100 levels, at "
        f"{('samples[0].calls' + '[0]' * 100)[:80]}... (a report of this plugin nests about ten)",
    )


def test_a_lone_surrogate_in_a_field_the_merge_reads_is_one_line(shards: Path) -> None:
    """Before: the merge wrote no report and ended with a traceback (UnicodeEncodeError), exit status 1."""
    path = shards / "shard1.json"
    document = read(path)
    first_row(document)["category"] = "SURROGATE"
    path.write_text(json.dumps(document).replace('"SURROGATE"', '"normal\\ud800"', 1), encoding="utf-8")
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard1.json: samples[0].category holds a lone surrogate, which is no Unicode text {DAMAGED}",
    )


def test_a_lone_surrogate_in_an_output_is_kept_as_the_shard_kept_it(shards: Path) -> None:
    """A replayed output may hold one, and the plugin's report keeps it (as its \\ud800 escape): so does the
    merged report, and the merge's terminal shows nothing of it raw."""
    path = shards / "shard1.json"
    document = read(path)
    first_row(document)["output"] = "SURROGATE"
    path.write_text(json.dumps(document).replace('"SURROGATE"', '"Par\\ud800is"', 1), encoding="utf-8")
    result = merge(shards, *GATE)
    assert (result.returncode, result.stderr) == (0, "")
    merged = read(shards / "full.json")
    [row] = [row for row in merged["samples"] if row["test_id"] == first_row(document)["test_id"]]
    assert row["output"] == "Par\ud800is"


# -- strict JSON: no NaN or Infinity in, none out --------------------------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999999"])
def test_a_non_finite_number_in_a_shard_is_one_line(shards: Path, number: str) -> None:
    """Before: json read NaN and Infinity (and 1e999999 as infinity), and the merged report held them."""
    path = shards / "shard1.json"
    document = read(path)
    first_row(document)["latency_s"] = "NUMBER"
    path.write_text(json.dumps(document).replace('"NUMBER"', number, 1), encoding="utf-8")
    assert_refused(
        shards,
        merge(shards, *GATE),
        f"error: merge: shard1.json is not strict JSON: samples[0].latency_s is {number}, which is no "
        "finite number (a damaged report: run its shard again: this version writes null there)",
    )


YAML_CASES = """\
category: levels
tools:
  - name: set_level
    description: Set a level.
    parameters: {type: object, properties: {level: {type: number}}, required: [level]}
cases:
  - name: huge
    user: Set the level to ten.
    expect: {calls: [{name: set_level, arguments: {level: 10}}]}
"""


def strict(path: Path) -> Report:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{path.name} holds {constant}: not strict JSON")

    document: Report = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    return document


def run_yaml_case(folder: Path, answer: str) -> None:
    """A real run of YAML_CASES, its one case answered `answer` (replayed), reported in run.json."""
    (folder / "levels.tooleval.yaml").write_text(YAML_CASES, encoding="utf-8")
    (folder / "answers.jsonl").write_text(json.dumps({"id": "levels-huge", "output": answer}) + "\n", encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--tooleval-mode=prompt",
            "--tooleval-model=replay:answers.jsonl",
            f"--tooleval-cache-dir={folder / 'cache'}",
            "--tooleval-report=run.json",
        ],
        cwd=folder,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout[-2000:]  # the case failed: 10 was expected


def test_a_yaml_case_answered_1e999999_gets_strict_json_reports_from_the_run_and_the_merge(tmp_path: Path) -> None:
    """Before: the run's report, and the merged one, wrote the argument as Infinity (not JSON)."""
    run_yaml_case(tmp_path, "[set_level(level=1e999999)]")
    report = strict(tmp_path / "run.json")
    [row] = report["samples"]
    assert row["calls"] == [{"set_level": {"level": None}}]
    assert report["non_finite"] == ["samples[0].calls[0].set_level.level"]
    merged = subprocess.run(
        [sys.executable, "-m", "pytest_tooleval", "merge", "run.json", "-o", "full.json"],
        cwd=tmp_path,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (merged.returncode, merged.stderr) == (0, "")
    full = strict(tmp_path / "full.json")
    assert full["samples"] == report["samples"] and full["non_finite"] == report["non_finite"]


def test_a_mistyped_field_a_suite_reads_in_its_details_is_one_line(tmp_path: Path) -> None:
    """The yaml suite's summary lists each failed case's checks (details.failed): a list of texts."""
    run_yaml_case(tmp_path, "[set_level(level=3)]")
    assert strict(tmp_path / "run.json")["samples"][0]["details"]["failed"] == ["level: exact"]
    damage(tmp_path, lambda report: first_row(report)["details"].update(failed="level: exact"), "run.json")
    result = subprocess.run(
        [sys.executable, "-m", "pytest_tooleval", "merge", "run.json", "-o", "full.json"],
        cwd=tmp_path,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_refused(
        tmp_path, result, f"error: merge: run.json: samples[0].details.failed is 'level: exact', not an array {DAMAGED}"
    )


# -- implausible values -----------------------------------------------------------------------------------------


IMPLAUSIBLE = {
    "negative tokens": (
        lambda report: first_row(report)["tokens"].update(prompt=-5),
        "samples[0].tokens.prompt is -5, below 0",
    ),
    "shard 1/0": (
        lambda report: report["run"].update(shard="1/0"),
        "run.shard is '1/0', not a shard: expected I/N with 1 <= I <= N",
    ),
    "shard 3/2": (
        lambda report: report["run"].update(shard="3/2"),
        "run.shard is '3/2', not a shard: expected I/N with 1 <= I <= N",
    ),
    "shard 0/2": (
        lambda report: report["run"].update(shard="0/2"),
        "run.shard is '0/2', not a shard: expected I/N with 1 <= I <= N",
    ),
    "a split too large to list": (
        lambda report: report["run"].update(shard="1/999999999"),
        "run.shard is '1/999999999': a split into more than 10000 shards is not one the merge takes",
    ),
    "negative collected": (lambda report: report["run"].update(collected=-1), "run.collected is -1, below 0"),
    "negative wall time": (lambda report: report["totals"].update(wall_s=-3.0), "totals.wall_s is -3.0, below 0"),
    "negative requests": (lambda report: report["totals"].update(requests=-1), "totals.requests is -1, below 0"),
    "a subsample of 0": (lambda report: report["run"].update(sample=0), "run.sample is 0, not above 0"),
    "negative category size": (
        lambda report: first_row(report).update(category_size=-2),
        "samples[0].category_size is -2, below 0",
    ),
    "process above 1": (lambda report: first_row(report).update(process=5), "samples[0].process is 5, above 1"),
}


@pytest.mark.parametrize("value", list(IMPLAUSIBLE))
def test_an_implausible_value_is_one_line(shards: Path, value: str) -> None:
    change, said = IMPLAUSIBLE[value]
    damage(shards, change)
    assert_refused(shards, merge(shards, *GATE), f"error: merge: shard1.json: {said} {DAMAGED}")


# -- what the terminal is shown ----------------------------------------------------------------------------------


RAW = ("\x1b", "\x07", "\x00", "\r", "\u202e", "\u2066")


def test_control_and_bidi_characters_of_a_shard_reach_the_terminal_and_the_pages_as_escapes(shards: Path) -> None:
    """Before: ESC, BEL, NUL and U+202E went to the terminal and the Markdown as they were (a CI log repainted, a
    line reordered), and U+202E into the HTML."""

    def hostile(report: Report) -> None:
        first_row(report).update(
            outcome="error",
            valid=None,
            fixed_valid=None,
            error="\x1b[2J\x1b]0;owned\x07 the endpoint\u202e said\x00 no\r",
        )
        report["run"]["not_run"] = ["en-\u2066evil\x1b[31m"]
        report["run"]["collected"] += 1

    document = damage(shards, hostile)
    result = merge(shards, *GATE, "--max-error-rate", "0", "--markdown", "full.md", "--html", "full.html")
    assert result.returncode == 1
    markdown, page = ((shards / name).read_text(encoding="utf-8") for name in ("full.md", "full.html"))
    for shown in (result.stdout + result.stderr, markdown, page):
        assert not [char for char in RAW if char in shown]
    assert "the endpoint\\\\u202e said\\\\x00 no" in markdown  # the escape's backslash escaped: it shows as \\u202e
    assert "the endpoint\\u202e said\\x00 no" in page
    assert result.stderr.splitlines() == [
        "tooleval merge: INCOMPLETE: 1 sample a shard collected never ran: en-\\u2066evil\\x1b[31m"
    ]
    errors = sum(row["outcome"] == "error" for row in document["samples"])
    assert errors == 1
    rate = 1 / SAMPLES
    assert (
        f"tooleval gate: error rate MISSED: {rate:.3f} > 0.000 (1 {first_row(document)['category']}: "
        "\\x1b[2J\\x1b]0;owned\\x07 the endpoint\\u202e said\\x00 no)"
    ) in result.stdout.splitlines()  # to the \\r
    assert read(shards / "full.json")["samples"][0]["error"].startswith("\x1b[2J")  # the report keeps it raw


def test_shards_of_a_run_stopped_by_a_dead_endpoint_merge_incomplete(tmp_path: Path) -> None:
    """The samples a stopping run never asked skip as not run (no row): the shard lists them as not run, so they
    are never taken for samples skipped on purpose, and the merge cannot pass a gate on what did run."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_mini_acebench(tmp_path / "data")
    (tmp_path / "test_acebench.py").write_text(THIN_TEST, encoding="utf-8")
    for index in (1, 2):
        # one request at a time: the first sample's attempts trip the breaker, the others are never asked
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--tooleval-model=m",
                f"--tooleval-base-url=http://127.0.0.1:{port}/v1",
                "--tooleval-api-key=k",
                "--tooleval-no-probe",
                "--tooleval-concurrency=1",
                f"--tooleval-data-dir={tmp_path / 'data'}",
                UNVERIFIED,
                f"--tooleval-categories={CATEGORIES}",
                f"--tooleval-cache-dir={tmp_path / 'cache'}",
                f"--tooleval-shard={index}/2",
                f"--tooleval-report=shard{index}.json",
                "-n",
                "2",
            ],
            cwd=tmp_path,
            env=_environ(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-2000:]
    shard1 = read(tmp_path / "shard1.json")
    assert shard1["run"]["not_run"] and shard1["run"]["skipped"] == 0
    result = merge(tmp_path, "--fail-under", "overall=0.0", "--max-error-rate", "1")
    # the breaker may stop each shard before its first sample's retries end: then no shard holds a row, and the
    # merge says so in one line (exit 2); else the rows it has are gated, and fail (exit 1)
    if result.returncode == 2:
        assert result.stderr.startswith("error: merge: the shards hold no scored sample: INCOMPLETE: "), result.stderr
        assert "never ran" in result.stderr
        return
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tooleval merge: INCOMPLETE: " in result.stderr and "never ran" in result.stderr
    assert "tooleval gate: FAILED" in result.stdout
