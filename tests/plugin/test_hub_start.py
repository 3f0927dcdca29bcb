"""Under xdist the controller collects the run's tests itself and the hub asks from the start, before any worker
has collected (pytest_tooleval/hooks/ahead.py); what the workers collect is still what runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI

# a worker's collection waits (at most a minute) until the endpoint has been asked: the hub of a run that waited
# for a worker's collection before asking would sit out the whole minute, and the file says it never was asked
WAITING_WORKER = """
import os, time
from pathlib import Path

import pytest

@pytest.hookimpl(tryfirst=True)  # before xdist tells the controller what this worker collected
def pytest_collection_finish(session):
    if not hasattr(session.config, "workerinput"):  # (not the environment: pytester's own worker sets it)
        return
    worker = session.config.workerinput["workerid"]
    asked = Path(os.environ["ASKED_MARKER"])
    deadline = time.monotonic() + 60
    while not asked.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    Path(f"collected-{worker}.json").write_text(str(asked.exists()).lower())
"""


def run_args(data_root: Path, server: FakeOpenAI, folder: Path) -> list[str]:
    return [
        "--tooleval-model",
        "m",
        f"--tooleval-base-url={server.base_url}",
        "--tooleval-api-key=sk-x",
        f"--tooleval-data-dir={data_root}",
        f"--tooleval-cache-dir={folder / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
        "--tooleval-no-probe",
        "-n",
        "2",
    ]


def test_the_hub_asks_before_any_worker_has_collected(
    pytester: pytest.Pytester, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = pytester.path / "asked"

    def respond(body: dict[str, Any]) -> str:
        marker.touch()
        return "[get_weather(city='Paris')]"

    monkeypatch.setenv("ASKED_MARKER", str(marker))
    pytester.makeconftest(WAITING_WORKER)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    with FakeOpenAI(responder=respond) as server:
        result = pytester.runpytest_subprocess(
            *run_args(data_root, server, pytester.path), "-k", "special_incomplete", timeout=300
        )
    result.assert_outcomes(failed=50)
    waited = {path.name: json.loads(path.read_text()) for path in pytester.path.glob("collected-gw*.json")}
    assert waited == {"collected-gw0.json": True, "collected-gw1.json": True}  # each found a request already sent
    assert server.stats.requests == 50  # each sample asked once, by the hub


# the workers leave out samples the controller keeps (a collection that differs from process to process)
WORKERS_DESELECT = """
def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):
        kept = [item for item in items if item.name.endswith(("_0]", "_1]"))]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
"""


def test_a_sample_no_worker_collected_is_dropped_from_the_hubs_list(pytester: pytest.Pytester, data_root: Path) -> None:
    pytester.makeconftest(WORKERS_DESELECT)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    # 1 s an answer: the hub's 50 samples outlast the workers' start even on a busy machine (0.2 s did not, beside
    # three CPU hogs)
    with FakeOpenAI(default="[get_weather(city='Paris')]", latency_s=1.0) as server:
        result = pytester.runpytest_subprocess(
            *run_args(data_root, server, pytester.path),
            "-k",
            "special_incomplete",
            "--tooleval-concurrency=1",
            timeout=300,
        )
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "collected other tests than the controller (2 against 50): the hub asks for the worker's only" in out
    report = json.loads((pytester.path / "report.json").read_text())
    assert sorted(sample["id"] for sample in report["samples"]) == ["special_incomplete_0", "special_incomplete_1"]
    # two request slots (two workers x 1): what the hub had started before the check, and no more
    assert server.stats.requests < 50
