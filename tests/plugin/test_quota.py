"""An account out of quota (OpenAI's 429 insufficient_quota, a 402 Payment Required) is no rate limit: no retry
heals it. At the start the endpoint probe stops the run with one line (exit status 4); mid-run, quota running
out as it does, the first such refusal stops the run with the breaker's one line (exit status 2), in seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault
from mini_acebench import CATEGORIES, UNVERIFIED, write_mini_acebench

REFUSALS = {"429-insufficient-quota": Fault.insufficient_quota(), "402-insufficient-credits": Fault.no_credits()}
SAID = {
    "429-insufficient-quota": "HTTP 429: You exceeded your current quota, please check your plan and billing details.",
    "402-insufficient-credits": "HTTP 402: Insufficient credits. Add more using https://openrouter.ai/credits",
}
FIX = (
    "the account has no quota left: check the plan and billing of the key's account, or use a key that has quota "
    "(--tooleval-api-key or OPENAI_API_KEY)"
)
HANG_GUARD_S = 90  # the run ends in seconds (35 s seen on a loaded 2-core CI); a retried refusal ran past 600 s


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
@pytest.mark.parametrize("refusal", REFUSALS)
def test_the_probe_meets_an_account_out_of_quota_and_stops_the_run_in_one_line(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    refusal: str,
    workers: list[str],
) -> None:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.default = REFUSALS[refusal]  # type: ignore[assignment]
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "--tooleval-model=gpt-x",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-quota-1234567",
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={CATEGORIES}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        *workers,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, result.stderr.str()
    assert errors[0].startswith(
        "ERROR: tooleval: the endpoint probe failed for the model role: model 'gpt-x' at "
        f"127.0.0.1:{fake_openai.port}/v1 refused a request ({SAID[refusal]}"
    )
    assert errors[0].endswith(FIX)
    assert fake_openai.stats.requests == 1  # the probe, not retried
    assert elapsed < HANG_GUARD_S, elapsed


def answers_then(refusal: Fault, answered: int) -> Any:
    """A responder: the right answer to the first `answered` requests, then the refusal for every one."""
    lock, count = threading.Lock(), [0]

    def respond(body: dict[str, Any]) -> Any:
        with lock:
            count[0] += 1
            if count[0] > answered:
                return refusal
        return "[get_weather(city='Paris')]"

    return respond


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
@pytest.mark.parametrize("refusal", REFUSALS)
def test_quota_running_out_mid_run_stops_it_at_the_first_refusal(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    refusal: str,
    workers: list[str],
) -> None:
    """973 samples, the probe off; the endpoint answers 20 requests, then the account is out of quota. The run
    stops at the first refusal, though the endpoint had answered (a dead key or server would need five)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.responder = answers_then(REFUSALS[refusal], 20)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "--tooleval-model=m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-quota-1234567",
        f"--tooleval-data-dir={data_root}",
        "-m",
        "normal or special",
        "--tooleval-no-cache",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
        *workers,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert result.ret == pytest.ExitCode.INTERRUPTED
    last = [line for line in result.stdout.lines if line.strip()][-1]
    assert last.startswith(
        f"tooleval stopped the run: model 'm' at 127.0.0.1:{fake_openai.port}/v1 refused a request ({SAID[refusal]}"
    ), result.stdout.str()
    assert last.endswith(FIX)
    outcomes = result.parseoutcomes()
    # only what was answered is scored; the requests in flight when quota ran out (a request slot each) error
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) <= 20
    assert outcomes.get("errors", 0) <= 8 * max(1, len(workers))
    refused = fake_openai.stats.requests - 20
    assert 1 <= refused <= 8 * max(1, len(workers))  # none retried, none asked after the trip
    assert elapsed < HANG_GUARD_S, elapsed
