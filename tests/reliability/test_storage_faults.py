"""Our own storage failing under a run: the cache and the run board on a real disk that fills up (a small
tmpfs), a folder full from the start (the run goes on uncached; tests/reliability/test_read_only_cache.py has
the folders that cannot be written at all), a cache whose write lock another process holds, a cache file that
cannot be opened. Answers are delivered and scored from memory, the run ends in normal time, and the summary
says what was not kept. (Empty replies are not kept: tests/unit/infra/test_response_cache.py.)"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _reliability import read_report

from fake_openai import FakeOpenAI, last_user_message
from mini_acebench import RIGHT
from mini_acebench import SAMPLES as MINI_SAMPLES


@contextlib.contextmanager
def small_disk(path: Path, size: str = "2m") -> Iterator[Path]:
    """A real tmpfs of `size` at `path` (root only)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"needs root to mount a small tmpfs: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> None:
    """Take every free byte of the file system holding `folder`."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for block in (65536, 512, 1):  # down to the last byte
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * block):
                    pass
    finally:
        os.close(fd)


def fill_after(fake: FakeOpenAI, folder: Path, requests: int) -> None:
    """The fake server answers right, and the disk is full from request `requests` + 1 on."""
    seen = {"n": 0}

    def responder(body: dict[str, Any]) -> str:
        seen["n"] += 1
        if seen["n"] == requests + 1:
            fill(folder)
        last = last_user_message(body)
        return next(reply for needle, reply in RIGHT.items() if needle in last)

    fake.responder = responder


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_disk_that_fills_mid_run_loses_no_answer(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], workers: list[str]
) -> None:
    cache = pytester.path / "cache"
    with small_disk(cache):
        fill_after(fake_openai, cache, 3)
        fake_openai.latency_s = 0.05
        # the hang this guards against never ended: the timeout fails the test (the run takes seconds)
        result = pytester.runpytest_subprocess(
            *live,
            *workers,
            "--tooleval-concurrency=1",
            f"--tooleval-report={pytester.path / 'report.json'}",
            timeout=120,
        )
    result.assert_outcomes(passed=MINI_SAMPLES)
    if workers:  # results the hub could not share were asked again by the workers that needed them
        assert fake_openai.stats.requests >= MINI_SAMPLES
        result.stdout.fnmatch_lines(
            ["tooleval: run board in *: database or disk is full; * results could not be shared between processes*"]
        )
    else:  # nothing asked twice
        assert fake_openai.stats.requests == MINI_SAMPLES
    result.stdout.fnmatch_lines(
        [
            "tooleval: response cache in *: database or disk is full; * answers were not "
            "cached (writing it was turned off for the rest of the run)*"
        ]
    )
    report = read_report(pytester.path / "report.json")
    assert [s["outcome"] for s in report["samples"]] == ["passed"] * MINI_SAMPLES
    assert {fault["store"] for fault in report["storage_faults"]} >= {"response cache"}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_full_cache_folder_at_start_runs_uncached_with_one_line(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live: list[str],
    workers: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = pytester.path / "cache"
    monkeypatch.setenv("TMPDIR", str(pytester.mkdir("tmp")))  # where the run board goes instead (xdist)
    with small_disk(cache):
        fill(cache)
        result = pytester.runpytest_subprocess(*live, *workers, timeout=60)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=MINI_SAMPLES)
    assert fake_openai.stats.requests == MINI_SAMPLES
    said = [
        line for line in result.stdout.lines if line.startswith(("tooleval: response cache", "tooleval: run board"))
    ]
    assert said == [
        f"tooleval: response cache in {cache}: cannot be written (No space left on device); this run's "
        "answers were not cached (each was asked and scored): point --tooleval-cache-dir (or "
        "TOOLEVAL_CACHE_DIR) at a writable folder to keep them"
    ]
    assert not result.stderr.str().strip() and "INTERNALERROR" not in result.stdout.str()


def test_a_held_cache_lock_costs_no_error_and_no_stall(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    pytester.runpytest_subprocess(*live, "-k", "atom_bool").assert_outcomes(passed=2)  # the cache file exists
    holder = sqlite3.connect(pytester.path / "cache" / "responses.sqlite", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another run's writer, holding the lock for the whole of this run
        # a held lock used to cost the whole 60 s busy timeout in front of an answer, and a test error: the
        # outcomes fail the error, the timeout a stall (five answers written in front would wait 300 s; the run
        # takes seconds)
        result = pytester.runpytest_subprocess(*live, "--tooleval-concurrency=1", timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    result.assert_outcomes(passed=MINI_SAMPLES)
    result.stdout.fnmatch_lines(
        [
            "tooleval: response cache in *: another process held the write lock; nothing was "
            "lost; * writes were skipped while another process held its write lock*"
        ]
    )
    fake_openai.reset_stats()
    pytester.runpytest_subprocess(*live, "--tooleval-cache=reuse").assert_outcomes(passed=MINI_SAMPLES)
    assert fake_openai.stats.requests == MINI_SAMPLES - 2  # what was not written is asked again, nothing else


def test_a_cache_disk_that_fails_at_open_runs_uncached(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    cache = pytester.path / "cache"
    cache.mkdir()
    (cache / "responses.sqlite").mkdir()  # not a file: sqlite cannot open it
    result = pytester.runpytest_subprocess(*live, timeout=60)
    result.assert_outcomes(passed=MINI_SAMPLES)
    result.stdout.fnmatch_lines(["tooleval: response cache in *: cannot be opened (*); the run went on without it*"])
    assert fake_openai.stats.requests == MINI_SAMPLES
