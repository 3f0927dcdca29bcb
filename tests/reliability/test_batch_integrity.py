"""--tooleval-batch against a provider that misbehaves (issue 31): duplicated, planted and garbled entries, answers
of the Batch API that are not JSON or not its shape, a poll without a status, a ledger batch the endpoint does not
know, a kill during the create, two runs on one cache, and a key echoed in the batch's errors.

Each run is of ACEBench's normal_atom_bool (50 samples, each one request: all batched). What a test asserts is the
clean run's verdicts (every sample asked one by one), errors of the samples that name the cause, or the one line
and exit status 4.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _reliability import KEY, THIN_TEST, answers_by_prompt, prompt_key, read_report, verdicts

from fake_openai import FakeOpenAI, Fault

CATEGORY = "normal_atom_bool"
SAMPLES = 50
WRONG = "[get_weather(city='Paris')]"  # what answers_by_prompt gives one sample in three: a wrong call
Verdicts = dict[tuple[str, str], Any]
_CLEAN: dict[str, Verdicts] = {}  # the clean run's verdicts, once per process: the same for every test


@pytest.fixture
def scripted(fake_openai: FakeOpenAI, default_data: Path) -> dict[str, str]:
    """Two samples in three answered right, the third wrong (by the prompt, batched or not)."""
    answers = answers_by_prompt(default_data, (CATEGORY,))
    assert len(answers) == SAMPLES
    fake_openai.responder = lambda body: answers[prompt_key(body["messages"])]
    return answers


@pytest.fixture
def clean(pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]) -> Verdicts:
    """The reference: every sample asked one by one (a cache of its own); the server's counts reset after."""
    if "verdicts" not in _CLEAN:
        result = pytester.runpytest_subprocess(
            *options(pytester, fake_openai, default_data, "clean-cache", "--tooleval-report=clean.json")
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        expected = verdicts(read_report(pytester.path / "clean.json"))
        assert len(expected) == SAMPLES and {outcome for outcome, *_ in expected.values()} == {"passed", "failed"}
        assert fake_openai.stats.requests == SAMPLES
        _CLEAN["verdicts"] = expected
    fake_openai.reset_stats()
    return _CLEAN["verdicts"]


def options(pytester: pytest.Pytester, server: FakeOpenAI, data: Path, cache: str, *more: str) -> list[str]:
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={server.base_url}",
        f"--tooleval-api-key={KEY}",
        f"--tooleval-data-dir={data}",
        f"--tooleval-categories={CATEGORY}",
        f"--tooleval-cache-dir={pytester.path / cache}",
        "-p",
        "no:cacheprovider",
        *more,
    ]


def batched(pytester: pytest.Pytester, server: FakeOpenAI, data: Path, *more: str) -> list[str]:
    """A batch run on the cache folder `cache`, polling every 0.05 s, its report in batch.json."""
    return options(
        pytester,
        server,
        data,
        "cache",
        "--tooleval-batch",
        "--tooleval-batch-poll=0.05",
        "--tooleval-report=batch.json",
        *more,
    )


def host(server: FakeOpenAI) -> str:
    return server.base_url.split("://", 1)[1]


def only_line(result: pytest.RunResult) -> list[str]:
    return [text for text in result.stderr.lines if text.strip()]


def ledger(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((pytester.path / "cache" / "batches").glob("*.json"))]


def errors_of(report: dict[str, Any]) -> dict[str, str]:
    return {row["id"]: row["error"] for row in report["samples"] if row["outcome"] == "error"}


# -- 1. duplicated entries -----------------------------------------------------------------------------------


