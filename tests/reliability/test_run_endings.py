"""A run stopped by a dead server ends as a stopped run, whatever stdout is (issue 40, point 7): exit status 2
and the summary, never a traceback from the status line at the end (its descriptor copy was closed, and a later
write raised EBADF: exit status 1, 4 of 4 runs whose output went to a file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI

DATA = os.environ.get("TOOLEVAL_DATA_DIR")
HANG_GUARD_S = 120


@pytest.mark.skipif(not DATA, reason="needs the upstream data (TOOLEVAL_DATA_DIR)")
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_server_that_dies_mid_run_with_output_to_a_file_ends_the_run_as_stopped(tmp_path: Path, workers: str) -> None:
    (tmp_path / "test_acebench.py").write_text(benchmark_source("acebench"))
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env.update(TOOLEVAL_NO_PROBE="1", TOOLEVAL_DATA_DIR=str(Path(DATA or "").resolve()))
    with FakeOpenAI(default="[]", latency_s=0.05) as server:
        args = [
            sys.executable,
            "-m",
            "pytest",
            "--tooleval-categories=special_irrelevant",
            "-p",
            "no:cacheprovider",
            f"--tooleval-cache-dir={tmp_path / 'cache'}",
            "--tooleval-model=m",
            f"--tooleval-base-url={server.base_url}",
            "--tooleval-api-key=sk-x",
            "--tooleval-max-retries=0",
            "--tooleval-progress-interval=0.05",
            "-n",
            workers,
        ]
        with (tmp_path / "out.txt").open("wb") as out:  # a file, as a CI log is: no terminal
            run = subprocess.Popen(args, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, env=env)
            deadline = time.monotonic() + HANG_GUARD_S
            while server.stats.requests < 5 and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            server.stop()  # the server dies: the run stops once ten requests in a row fail
            try:
                code = run.wait(HANG_GUARD_S)
            finally:
                if run.poll() is None:
                    run.kill()
    text = (tmp_path / "out.txt").read_text(errors="replace")
    assert code == pytest.ExitCode.INTERRUPTED, text[-3000:]
    assert "Traceback" not in text and "OSError" not in text, text[-3000:]
    assert "tooleval stopped the run: " in text and "stopped answering" in text


@pytest.mark.skipif(not DATA, reason="needs the upstream data (TOOLEVAL_DATA_DIR)")
def test_a_half_second_outage_within_the_retry_budget_loses_nothing(tmp_path: Path) -> None:
    """Issue 40, point 6: ten connection failures in 82 ms stopped a 500-sample run. The breaker counts failures
    over the requests' retry budget, so a server back within it loses no sample."""
    (tmp_path / "test_acebench.py").write_text(benchmark_source("acebench"))
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env.update(TOOLEVAL_NO_PROBE="1", TOOLEVAL_DATA_DIR=str(Path(DATA or "").resolve()))
    server = FakeOpenAI(default="[]", latency_s=0.02).start()
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    args = [
        sys.executable,
        "-m",
        "pytest",
        "--tooleval-categories=special_irrelevant,special_incomplete",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={tmp_path / 'cache'}",
        "--tooleval-model=m",
        f"--tooleval-base-url={server.base_url}",
        "--tooleval-api-key=sk-x",
        "--tooleval-report=report.json",
        "--tooleval-concurrency=8",
    ]
    with (tmp_path / "out.txt").open("wb") as out:
        run = subprocess.Popen(args, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + HANG_GUARD_S
        while server.stats.requests < 10 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        server.stop()  # the outage: every request in flight, and every one sent in the next half second, fails
        time.sleep(0.5)
        server = FakeOpenAI(default="[]", latency_s=0.02, port=port).start()
        try:
            code = run.wait(HANG_GUARD_S)
        finally:
            server.stop()
            if run.poll() is None:
                run.kill()
    text = (tmp_path / "out.txt").read_text(errors="replace")
    assert code == pytest.ExitCode.TESTS_FAILED, text[-3000:]  # every answer is wrong: a finished run
    assert "stopped the run" not in text
    samples = json.loads((tmp_path / "report.json").read_text())["samples"]
    assert len(samples) == 100 and {row["outcome"] for row in samples} == {"failed"}
