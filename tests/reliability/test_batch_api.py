"""--tooleval-batch against the fake server's files and batches endpoints: the same scores as asking one by one,
a batch resumed (never submitted again) after a kill, expired entries asked again or errors, never scored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _reliability import KEY, THIN_TEST, answers_by_prompt, prompt_key, read_report, verdicts

from fake_openai import FakeOpenAI

SINGLE = ("normal_atom_bool", "special_irrelevant")  # one request each: batched
CATEGORIES = (*SINGLE, "agent_multi_step")  # rollouts: asked as usual


@pytest.fixture
def scripted(fake_openai: FakeOpenAI, default_data: Path) -> dict[str, str]:
    """Two samples in three answered right, the third wrong; an agent's requests get `[]` (it stops at once)."""
    answers = answers_by_prompt(default_data, SINGLE)
    fake_openai.responder = lambda body: answers.get(prompt_key(body["messages"]), "[]")
    return answers


def options(pytester: pytest.Pytester, server: FakeOpenAI, data: Path, cache: str, *more: str) -> list[str]:
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={server.base_url}",
        f"--tooleval-api-key={KEY}",
        f"--tooleval-data-dir={data}",
        f"--tooleval-categories={','.join(CATEGORIES)}",
        f"--tooleval-cache-dir={pytester.path / cache}",
        "-p",
        "no:cacheprovider",
        *more,
    ]


def interactive(
    pytester: pytest.Pytester, server: FakeOpenAI, data: Path, scripted: dict[str, str]
) -> dict[tuple[str, str], Any]:
    """The reference: every sample asked one by one (a cache of its own); the server's counts reset after."""
    result = pytester.runpytest_subprocess(
        *options(pytester, server, data, "interactive-cache", "--tooleval-report=interactive.json")
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expected = verdicts(read_report(pytester.path / "interactive.json"))
    assert {outcome for outcome, *_ in expected.values()} == {"passed", "failed"}
    asked = set(server.stats.by_prompt)
    assert len(asked) > 100 and questions(scripted) <= asked  # how a batch run is checked
    server.reset_stats()
    return expected


def questions(scripted: dict[str, str]) -> set[str]:
    """The user messages of the single-call samples (the server counts requests by their last user message)."""
    return {key.rsplit("\x00", 1)[-1] for key in scripted}


def batched_samples(expected: dict[tuple[str, str], Any]) -> int:
    return sum(1 for _, sample_id in expected if sample_id.startswith(SINGLE))


# one process under -m slow: the xdist run passes through the same path, and more of it (docs/development.md)
@pytest.mark.parametrize(
    "workers", [pytest.param([], marks=pytest.mark.slow), ["-n", "2"]], ids=["one-process", "xdist"]
)
def test_a_batch_run_scores_as_asking_one_by_one(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str], workers: list[str]
) -> None:
    expected = interactive(pytester, fake_openai, default_data, scripted)
    result = pytester.runpytest_subprocess(
        *options(
            pytester,
            fake_openai,
            default_data,
            "cache",
            "--tooleval-batch",
            "--tooleval-batch-poll=0.05",
            "--tooleval-report=batch.json",
            "--tooleval-prices=fake-model=1/2",
            *workers,
        )
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read_report(pytester.path / "batch.json")
    assert verdicts(report) == expected
    # the batch's answers are priced at half, the rollouts' at full price
    assert {row["id"].startswith(SINGLE): row.get("batched") for row in report["samples"]} == {True: "", False: None}
    for entry in report["totals"]["categories"]:
        rows = [row for row in report["samples"] if row["category"] == entry["category"]]
        # what the cache served (a rollout's request another rollout asked first) was asked once, and priced once
        asked = [
            {
                key: value - (row.get("cached_tokens") or {}).get(key, 0) if row.get("batched") is None else value
                for key, value in row["tokens"].items()
            }
            for row in rows
        ]
        full = sum(tokens.get("prompt", 0) * 1 + tokens.get("completion", 0) * 2 for tokens in asked) / 1e6
        share = 0.5 if entry["category"] in SINGLE else 1.0
        assert entry["cost_usd"] == pytest.approx(share * full, abs=1e-6), entry
    result.stdout.fnmatch_lines(["tooleval cost: * estimated at --tooleval-prices (batch answers at half price)*"])
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.batches_created) == (1, 1)
    assert stats.batch_entries_answered == batched_samples(expected) == 100
    # only the agent rollouts were asked one by one: no single-call sample's question reached the chat endpoint
    assert stats.requests >= 20 and not questions(scripted) & set(stats.by_prompt)
    assert report["totals"]["batch"]["answered"] == 100 and report["totals"]["batch"]["failed"] == {}
    result.stdout.fnmatch_lines(
        [
            "tooleval batch: submitted batch_1 (100 requests, window 24h)*",
            "tooleval batch batch_1: completed, 100 of 100 done, 0 failed",
            "tooleval batch: 100 answers from 1 batch (100 requests submitted, 0 resumed) in *",
        ]
    )
    assert not list((pytester.path / "cache" / "batches").glob("*.json"))  # collected: nothing left to resume