def test_a_request_with_two_entries_is_an_error_naming_both_never_the_first(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, clean: Verdicts
) -> None:
    fake_openai.duplicate_entries(WRONG)  # every entry twice, the wrong copy first in the file
    result = pytester.runpytest_subprocess(*batched(pytester, fake_openai, default_data))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read_report(pytester.path / "batch.json")
    errors = errors_of(report)
    assert len(errors) == SAMPLES and all(row["valid"] is None for row in report["samples"])  # none scored
    named = re.compile(
        r"InfrastructureError: model 'fake-model' at .*: the batch's answer was refused: "
        r"duplicate_custom_id: 2 entries for this request \(output file file-2 line (\d+), id "
        r"batch_req_\d+; output file file-2 line (\d+), id batch_req_\d+\): none is scored"
    )
    assert all(named.fullmatch(error) for error in errors.values()), next(iter(errors.values()))
    totals = report["totals"]["batch"]
    assert (totals["answered"], totals["duplicated"], totals["failed"], totals["unknown"]) == (0, SAMPLES, {}, 0)
    result.stdout.fnmatch_lines(
        [
            f"tooleval batch: 0 answers from 1 batch ({SAMPLES} requests submitted, 0 resumed) "
            f"in * s; {SAMPLES} came back more than once (duplicate_custom_id): errors of their "
            "samples, naming every copy"
        ]
    )
    assert fake_openai.stats.requests == 0  # not asked again: the provider is what is wrong
    # and nothing was cached: a run without the batch asks every sample, and scores as the clean run
    again = pytester.runpytest_subprocess(
        *options(pytester, fake_openai, default_data, "cache", "--tooleval-report=again.json")
    )
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts(read_report(pytester.path / "again.json")) == clean
    assert fake_openai.stats.requests == SAMPLES


# -- 2. entries planted for requests never sent ------------------------------------------------------------


def test_entries_for_requests_the_batch_was_not_sent_with_are_ignored_and_never_cached(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, clean: Verdicts
) -> None:
    # a first batch run (in a cache of its own) shows the provider every custom_id the samples have
    fake_openai.hold_batches()
    scout = pytester.runpytest_subprocess(
        *options(pytester, fake_openai, default_data, "scout-cache", "--tooleval-batch", "--tooleval-batch-wait=0")
    )
    assert scout.ret == pytest.ExitCode.OK  # every sample not run: its batch is still running
    every_id = {json.loads(line)["custom_id"] for line in fake_openai.file_content("file-1").splitlines()}
    assert len(every_id) == SAMPLES
    fake_openai.release_batches()
    fake_openai.plant_entries(dict.fromkeys(every_id, WRONG))  # wrong answers for whatever a batch does not ask
    fake_openai.reset_stats()

    half = batched(pytester, fake_openai, default_data, "--tooleval-sample=0.5", "--tooleval-seed=1")
    result = pytester.runpytest_subprocess(*half)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read_report(pytester.path / "batch.json")
    asked = verdicts(report)
    assert 0 < len(asked) < SAMPLES and asked == {key: clean[key] for key in asked}
    planted = SAMPLES - len(asked)
    totals = report["totals"]["batch"]
    assert (totals["submitted"], totals["answered"], totals["unknown"]) == (len(asked), len(asked), planted)
    result.stdout.fnmatch_lines(
        [
            f"tooleval batch: {len(asked)} answers from 1 batch ({len(asked)} requests "
            f"submitted, 0 resumed) in * s; {planted} entries for requests not sent in the batch "
            "were ignored"
        ]
    )
    # a later ordinary run on the same cache, reusing it, finds none of the planted answers: it asks those samples
    later = pytester.runpytest_subprocess(
        *options(pytester, fake_openai, default_data, "cache", "--tooleval-report=later.json", "--tooleval-cache=reuse")
    )
    assert later.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts(read_report(pytester.path / "later.json")) == clean
    assert fake_openai.stats.requests == planted


# -- 5. an entry whose bytes are not UTF-8 -------------------------------------------------------------------


