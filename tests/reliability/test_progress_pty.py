"""The status line on a real terminal (a pty made by `script`, from util-linux), end to end."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_acebench import CATEGORIES, RIGHT, write_mini_acebench


@pytest.fixture
def live(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    fake_openai.replies.update(RIGHT)
    fake_openai.latency_s = 0.3
    return ["--tooleval-model=m", f"--tooleval-base-url={fake_openai.base_url}", "--tooleval-api-key=sk-progress-1",
            f"--tooleval-data-dir={data}", f"--tooleval-categories={CATEGORIES}", "--tooleval-concurrency=1",
            f"--tooleval-cache-dir={pytester.path / 'cache'}", "-p", "no:cacheprovider"]


def test_on_a_terminal_it_is_redrawn_in_place_on_the_bottom_row(pytester: pytest.Pytester, live: list[str]) -> None:
    command = shlex.join([sys.executable, "-m", "pytest", *live])
    env = {**os.environ, "COLUMNS": "120", "LINES": "30", "TERM": "xterm"}
    # script gets a session of its own and no stdin: it would read its stdin and take its session's terminal,
    # and an xdist worker's stdin is its channel to the controller
    done = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=pytester.path, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, start_new_session=True, text=True, timeout=120)
    output = done.stdout
    assert done.returncode == 0, output[-2000:]
    assert "\x1b[1;29r" in output  # the bottom row is kept out of the scrolling region ...
    assert "\x1b[30;1H\x1b[2Ktooleval: " in output and "/7 answered, " in output  # ... and redrawn there
    assert output.index("\x1b[r") < output.index("tooleval summary")  # given back before the summary
