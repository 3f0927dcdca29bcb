"""SIGKILL the whole run (controller and xdist workers) at seeded random points, rerun the same command: no sample
lost or counted twice, nothing answered before asked again, and the final report equals an uninterrupted run's.

(Killing a single xdist worker is tests/plugin/test_throughput.py::test_a_killed_worker_loses_no_sample.)
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

import pytest
from _reliability import THIN_TEST, answers_by_prompt, prompt_key, read_report, verdicts

from fake_openai import FakeOpenAI

CATEGORIES = ("normal_atom_bool", "normal_atom_enum", "special_incomplete", "special_irrelevant")
SEED = 20261130


def cached_answers(cache: Path) -> int:
    database = cache / "responses.sqlite"
    if not database.exists():
        return 0
    with sqlite3.connect(database) as conn:  # opening replays the WAL a killed writer left behind
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return int(conn.execute("SELECT count(*) FROM replies_v1").fetchone()[0])


class Kill(TypedDict, total=False):
    """When `run_and_kill` kills: one of the two."""

    after_requests: int
    after_s: float


def run_and_kill(
    command: list[str],
    cwd: Path,
    server: FakeOpenAI,
    *,
    after_requests: int | None = None,
    after_s: float | None = None,
) -> bool:
    """Start the run in its own process group; SIGKILL the group once the server has seen `after_requests` more
    requests or `after_s` seconds have passed. True when it was killed (False: it finished first)."""
    start_requests, started = server.stats.requests, time.monotonic()
    process = subprocess.Popen(
        command, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while process.poll() is None:
            due = (after_requests is not None and server.stats.requests - start_requests >= after_requests) or (
                after_s is not None and time.monotonic() - started >= after_s
            )
            if due:
                os.killpg(process.pid, signal.SIGKILL)  # the controller and every worker, at once
                process.wait()
                _quiet(server)
                return True
            time.sleep(0.002)
        return False
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _quiet(server: FakeOpenAI, still_s: float = 0.3) -> None:
    """Wait until the server has taken in every request the killed processes had sent: a request already on the
    wire when they died is read and counted by the server a moment later, and would otherwise be counted as the
    next run's (one such request made the final run seem to ask one sample too many)."""
    deadline = time.monotonic() + 30  # a hang guard
    seen, since = server.stats.requests, time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        if server.stats.requests != seen or server.stats.in_flight:
            seen, since = server.stats.requests, time.monotonic()
        elif time.monotonic() - since >= still_s:
            return


def test_killed_runs_resume_to_the_uninterrupted_result(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, default_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = answers_by_prompt(default_data, CATEGORIES)
    total = len(answers)
    fake_openai.latency_s = 0.03

    questions = {key.rsplit("\x00", 1)[-1] for key in answers}
    assert len(questions) == total  # the server counts requests by question: here each names one sample

    def respond(body: dict[str, Any]) -> str:
        return answers[prompt_key(body["messages"])]

    fake_openai.responder = respond
    pytester.makepyfile(test_acebench=THIN_TEST)
    common = [
        "--tooleval-model=m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-kill-test",
        f"--tooleval-data-dir={default_data}",
        f"--tooleval-categories={','.join(CATEGORIES)}",
        "-p",
        "no:cacheprovider",
    ]

    # the reference: one uninterrupted run with a cache of its own
    baseline = pytester.runpytest(
        *common,
        f"--tooleval-cache-dir={pytester.path / 'baseline-cache'}",
        "--tooleval-report=baseline.json",
        "-p",
        "no:xdist",
    )
    assert baseline.ret == pytest.ExitCode.TESTS_FAILED
    expected = verdicts(read_report(pytester.path / "baseline.json"))
    assert len(expected) == total and {outcome for outcome, *_ in expected.values()} == {"passed", "failed"}
    assert fake_openai.stats.requests == total

    cache = pytester.path / "cache"
    command = [
        sys.executable,
        "-m",
        "pytest",
        *common,
        f"--tooleval-cache-dir={cache}",
        "-n",
        "2",
        "--tooleval-concurrency=4",
        "--tooleval-report=report.json",
    ]
    rng = random.Random(SEED)
    kills: list[Kill] = [
        {"after_requests": rng.randint(5, 60)},
        {"after_requests": rng.randint(5, 40)},
        {"after_s": rng.uniform(0.2, 2.0)},
    ]
    # the timed kill may land in start-up, before the run's board exists or once it has cleared the dead runs'
    # boards (on a busy machine, start-up is slow): it goes first, so the last kill falls mid-run, board and all
    kills.insert(0, kills.pop())
    fake_openai.reset_stats()
    for kill in kills:
        cached_before, asked_before = cached_answers(cache), fake_openai.stats.requests
        assert run_and_kill(command, pytester.path, fake_openai, **kill), f"the run ended before the kill {kill}"
        asked = fake_openai.stats.requests - asked_before
        assert asked <= total - cached_before  # nothing cached was asked again, nothing asked twice
        assert cached_answers(cache) <= cached_before + asked
        assert not (pytester.path / "report.json").exists()

    cached_before, asked_before = cached_answers(cache), fake_openai.stats.requests
    assert 0 < cached_before < total  # the kills fell mid-run
    left = sorted(path.name for path in (cache / "runs").iterdir())
    assert left, "the killed runs left no board: the clean-up below proves nothing"
    final = subprocess.run(command, cwd=pytester.path, capture_output=True, text=True, timeout=300)
    assert final.returncode == pytest.ExitCode.TESTS_FAILED, final.stdout[-3000:]
    # every sample not cached was asked exactly once, and no other: what was answered before stays answered
    assert fake_openai.stats.requests - asked_before == total - cached_before
    assert cached_answers(cache) == total
    assert list((cache / "runs").iterdir()) == []  # the dead runs' boards went at its start, its own at its end
    report = read_report(pytester.path / "report.json")
    ids = Counter((sample["language"], sample["id"]) for sample in report["samples"])
    assert len(ids) == total and set(ids.values()) == {1}  # none lost, none counted twice
    assert verdicts(report) == expected
    assert report["summary"] == read_report(pytester.path / "baseline.json")["summary"]
    asked_overall = Counter({prompt: n for prompt, n in fake_openai.stats.by_prompt.items() if prompt})
    assert set(asked_overall) <= questions  # ("" counts requests a kill cut off before their body was sent)
    # a prompt asked twice was in flight when a kill fell (8 at most per kill), never one already answered
    assert sum(asked_overall.values()) - len(asked_overall) <= 8 * len(kills)


def test_a_live_runs_board_is_kept_and_a_dead_ones_removed(tmp_path: Path) -> None:
    from pytest_tooleval.answers.board import RunBoard, remove_stale_boards

    runs = tmp_path / "runs"
    code = (
        "import os, sys; from pathlib import Path; from pytest_tooleval.answers.board import RunBoard; "
        "b = RunBoard(Path(sys.argv[1])); b.try_claim('k'); os._exit(0)"
    )  # ends without closing it
    subprocess.run([sys.executable, "-c", code, str(runs / "dead.sqlite")], check=True)
    live = RunBoard(runs / "live.sqlite")
    try:
        assert {path.name for path in runs.iterdir()} >= {"dead.sqlite", "dead.sqlite.alive", "live.sqlite"}
        remove_stale_boards(runs)
        assert sorted(path.name for path in runs.iterdir() if path.name.startswith("dead")) == []
        assert live.try_claim("k") and (runs / "live.sqlite").exists()
    finally:
        live.close()