@pytest.mark.parametrize("fallback", ["ask", "error"])
def test_an_entry_that_is_not_utf8_is_a_fault_asked_again_or_an_error(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    scripted: dict[str, str],
    clean: Verdicts,
    fallback: str,
) -> None:
    garbled = {key for key, answer in scripted.items() if answer != WRONG}
    garbled = set(sorted(garbled)[:3])  # three samples answered right, whose batch entries come back garbled
    first_time = set(garbled)

    def respond(body: dict[str, Any]) -> str | Fault:
        key = prompt_key(body["messages"])
        if key in first_time:
            first_time.discard(key)
            return Fault.invalid_utf8()
        return scripted[key]

    fake_openai.responder = respond
    result = pytester.runpytest_subprocess(
        *batched(pytester, fake_openai, default_data, f"--tooleval-batch-fallback={fallback}")
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert b"caf\xe9 \xff\xfe" in fake_openai.file_content(fake_openai.batch("batch_1")["output_file_id"])
    report = read_report(pytester.path / "batch.json")
    assert report["totals"]["batch"]["failed"] == {"malformed_entry": 3}
    assert report["totals"]["batch"]["answered"] == SAMPLES - 3
    got = verdicts(report)
    if fallback == "ask":
        assert got == clean  # asked one by one, as the interactive path retries such bytes
        assert fake_openai.stats.requests == 3
    else:
        errors = errors_of(report)
        assert len(errors) == 3 and all(
            re.search(
                r"the batch gave no answer: malformed_entry: output file file-2 "
                r"line \d+ is not UTF-8 \(--tooleval-batch-fallback error\)",
                error,
            )
            for error in errors.values()
        ), errors
        assert {key: value for key, value in got.items() if key[1] not in errors} == {
            key: value for key, value in clean.items() if key[1] not in errors
        }
        assert fake_openai.stats.requests == 0


# -- 8. a poll without a valid status ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "shown"), [({}, "none"), ({"id": "batch_1", "status": 5}, "5")], ids=["empty", "status-5"]
)
def test_a_poll_without_a_valid_status_stops_the_run_with_one_line(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    clean: Verdicts,
    answer: dict[str, Any],
    shown: str,
) -> None:
    fake_openai.answer_batch_api("poll", answer)  # the first poll; the next would be answered as usual
    common = batched(pytester, fake_openai, default_data)
    result = pytester.runpytest_subprocess(*common, timeout=120)  # a hang guard
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert only_line(result) == [
        f"ERROR: tooleval batch: could not poll batch_1 at {host(fake_openai)}: the answer has no valid batch status "
        f"({shown}; expected one of validating, failed, in_progress, finalizing, completed, expired, cancelling, "
        "cancelled); batch_1 stays in the ledger, and a rerun resumes it (or drop --tooleval-batch)"
    ]
    assert fake_openai.stats.batch_api_calls["poll"] == 1  # stopped at once, not polled again
    # what the line says is so: a rerun resumes the batch and scores as the clean run
    again = pytester.runpytest_subprocess(*common, timeout=120)
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts(read_report(pytester.path / "batch.json")) == clean
    assert (fake_openai.stats.batches_created, fake_openai.stats.requests) == (1, 0)


def test_polls_are_no_closer_than_the_floor_and_end_with_the_wait(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]
) -> None:
    fake_openai.hold_batches()  # in progress for as long as the run waits
    result = pytester.runpytest_subprocess(
        *options(
            pytester,
            fake_openai,
            default_data,
            "cache",
            "--tooleval-batch",
            "--tooleval-batch-poll=0.0001",
            "--tooleval-batch-wait=1",
        ),
        timeout=120,
    )
    assert result.ret == pytest.ExitCode.OK  # every sample not run: its batch is still running
    result.stdout.fnmatch_lines(
        ["tooleval batch batch_1: still in_progress after --tooleval-batch-wait; left for a later run to collect"]
    )
    # the floor: a poll at most every 0.05 s within the 1 s wait (at 0.0001 s, one per round trip: 84 here)
    assert 1 <= fake_openai.stats.batch_api_calls["poll"] <= 1 / 0.05 + 1


# -- 9. a ledger batch the endpoint does not know ------------------------------------------------------------


