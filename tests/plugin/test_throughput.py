"""Work ahead across processes: each sample asked once, a killed worker's samples taken over, run-wide limits."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault
from pytest_tooleval.models.limits import URGENT, AdaptiveLimit

THIN_TEST = benchmark_source("acebench")
HANG_GUARD_S = 120  # a run that hangs is ended here, and fails the test

KILLER = """
import os, signal

def pytest_runtest_call(item):
    if item.callspec.id == os.environ["KILL_AT"] and not os.path.exists("killed-once"):
        open("killed-once", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def acebench_args(pytester: pytest.Pytester, data_root: Path, fake_openai: FakeOpenAI) -> list[str]:
    pytester.makepyfile(test_acebench=THIN_TEST)
    fake_openai.default = "[get_weather(city='Paris')]"
    return [
        "--tooleval-model",
        "m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-x",
        f"--tooleval-data-dir={data_root}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
    ]


def test_each_sample_is_asked_once_while_workers_compute_ahead(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str]
) -> None:
    fake_openai.latency_s = 0.05
    result = pytester.runpytest_subprocess(
        *acebench_args, "-k", "normal_atom_bool or special_incomplete", "-n", "2", "--tooleval-concurrency=6"
    )
    result.assert_outcomes(failed=100)
    assert fake_openai.stats.requests == 100
    assert max(fake_openai.stats.by_prompt.values()) == 1
    assert fake_openai.stats.peak_in_flight > 2  # more than one request per process was open at once
    assert not list((pytester.path / "cache" / "runs").glob("*.sqlite"))  # the run's board is cleaned up


BOARD_SPY = """
import json, pathlib

def pytest_sessionfinish(session):
    runs = pathlib.Path(session.config.getoption("tooleval_cache_dir")) / "runs"
    pathlib.Path("boards.json").write_text(json.dumps(sorted(p.name for p in runs.glob("*")) if runs.exists() else []))
"""


@pytest.mark.parametrize(("workers", "boards"), [(["-p", "no:xdist"], 0), (["-n", "2"], 1)], ids=["single", "xdist"])
def test_the_run_board_exists_only_with_xdist(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str], workers: list[str], boards: int
) -> None:
    """One process keeps its claims and answers in memory; only xdist's processes share a sqlite board."""
    pytester.makeconftest(BOARD_SPY)  # looks before the plugin cleans up at the end of the run
    result = pytester.runpytest_subprocess(*acebench_args, "-k", "normal_atom_bool", *workers)
    result.assert_outcomes(failed=50)
    assert fake_openai.stats.requests == 50
    seen = json.loads((pytester.path / "boards.json").read_text())
    assert len([name for name in seen if name.endswith(".sqlite") and ".limits." not in name]) == boards, seen


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_collect_only_asks_nothing(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str], workers: list[str]
) -> None:
    # a session that lingers after collection, so work started ahead of the tests would reach the server
    pytester.makeconftest("import time\n\ndef pytest_sessionfinish():\n    time.sleep(1.5)\n")
    result = pytester.runpytest_subprocess(*acebench_args, "--collect-only", "-q", *workers)
    assert result.ret == 0
    assert fake_openai.stats.requests == 0


def test_a_killed_worker_loses_no_sample(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KILL_AT", "en-normal_atom_bool_20")
    pytester.makeconftest(KILLER)
    fake_openai.latency_s = 0.02
    selection = ["-k", "normal_atom_bool or special"]
    result = pytester.runpytest_subprocess(*acebench_args, *selection, "-n", "2", "--tooleval-concurrency=4")
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["errors"]) == (199, 1)  # 199 wrong answers; the sample whose worker died
    result.stdout.fnmatch_lines(["*worker*crashed*"])
    samples = json.loads((pytester.path / "report.json").read_text())["samples"]
    assert len(samples) == 200
    crashed = [s for s in samples if s["outcome"] == "error"]
    assert [s["id"] for s in crashed] == ["normal_atom_bool_20"]
    result.stdout.fnmatch_lines(["*= 199 failed, 1 error in *"])  # pytest's closing line says the same
    # only requests in flight when the worker died can have been sent twice
    assert fake_openai.stats.requests <= 200 + 4
    asked = fake_openai.stats.requests
    pytester.path.joinpath("killed-once").unlink()
    monkeypatch.setenv("KILL_AT", "none")
    rerun = pytester.runpytest_subprocess(*acebench_args, *selection, "-n", "2", "--tooleval-cache=reuse")
    rerun.assert_outcomes(failed=200)
    assert fake_openai.stats.requests == asked  # the rerun is answered from the cache