def test_a_run_killed_between_submit_and_download_resumes_its_batch(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]
) -> None:
    expected = interactive(pytester, fake_openai, default_data, scripted)
    common = options(
        pytester,
        fake_openai,
        default_data,
        "cache",
        "--tooleval-batch",
        "--tooleval-batch-poll=0.05",
        "--tooleval-report=batch.json",
        "-m",
        "not agent",
    )
    fake_openai.hold_batches()  # submitted, and in progress for as long as the test wants
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *common],
        cwd=pytester.path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while fake_openai.stats.batch_polls < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.poll() is None, "the run ended before the kill"
        os.killpg(process.pid, signal.SIGKILL)  # between submit and download
        process.wait()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    ledger = list((pytester.path / "cache" / "batches").glob("*.json"))
    assert [json.loads(path.read_text())["batch_id"] for path in ledger] == ["batch_1"]
    assert not (pytester.path / "batch.json").exists()
    fake_openai.release_batches()
    result = pytester.runpytest_subprocess(*common)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.batches_created) == (1, 1)  # resumed, never submitted again
    assert stats.requests == 0 and stats.batch_entries_answered == 100
    result.stdout.fnmatch_lines(
        [
            "tooleval batch: resuming batch_1, submitted by an earlier run (100 of its requests are this run's)",
            "tooleval batch: 100 answers from 1 batch (0 requests submitted, 100 resumed) in *",
        ]
    )
    single = {key: value for key, value in expected.items() if key[1].startswith(SINGLE)}
    assert verdicts(read_report(pytester.path / "batch.json")) == single
    assert not list((pytester.path / "cache" / "batches").glob("*.json"))


# "error" under -m slow: it waits out the same expiry as "ask" (docs/development.md)
@pytest.mark.parametrize("fallback", ["ask", pytest.param("error", marks=pytest.mark.slow)])
def test_an_expired_batchs_unanswered_entries_are_asked_again_or_errors(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str], fallback: str
) -> None:
    expected = interactive(pytester, fake_openai, default_data, scripted)
    single = {key: value for key, value in expected.items() if key[1].startswith(SINGLE)}
    fake_openai.expire_batches(after=60)  # the window closed with 60 of the 100 answered
    result = pytester.runpytest_subprocess(
        *options(
            pytester,
            fake_openai,
            default_data,
            "cache",
            "--tooleval-batch",
            "--tooleval-batch-poll=0.05",
            "--tooleval-report=batch.json",
            f"--tooleval-batch-fallback={fallback}",
            "-m",
            "not agent",
        )
    )
    report = read_report(pytester.path / "batch.json")
    got = verdicts(report)
    assert report["totals"]["batch"]["failed"] == {"batch_expired": 40}
    if fallback == "ask":
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert got == single  # the 40 asked one by one score as they would have
        assert fake_openai.stats.requests == 40
        result.stdout.fnmatch_lines(
            [
                "tooleval batch: 60 answers from 1 batch (100 requests submitted, 0 resumed) in "
                "* s; 40 did not (batch_expired: 40): asked as ordinary requests"
            ]
        )
    else:
        assert fake_openai.stats.requests == 0
        errors = [row for row in report["samples"] if row["outcome"] == "error"]
        assert len(errors) == 40 and all("batch_expired" in row["error"] for row in errors)
        assert all(row["valid"] is None for row in errors)  # never scored
        assert {key: value for key, value in got.items() if value[0] != "error"} == {
            key: single[key] for key, value in got.items() if value[0] != "error"
        }


