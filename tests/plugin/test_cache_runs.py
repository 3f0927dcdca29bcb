"""The gate judges the model served today (issue 39): a model served anew under the same name at the same URL is
asked again, not answered from a finished run's cache; `--tooleval-cache reuse` reuses only what the same served
model answered, and a comparison with a baseline made of the run's own cached answers does not pass.

One fake server plays both checkpoints in turn under one model name and URL: its answers (and, where a test says
so, its /v1/models entry or system_fingerprint) change between the runs, as when vLLM is restarted on new weights.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault

DATA = os.environ.get("TOOLEVAL_DATA_DIR")
pytestmark = pytest.mark.skipif(not DATA, reason="needs the upstream data (TOOLEVAL_DATA_DIR)")
CATEGORY = "special_irrelevant"
SAMPLES = 50  # ACEBench en's special_irrelevant
RIGHT = "Due to the limitations of the function, I cannot solve this problem."
WRONG = "[get_weather(city='Paris')]"


class Served:
    """The fake server and a run of the category against it; `serve(answer)` swaps the checkpoint behind it."""

    def __init__(self, pytester: pytest.Pytester, server: FakeOpenAI) -> None:
        self.pytester, self.server = pytester, server

    def serve(self, answer: str, **entry: Any) -> None:
        self.server.default = answer
        self.server.model_entry = dict(entry)

    def run(self, *args: str, report: str = "report.json", workers: int = 0) -> tuple[pytest.RunResult, dict[str, Any]]:
        before = self.server.stats.requests
        result = self.pytester.runpytest_subprocess(
            "--tooleval-model=my-model",
            f"--tooleval-base-url={self.server.base_url}",
            "--tooleval-api-key=sk-x",
            f"--tooleval-categories={CATEGORY}",
            f"--tooleval-cache-dir={self.pytester.path / 'cache'}",
            "-p",
            "no:cacheprovider",
            f"--tooleval-report={report}",
            "-n",
            str(workers),
            *args,
            timeout=180,
        )
        self.asked = self.server.stats.requests - before  # the probe's request included
        path = self.pytester.path / report
        return result, json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture
def served(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(Path(DATA or "").resolve()))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)  # as a user runs it: the probe learns the fingerprint
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    with FakeOpenAI(model="my-model") as server:
        yield Served(pytester, server)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_model_served_anew_under_the_same_name_is_asked_again_and_its_regression_fails_the_gate(
    served: Served, workers: int
) -> None:
    served.serve(RIGHT)
    result, baseline = served.run(report="baseline.json", workers=workers)
    assert result.ret == 0 and served.asked == SAMPLES + 1
    result.stdout.fnmatch_lines([f"tooleval totals: {SAMPLES} samples ({SAMPLES} scored, 0 errors; {SAMPLES} asked)*"])
    assert baseline["run"]["cache"]["mode"] == "resume" and baseline["run"]["cache"]["resumed"] is None

    served.serve(WRONG)  # the same name at the same URL: another checkpoint, every answer wrong
    result, report = served.run(
        "--tooleval-baseline=baseline.json", "--tooleval-max-regression=overall=0.05", workers=workers
    )
    assert served.asked == SAMPLES + 1  # nothing of the finished run was reused
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["tooleval gate: acebench.en.overall: 1.000 -> 0.000*REGRESSION", "tooleval gate: FAILED*"]
    )
    assert report["run"]["cache"]["id"] != baseline["run"]["cache"]["id"]
    assert {row["source"] for row in report["samples"]} == {"asked"}


def test_reuse_takes_the_same_served_models_answers_and_says_so(served: Served) -> None:
    served.serve(RIGHT, root="/models/ckpt-1", max_model_len=32768)
    first, _ = served.run(report="first.json")
    assert first.ret == 0
    again, report = served.run("--tooleval-cache=reuse", report="again.json")
    assert served.asked == 1  # the probe only: the same served model's answers were reused
    assert again.ret == 0
    again.stdout.fnmatch_lines(
        [
            f"tooleval totals: {SAMPLES} samples ({SAMPLES} scored, 0 errors; 0 asked, "
            f"{SAMPLES} reused from the cache (oldest made 20*UTC))*"
        ]
    )
    assert {row["source"] for row in report["samples"]} == {"cache"}
    assert report["totals"]["answers"]["cache"] == SAMPLES


@pytest.mark.parametrize("swap", ["weights", "fingerprint"])
def test_reuse_asks_again_when_the_endpoint_serves_another_model(served: Served, swap: str) -> None:
    served.serve(RIGHT, root="/models/ckpt-1")
    first, _ = served.run()
    assert first.ret == 0
    if swap == "weights":
        served.serve(WRONG, root="/models/ckpt-2")  # vLLM lists the weights' path as the model's root
    else:
        served.serve(WRONG, root="/models/ckpt-1")
        served.server.system_fingerprint = "fp_fake_0002"  # OpenAI's build of the model changed
    again, report = served.run("--tooleval-cache=reuse")
    assert served.asked == SAMPLES + 1
    assert again.ret == 1 and {row["source"] for row in report["samples"]} == {"asked"}


def test_a_baseline_made_of_the_runs_own_cached_answers_is_no_comparison(served: Served) -> None:
    served.serve(RIGHT)
    served.run(report="baseline.json")
    served.serve(WRONG)  # the listing says nothing of the swap: reuse cannot tell, the gate must not pass
    result, report = served.run("--tooleval-cache=reuse", "--tooleval-baseline=baseline.json")
    assert served.asked == 1
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            f"tooleval gate: NOT A COMPARISON: {SAMPLES} of {SAMPLES} samples were answered "
            "from the baseline run's own cached answers*--tooleval-cache fresh",
            "tooleval gate: FAILED*",
        ]
    )
    assert report["comparison"]["own_answers"] == SAMPLES
    fresh, _ = served.run(
        "--tooleval-cache=fresh",
        "--tooleval-baseline=baseline.json",
        "--tooleval-max-regression=overall=0.05",
        report="fresh.json",
    )
    assert served.asked == SAMPLES + 1 and fresh.ret == 1
    fresh.stdout.fnmatch_lines(["tooleval gate: acebench.en.overall: 1.000 -> 0.000*REGRESSION"])


def test_an_unfinished_run_is_resumed_and_asks_only_what_it_lacked(served: Served) -> None:
    answered = 0

    def die_after_twenty(body: dict[str, Any]) -> str | Fault:
        nonlocal answered
        if answered >= 20:
            return Fault.reset()  # the server went away mid-run: the run stops, unfinished
        answered += 1
        return RIGHT

    served.server.responder = die_after_twenty
    first, _ = served.run("--tooleval-max-retries=0", "--tooleval-concurrency=1", report="first.json")
    assert first.ret == 2, first.stdout.str()
    kept = answered - 1  # the probe's answer is not a sample's
    assert 0 < kept < SAMPLES

    served.server.responder = None
    served.serve(RIGHT)
    again, report = served.run()
    assert served.asked == SAMPLES - kept + 1  # only what the first run lacked (and the probe)
    assert again.ret == 0
    again.stdout.fnmatch_lines(
        [
            "tooleval: resuming the unfinished run of my-model begun 20* UTC: its cached "
            "answers are used (--tooleval-cache fresh asks everything again)",
            f"tooleval totals: {SAMPLES} samples ({SAMPLES} scored, 0 errors; {SAMPLES - kept} "
            f"asked, {kept} resumed from the cache (oldest made 20*UTC))*",
        ]
    )
    assert report["run"]["cache"]["resumed"] is not None

    finished, _ = served.run(report="finished.json")  # the resumed run finished: the next one asks everything
    assert served.asked == SAMPLES + 1 and finished.ret == 0