WORKER_SPY = """
import pathlib

def pytest_sessionstart(session):
    workerinput = getattr(session.config, "workerinput", None)  # only an xdist worker has it
    if workerinput is not None:
        pathlib.Path("worker-" + workerinput["workerid"]).touch()
"""

# pytest on one CPU core (the workers xdist starts inherit it), its arguments after the program's
ONE_CORE = "import os, sys, pytest; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); sys.exit(pytest.main())"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
@pytest.mark.parametrize(("setting", "started"), [("auto", 1), ("all", 3)])
def test_a_hub_run_starts_a_worker_per_core_and_keeps_its_requests_in_flight(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    acebench_args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    started: int,
) -> None:
    """With the controller asking for every sample, -n 3 on one core starts one worker (the others would only
    start up and collect); the requests in flight stay those of three workers. `all` starts all three."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this test's own xdist worker's, which the inner run would inherit
    pytester.makeconftest(WORKER_SPY)
    fake_openai.latency_s = 0.3
    args = [
        *acebench_args,
        "-k",
        "normal_atom_bool",
        "-n",
        "3",
        "--tooleval-concurrency=4",
        f"--tooleval-workers={setting}",
    ]
    result = pytester.run(sys.executable, "-c", ONE_CORE, *args, timeout=HANG_GUARD_S)
    result.assert_outcomes(failed=50)
    assert sorted(path.name for path in pytester.path.glob("worker-gw*")) == [f"worker-gw{n}" for n in range(started)]
    assert fake_openai.stats.requests == 50
    assert max(fake_openai.stats.by_prompt.values()) == 1
    assert fake_openai.stats.peak_in_flight > 4  # more than one worker's concurrency: the hub asks for all three
    said = "*tooleval: 1 of -n 3 workers started: the controller asks for every sample (up to 12 requests in flight)*"
    if setting == "auto":
        result.stdout.fnmatch_lines([said])
    else:
        result.stdout.no_fnmatch_line(said)


def test_rpm_holds_across_workers(pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str]) -> None:
    result = pytester.runpytest_subprocess(
        *acebench_args, "-k", "special_irrelevant_1", "-n", "2", "--tooleval-rpm=240"
    )
    result.assert_outcomes(failed=11)  # special_irrelevant_1 and _10 to _19
    arrivals = sorted(request.at for request in fake_openai.stats.received)
    count = len(arrivals)
    assert count == 11
    # 240 per minute is 4 per second with a burst of 4: n requests need at least (n - 4) / 4 seconds
    assert arrivals[-1] - arrivals[0] >= (count - 4) / 4 * 0.9


def rejected(limit: AdaptiveLimit) -> None:
    """An attempt that starts and is answered 429 at once."""
    limit.on_rate_limited(limit.begin())


def answered(limit: AdaptiveLimit) -> None:
    limit.on_success(limit.begin())


def test_adaptive_limit_halves_when_overloaded_and_grows_back() -> None:
    limit = AdaptiveLimit(16)
    for _ in range(15):
        rejected(limit)
    assert limit.limit == 16  # too few attempts seen to call it overload
    rejected(limit)
    assert limit.limit == 8
    rejected(limit)  # the same burst: counted once
    assert limit.limit == 8
    for _ in range(8):
        answered(limit)
    assert 8.9 < limit.limit < 9.1


def test_429s_answered_before_the_successes_of_their_round_do_not_shrink_the_limit() -> None:
    """A rate limiter rejecting half of all requests answers its 429s at once and the rest a latency later:
    the first 32 answers of a run are all 429s, but only half of the 64 requests started were rejected."""
    limit = AdaptiveLimit(64)
    started = [limit.begin() for _ in range(64)]
    for attempt in started[::2]:
        limit.on_rate_limited(attempt)
    assert limit.limit == 64
    for attempt in started[1::2]:
        limit.on_success(attempt)
    assert limit.limit == 64
    overloaded = [limit.begin() for _ in range(32)]  # now every request started is rejected
    for attempt in overloaded:
        limit.on_rate_limited(attempt)
    assert limit.limit == 32


def test_adaptive_limit_hands_slots_out_first_come_first_served() -> None:
    """A task that finishes a request and asks again at once must queue behind the tasks already waiting
    (otherwise the same few tasks keep the slots and the samples claimed first wait until the end)."""

    async def scenario() -> list[str]:
        limit, order = AdaptiveLimit(1), []

        async def request(name: str) -> None:
            async with limit:
                order.append(name)
                await asyncio.sleep(0.01)

        async def busy_worker() -> None:  # asks again the moment its request ends, without yielding
            for round_ in range(3):
                await request(f"busy{round_}")

        busy = asyncio.ensure_future(busy_worker())
        await asyncio.sleep(0)  # busy0 holds the slot
        waiters = [asyncio.ensure_future(request(f"waiter{i}")) for i in range(2)]
        await asyncio.gather(busy, *waiters)
        return order

    assert asyncio.run(scenario()) == ["busy0", "waiter0", "waiter1", "busy1", "busy2"]


def test_an_urgent_request_takes_the_next_free_slot() -> None:
    async def scenario() -> list[str]:
        limit, order = AdaptiveLimit(1), []

        async def request(name: str, urgent: bool = False) -> None:
            token = URGENT.set(urgent)
            try:
                async with limit:
                    order.append(name)
                    await asyncio.sleep(0.01)
            finally:
                URGENT.reset(token)

        first = asyncio.ensure_future(request("holder"))
        await asyncio.sleep(0)
        queued = [asyncio.ensure_future(request(f"queued{i}")) for i in range(2)]
        await asyncio.sleep(0)
        urgent = asyncio.ensure_future(request("urgent", urgent=True))
        await asyncio.gather(first, urgent, *queued)
        return order

    assert asyncio.run(scenario()) == ["holder", "urgent", "queued0", "queued1"]


def test_cancelled_waiters_pass_their_turn_on() -> None:
    async def scenario() -> tuple[int, list[bool]]:
        limit = AdaptiveLimit(1)
        await limit.__aenter__()
        waiters = [asyncio.ensure_future(limit.__aenter__()) for _ in range(3)]
        await asyncio.sleep(0)
        waiters[0].cancel()
        waiters[1].cancel()
        await limit.__aexit__(None, None, None)  # drops the cancelled ones before their tasks have run
        await asyncio.wait_for(waiters[2], 30)  # a hang guard: its turn comes at once
        await asyncio.gather(*waiters, return_exceptions=True)
        return limit.in_use, [waiter.cancelled() for waiter in waiters]

    assert asyncio.run(scenario()) == (1, [True, True, False])


def test_scattered_429s_do_not_shrink_the_limit() -> None:
    limit = AdaptiveLimit(16)
    for _ in range(100):  # half the attempts rejected, whatever the load
        rejected(limit)
        answered(limit)
    assert limit.limit == 16
    rng, lowest = random.Random(7), 16.0  # the same at random: 3 rejections in 4 happen by chance now and then
    for _ in range(2000):
        rejected(limit) if rng.random() < 0.5 else answered(limit)
        lowest = min(lowest, limit.limit)
    assert lowest == 16


def test_429_storm_ends_with_every_sample_scored(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, acebench_args: list[str]
) -> None:
    fake_openai.fault_rate, fake_openai.fault = 0.5, Fault.rate_limit(retry_after=0.1)
    result = pytester.runpytest_subprocess(
        *acebench_args, "-k", "special_incomplete", "-n", "2", "--tooleval-max-retries=20"
    )
    result.assert_outcomes(failed=50)
    samples = json.loads((pytester.path / "report.json").read_text())["samples"]
    assert all(sample["outcome"] == "failed" for sample in samples)