def test_a_ledger_batch_the_endpoint_does_not_know_is_dropped_and_its_requests_submitted_again(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, clean: Verdicts
) -> None:
    fake_openai.hold_batches()
    left = pytester.runpytest_subprocess(*batched(pytester, fake_openai, default_data, "--tooleval-batch-wait=0"))
    assert left.ret == pytest.ExitCode.OK and [entry["batch_id"] for entry in ledger(pytester)] == ["batch_1"]
    fake_openai.forget_batches()  # pruned, or another project's key: GET /v1/batches/batch_1 is a 404
    fake_openai.release_batches()
    result = pytester.runpytest_subprocess(*batched(pytester, fake_openai, default_data))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"tooleval batch: batch_1, submitted by an earlier run, is unknown to "
            f"{host(fake_openai)} (HTTP 404: No batch found with id 'batch_1'.): dropped from "
            f"the ledger; this run submits its {SAMPLES} requests again",
            f"tooleval batch: submitted batch_2 ({SAMPLES} requests, window 24h)*",
        ]
    )
    report = read_report(pytester.path / "batch.json")
    assert verdicts(report) == clean
    assert (report["totals"]["batch"]["dropped"], report["totals"]["batch"]["answered"]) == (1, SAMPLES)
    assert fake_openai.stats.batch_ids == ["batch_1", "batch_2"] and ledger(pytester) == []


# -- 10. a kill during the create, two runs on one cache ---------------------------------------------------


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 60  # a hang guard
    while not condition():
        assert time.monotonic() < deadline, f"no {what} in 60 s"
        time.sleep(0.01)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Runs started by a test; killed (their process groups) if the test leaves them running."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_run_killed_during_the_create_request_makes_no_second_batch(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    clean: Verdicts,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    common = batched(pytester, fake_openai, default_data)
    fake_openai.hold_creates()  # the batch is made; its id never reaches the run
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *common],
        cwd=pytester.path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    processes.append(process)
    wait_for(lambda: fake_openai.stats.creates_held == 1 or process.poll() is not None, "create request")
    assert process.poll() is None, "the run ended before the kill"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert [(entry["state"], entry["input_file_id"]) for entry in ledger(pytester)] == [("creating", "file-1")]
    fake_openai.release_creates()
    result = pytester.runpytest_subprocess(*common)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "tooleval batch: found batch_1, created from file-1 by an earlier run that stopped "
            "before the endpoint's answer came",
            f"tooleval batch: resuming batch_1, submitted by an earlier run ({SAMPLES} of its requests are this run's)",
        ]
    )
    assert verdicts(read_report(pytester.path / "batch.json")) == clean
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.batches_created, stats.requests) == (1, 1, 0)
    assert stats.batch_api_calls["list"] == 1 and ledger(pytester) == []


