"""Soak: the same 500-sample run, twenty times in one process, against an endpoint that fails 10% of requests in
mixed transient ways, with the cache off so every run really asks. Memory, threads, sockets and open files stay
flat and every run scores every sample the same.

Slow (a few minutes): `python -m pytest tests -m slow` runs it; the default run leaves it out.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from _reliability import THIN_TEST, answers_by_prompt, read_report, verdicts

CATEGORIES = (
    "normal_atom_bool",
    "normal_atom_enum",
    "normal_atom_number",
    "normal_atom_list",
    "normal_atom_object_short",
    "normal_single_turn_single_function",
    "special_incomplete",
    "special_irrelevant",
    "special_error_param",
)  # 500 samples
RUNS = 20
FAULT_RATE = 0.1
SERVER = Path(__file__).with_name("_soak_server.py")


def process_figures() -> dict[str, float]:
    """This process: resident memory (MB), threads, open files and sockets, read from /proc."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, gone already
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return {
        "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
        "threads": int(status["Threads"]),
        "python_threads": threading.active_count(),
        "fds": len(links),
        "sockets": sum(link.startswith("socket:") for link in links),
    }


@pytest.mark.slow
def test_twenty_runs_under_mixed_faults_stay_flat_and_score_alike(
    pytester: pytest.Pytester,
    default_data: Path,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = answers_by_prompt(default_data, CATEGORIES)
    assert len(answers) > 490  # (a few samples share one prompt: one request, one answer, for each of them)
    (pytester.path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "answers.json", str(FAULT_RATE), "7"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        pytester.makepyfile(test_acebench=THIN_TEST)
        args = [
            "--tooleval-model=m",
            f"--tooleval-base-url={base_url}",
            "--tooleval-api-key=sk-soak-0123456789",
            f"--tooleval-data-dir={default_data}",
            f"--tooleval-categories={','.join(CATEGORIES)}",
            f"--tooleval-cache-dir={pytester.path / 'cache'}",
            "--tooleval-no-cache",
            "--tooleval-timeout=1",
            "--tooleval-max-retries=10",
            "--tooleval-report=report.json",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
        ]
        figures: list[dict[str, float]] = []
        first_score = None
        for _ in range(RUNS):
            # pytest.main, not pytester.runpytest: pytester keeps every in-process run's reports until the test
            # ends, which would be its memory growing, not the plugin's
            assert pytest.main(args) == pytest.ExitCode.TESTS_FAILED
            gc.collect()
            figures.append(process_figures())
            report = read_report(pytester.path / "report.json")
            assert len(report["samples"]) == 500
            assert {sample["outcome"] for sample in report["samples"]} == {"passed", "failed"}  # no error
            score = (verdicts(report), report["summary"])
            first_score = first_score or score
            assert score == first_score  # every run scores every sample the same
            del report, score
    finally:
        server.send_signal(signal.SIGTERM)
        served = json.loads(server.communicate(timeout=30)[0].strip().splitlines()[-1])

    assert served["requests"] >= RUNS * 500 and served["faults"] >= RUNS * 500 * FAULT_RATE * 0.8
    settled = figures[4:]  # the first runs warm caches and pools up
    for name in ("threads", "python_threads", "fds", "sockets"):
        assert {figure[name] for figure in settled} == {settled[0][name]}, (name, [f[name] for f in figures])
    growth = settled[-1]["rss_mb"] - settled[0]["rss_mb"]
    assert growth < 15, [round(figure["rss_mb"], 1) for figure in figures]
    summary = {
        "runs": RUNS,
        "samples": 500,
        "requests": served["requests"],
        "faults": served["faults"],
        "rss_mb_first": round(figures[0]["rss_mb"], 1),
        "rss_mb_run5": round(settled[0]["rss_mb"], 1),
        "rss_mb_last": round(figures[-1]["rss_mb"], 1),
        "threads": settled[-1]["threads"],
        "fds": settled[-1]["fds"],
        "sockets": settled[-1]["sockets"],
    }
    record_property("soak", json.dumps(summary))
    print("soak:", json.dumps(summary))