def test_an_endpoint_without_a_batch_api_is_asked_as_usual(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]
) -> None:
    expected = interactive(pytester, fake_openai, default_data, scripted)
    fake_openai.batch_api = False  # vLLM and Ollama serve no /v1/files
    result = pytester.runpytest_subprocess(
        *options(
            pytester,
            fake_openai,
            default_data,
            "cache",
            "--tooleval-batch",
            "--tooleval-report=batch.json",
            "-m",
            "not agent",
        )
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts(read_report(pytester.path / "batch.json")) == {
        key: value for key, value in expected.items() if key[1].startswith(SINGLE)
    }
    assert fake_openai.stats.requests == 100
    result.stdout.fnmatch_lines(
        [
            f"tooleval batch: not used: {fake_openai.base_url.split('://')[1].split('/')[0]}* "
            "has no Batch API (HTTP 404: *); every sample was asked as an ordinary request"
        ]
    )


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (
            ["--tooleval-no-cache"],
            "ERROR: --tooleval-batch keeps the batch's answers in the response cache: drop --tooleval-no-cache",
        ),
        (
            ["--tooleval-max-cost=1", "--tooleval-prices=fake-model=1/1"],
            "ERROR: --tooleval-max-cost cannot stop a batch once it is submitted: use one or the other",
        ),
    ],
)
def test_what_a_batch_cannot_work_with_is_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, extra: list[str], line: str
) -> None:
    result = pytester.runpytest_subprocess(
        *options(pytester, fake_openai, default_data, "cache", "--tooleval-batch", *extra)
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [text for text in result.stderr.lines if text.strip()] == [line]
    assert fake_openai.stats.requests == 0 and fake_openai.stats.files_uploaded == 0


def test_a_batch_still_running_when_the_wait_ends_is_collected_by_a_later_run(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, scripted: dict[str, str]
) -> None:
    expected = interactive(pytester, fake_openai, default_data, scripted)
    single = {key: value for key, value in expected.items() if key[1].startswith(SINGLE)}
    common = options(
        pytester,
        fake_openai,
        default_data,
        "cache",
        "--tooleval-batch",
        "--tooleval-batch-poll=0.05",
        "-m",
        "not agent",
        "--tooleval-fail-under=overall=0.1",
    )
    fake_openai.hold_batches()
    submitted = pytester.runpytest_subprocess(*common, "--tooleval-batch-wait=0", "--tooleval-report=submitted.json")
    assert submitted.ret == pytest.ExitCode.TESTS_FAILED  # the gate: incomplete, whatever the figures
    report = read_report(pytester.path / "submitted.json")
    assert report["samples"] == [] and report["totals"]["batch"]["pending"] == 100
    assert report["totals"]["batch"]["not_run"] == 100 and report["gate"]["incomplete"]
    submitted.stdout.fnmatch_lines(
        [
            "*100 skipped*",
            "tooleval: 100 samples were not run: their batch was still "
            "running when --tooleval-batch-wait ran out (run again to collect it): the run "
            "is incomplete",
            "tooleval gate: INCOMPLETE: *",
            "tooleval gate: FAILED",
        ]
    )
    assert fake_openai.stats.requests == 0
    fake_openai.release_batches()
    collected = pytester.runpytest_subprocess(*common, "--tooleval-report=collected.json")
    assert collected.ret == pytest.ExitCode.OK  # 0.66 >= 0.1, every sample scored
    assert verdicts(read_report(pytester.path / "collected.json")) == single
    stats = fake_openai.stats
    assert (stats.files_uploaded, stats.batches_created, stats.requests) == (1, 1, 0)