def test_two_runs_on_one_cache_during_a_create_make_one_batch(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    clean: Verdicts,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    common = [arg for arg in batched(pytester, fake_openai, default_data) if not arg.startswith("--tooleval-report")]
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    fake_openai.hold_creates()
    first = subprocess.Popen(
        [sys.executable, "-m", "pytest", *common, "--tooleval-report=first.json"],
        cwd=pytester.path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    processes.append(first)
    wait_for(lambda: fake_openai.stats.creates_held == 1 or first.poll() is not None, "create request")
    second = subprocess.Popen(
        [sys.executable, "-m", "pytest", *common, "--tooleval-report=second.json"],
        cwd=pytester.path,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=environment,
    )
    processes.append(second)
    lines: list[str] = []
    waiting = threading.Event()

    def read() -> None:
        assert second.stdout is not None
        for raw in second.stdout:
            lines.append(raw.decode(errors="replace").rstrip("\n"))
            if "another run is submitting a batch from this cache folder" in lines[-1]:
                waiting.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_for(lambda: waiting.is_set() or second.poll() is not None, "wait for the other run")
    assert waiting.is_set(), "\n".join(lines)
    assert fake_openai.stats.files_uploaded == 1  # the second run waits before it uploads anything
    fake_openai.release_creates()
    assert first.wait(timeout=120) == pytest.ExitCode.TESTS_FAILED  # a hang guard
    assert second.wait(timeout=120) == pytest.ExitCode.TESTS_FAILED
    reader.join(timeout=60)
    assert any(line.startswith("tooleval batch: resuming batch_1") for line in lines), "\n".join(lines)
    assert verdicts(read_report(pytester.path / "first.json")) == clean
    assert verdicts(read_report(pytester.path / "second.json")) == clean
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.batches_created, stats.requests) == (1, 1, 0)


# -- 11. answers of the Batch API that are not JSON, or not its shape ----------------------------------------

KEPT = "batch_1 stays in the ledger, and a rerun resumes it (or drop --tooleval-batch)"


@pytest.mark.parametrize(
    ("route", "answer", "what", "detail", "then"),
    [
        (
            "upload",
            b"<html>oops</html>",
            "upload the requests",
            "the answer is not JSON (HTTP 200, 17 bytes: '<html>oops</html>')",
            "nothing was submitted (or drop --tooleval-batch)",
        ),
        (
            "upload",
            {"object": "file"},
            "upload the requests",
            "the answer has no valid id (none)",
            "nothing was submitted (or drop --tooleval-batch)",
        ),
        ("poll", b"{not json", "poll batch_1", "the answer is not JSON (HTTP 200, 9 bytes: '{not json')", KEPT),
        (
            "poll",
            {"id": "batch_1", "status": "completed", "output_file_id": 7},
            "poll batch_1",
            "the answer has no valid output_file_id (7)",
            KEPT,
        ),
        ("poll", [], "poll batch_1", "the answer is a JSON list, not a batch", KEPT),
        (
            "poll",
            b"[" * 100_000 + b"]" * 100_000,
            "poll batch_1",  # deeper than the decoder reads (issue 40)
            f"the answer is not JSON (HTTP 200, 200000 bytes: '{'[' * 60}')",
            KEPT,
        ),
    ],
    ids=[
        "upload-not-json",
        "upload-no-id",
        "poll-not-json",
        "poll-file-id-a-number",
        "poll-a-list",
        "poll-nested-too-deeply",
    ],
)
def test_a_batch_api_answer_that_is_not_json_or_not_its_shape_is_one_line(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    scripted: dict[str, str],
    route: Any,
    answer: Any,
    what: str,
    detail: str,
    then: str,
) -> None:
    fake_openai.answer_batch_api(route, answer)
    result = pytester.runpytest_subprocess(*batched(pytester, fake_openai, default_data), timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert only_line(result) == [f"ERROR: tooleval batch: could not {what} at {host(fake_openai)}: {detail}; {then}"]
    assert fake_openai.stats.batches_created == (1 if route == "poll" else 0)


def test_a_create_answer_that_is_no_batch_is_looked_for_by_the_next_run(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, clean: Verdicts
) -> None:
    fake_openai.answer_batch_api("create", b"")  # a 200 with no body: a batch may or may not have been made
    common = batched(pytester, fake_openai, default_data)
    result = pytester.runpytest_subprocess(*common, timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert only_line(result) == [
        f"ERROR: tooleval batch: could not create the batch at {host(fake_openai)}: the answer is not JSON (HTTP 200, "
        "0 bytes: ''); whether a batch was made from file-1 is unknown: the ledger keeps it, and a rerun looks for "
        "that batch before submitting again"
    ]
    assert [entry["state"] for entry in ledger(pytester)] == ["creating"]
    again = pytester.runpytest_subprocess(*common, timeout=120)
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    again.stdout.fnmatch_lines(
        [
            f"tooleval batch: an earlier run stopped while creating a batch from file-1, and "
            f"{host(fake_openai)} holds none made from it: this run submits its {SAMPLES} "
            "requests again, and the uploaded file-1 was deleted"
        ]
    )
    assert verdicts(read_report(pytester.path / "batch.json")) == clean
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.files_deleted, stats.batches_created) == (2, 1, 1)


def test_a_failed_create_deletes_its_upload(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]
) -> None:
    fake_openai.answer_batch_api(
        "create",
        {
            "error": {
                "message": "Enqueued token limit reached.",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        status=400,
    )
    result = pytester.runpytest_subprocess(*batched(pytester, fake_openai, default_data), timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert only_line(result) == [
        f"ERROR: tooleval batch: could not create the batch at {host(fake_openai)}: HTTP 400: Enqueued token limit "
        "reached.; no batch was made, and the uploaded file-1 was deleted (or drop --tooleval-batch)"
    ]
    assert (fake_openai.stats.files_uploaded, fake_openai.stats.files_deleted) == (1, 1)
    with pytest.raises(KeyError):
        fake_openai.file_content("file-1")
    assert ledger(pytester) == []


# -- 14. a key echoed in the batch's errors ----------------------------------------------------------------


def encodings(secret: str) -> list[bytes]:
    """`secret` as an artefact might hold it: raw, URL-encoded, JSON-escaped, and base64 at each alignment."""
    raw = secret.encode()
    forms = {
        raw,
        urllib.parse.quote(secret, safe="").encode(),
        json.dumps(secret)[1:-1].encode(),
        secret.encode("unicode_escape"),
    }
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw)
        forms.add(encoded[4 if offset else 0 : -4])  # the characters made of the secret's bytes alone
    return sorted(forms)


def leaks(data: bytes) -> list[bytes]:
    return [form for secret in (KEY, KEY[-24:]) for form in encodings(secret) if form in data]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
@pytest.mark.parametrize("fallback", ["ask", "error"])
@pytest.mark.parametrize("where", ["entries", "batch-errors"])
def test_a_key_the_batch_echoes_reaches_no_artefact(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    default_data: Path,
    scripted: dict[str, str],
    clean: Verdicts,
    where: str,
    fallback: str,
    workers: list[str],
) -> None:
    if where == "entries":  # five 401 entries quoting the Authorization header, five expired ones quoting it too
        fake_openai.enqueue(*[Fault.echo_auth()] * 5)  # the first five lines answered
        fake_openai.expire_batches(after=SAMPLES - 5, echo_auth=True)
    else:  # the batch fails, its errors[].message quoting the header
        fake_openai.fail_batches("token_limit_exceeded", "Enqueued token limit reached", echo_auth=True)
    result = pytester.runpytest_subprocess(
        *batched(
            pytester,
            fake_openai,
            default_data,
            "--junitxml=junit.xml",
            f"--tooleval-batch-fallback={fallback}",
            "-rA",
            "-vv",
            *workers,
        )
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the endpoint did echo the key
    batch = fake_openai.batch("batch_1")
    sent = (
        fake_openai.file_content(batch["error_file_id"]) if where == "entries" else json.dumps(batch["errors"]).encode()
    )
    assert KEY.encode() in sent
    # and it is in no artefact: the terminal, the report, the JUnit XML, the cache and its ledger
    assert leaks((result.stdout.str() + result.stderr.str()).encode()) == []
    assert (pytester.path / "junit.xml").exists() and (pytester.path / "cache" / "responses.sqlite").exists()
    found = {
        str(path.relative_to(pytester.path)): leaks(path.read_bytes())
        for path in sorted(pytester.path.rglob("*"))
        if path.is_file()
    }
    assert {path: forms for path, forms in found.items() if forms} == {}
    report = read_report(pytester.path / "batch.json")
    failed = 10 if where == "entries" else SAMPLES
    reason = "HTTP 401" if where == "entries" else "batch_failed"
    assert sum(report["totals"]["batch"]["failed"].values()) == failed
    if fallback == "ask":
        assert verdicts(report) == clean and fake_openai.stats.requests == failed
        return
    errors = errors_of(report)
    assert len(errors) == failed and fake_openai.stats.requests == 0
    assert all("Bearer ***" in error for error in errors.values()), errors  # named, the key masked
    assert {error.split(": the batch gave no answer: ", 1)[1].split(":", 1)[0] for error in errors.values()} == (
        {"HTTP 401", "batch_expired"} if where == "entries" else {reason}
    )
    result.stdout.fnmatch_lines(["*Bearer [*][*][*]*"])
    assert {key: value for key, value in verdicts(report).items() if key[1] not in errors} == {
        key: value for key, value in clean.items() if key[1] not in errors
    }
