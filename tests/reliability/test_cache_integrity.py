"""The response cache through real runs: a damaged file is set aside with a warning and rebuilt, concurrent runs
share it without damage, and an answer is reused only for the very same request.

(tests/unit/infra/test_response_cache.py has the cache itself: keys, eight writer processes, damaged files.)
"""

from __future__ import annotations

import fnmatch
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _reliability import read_report, verdicts

from fake_openai import FakeOpenAI
from mini_acebench import SAMPLES as MINI_SAMPLES


@pytest.fixture
def live(live: list[str]) -> list[str]:
    """The runs here reuse one another's answers (--tooleval-cache reuse): what the key holds is under test."""
    return [*live, "--tooleval-cache=reuse"]


def cache_rows(cache: Path) -> int:
    with sqlite3.connect(cache / "responses.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return int(conn.execute("SELECT count(*) FROM replies_v1").fetchone()[0])


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda data: data[: len(data) // 3],
    "pages-overwritten": lambda data: data[:4096] + b"\xff\x00" * 1024 + data[6144:],  # the rows' page
    "not-sqlite": lambda data: b"<html>502 Bad Gateway</html>\n" * 200,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_cache_is_set_aside_rebuilt_and_the_run_completes(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], damage: Callable[[bytes], bytes]
) -> None:
    pytester.runpytest(*live).assert_outcomes(passed=MINI_SAMPLES)
    cache = pytester.path / "cache" / "responses.sqlite"
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{cache}{suffix}").exists()  # the run checkpointed and closed its cache
    damaged = damage(cache.read_bytes())
    cache.write_bytes(damaged)
    # in process, this project's `filterwarnings = error` would reach the inner run: let the warning be one
    result = pytester.runpytest(*live, "-W", "default::pytest_tooleval.models.cache.ResponseCacheWarning")
    result.assert_outcomes(passed=MINI_SAMPLES, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*ResponseCacheWarning: response cache *responses.sqlite is corrupt (*); moved it to "
            "responses.sqlite.corrupt and started an empty cache (answers will be asked again)"
        ]
    )
    assert (cache.parent / "responses.sqlite.corrupt").read_bytes() == damaged  # kept for a look, byte for byte
    assert fake_openai.stats.requests == 2 * MINI_SAMPLES  # asked again, each sample once
    assert cache_rows(cache.parent) == MINI_SAMPLES  # rebuilt
    pytester.runpytest(*live).assert_outcomes(passed=MINI_SAMPLES)
    assert fake_openai.stats.requests == 2 * MINI_SAMPLES  # and used


def test_under_xdist_a_damaged_cache_is_set_aside_once_and_said_so(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    cache = pytester.path / "cache" / "responses.sqlite"
    cache.parent.mkdir()
    cache.write_bytes(b"SQLite format 3\x00" + b"\x00\xff" * 5000)  # a header, then garbage
    result = pytester.runpytest_subprocess(*live, "-n", "2")
    result.assert_outcomes(passed=MINI_SAMPLES)
    # the controller asks the model for its workers, so it opens the cache: its warning goes to stderr
    warning = "*ResponseCacheWarning: response cache *responses.sqlite is corrupt*"
    assert fnmatch.filter(result.outlines + result.errlines, warning), result.outlines + result.errlines
    assert sorted(path.name for path in cache.parent.glob("responses.sqlite.corrupt*")) == ["responses.sqlite.corrupt"]
    assert cache_rows(cache.parent) == MINI_SAMPLES


def test_concurrent_runs_share_one_cache_without_damage(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """Four runs at once (four writer processes, each also checking the file on open) on one cache folder."""
    fake_openai.latency_s = 0.02
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "pytest", *live, "-p", "no:xdist", f"--tooleval-report=r{n}.json"],
            cwd=pytester.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for n in range(4)
    ]
    outputs = [run.communicate(timeout=120)[0].decode() for run in runs]
    assert [run.returncode for run in runs] == [0] * 4, outputs
    assert all("ResponseCacheWarning" not in output for output in outputs)
    assert cache_rows(pytester.path / "cache") == MINI_SAMPLES
    reports = [verdicts(read_report(pytester.path / f"r{n}.json")) for n in range(4)]
    assert reports[0] and all(report == reports[0] for report in reports)
    assert MINI_SAMPLES <= fake_openai.stats.requests <= 4 * MINI_SAMPLES
    asked = fake_openai.stats.requests
    pytester.runpytest(*live).assert_outcomes(passed=MINI_SAMPLES)
    assert fake_openai.stats.requests == asked


def test_an_answer_is_reused_only_for_the_same_request(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    other_host = fake_openai.base_url.replace("127.0.0.1", "localhost")
    copies = iter(range(100))

    def edit(name: str, old: str, new: str) -> Callable[[], list[str]]:
        def change() -> list[str]:  # the data as it was, changed, in a new folder (see conftest: loaders cache)
            root = pytester.path / f"data{next(copies)}"
            shutil.copytree(pytester.path / "data", root)
            path = root / "acebench" / "data_all" / "data_en" / name
            path.write_text(path.read_text().replace(old, new))
            shutil.copytree(root, pytester.path / "data", dirs_exist_ok=True)  # later steps keep the change
            return [f"--tooleval-data-dir={root}"]

        return change

    # (what changes, extra options, how many samples must be asked again)
    steps: list[tuple[str, list[str], Callable[[], list[str]] | None, int]] = [
        ("first run", [], None, MINI_SAMPLES),
        ("the same run", [], None, 0),
        ("another key (never part of the key)", ["--tooleval-api-key=sk-another-key-0123456789"], None, 0),
        ("another model", ["--tooleval-model=fake-model-2"], None, MINI_SAMPLES),
        ("another endpoint", [f"--tooleval-base-url={other_host}"], None, MINI_SAMPLES),
        ("temperature", ["--tooleval-temperature=0.7"], None, MINI_SAMPLES),
        ("top_p", ["--tooleval-top-p=0.9"], None, MINI_SAMPLES),
        ("max_tokens", ["--tooleval-max-tokens=512"], None, MINI_SAMPLES),
        ("0 and 0.0 are one temperature", ["--tooleval-temperature=0.0"], None, 0),
        ("one question", [], edit("data_normal_atom_bool.json", "weather in Paris?", "weather in Paris, please?"), 1),
        (
            "the functions of a category",
            [],
            edit("data_normal_atom_bool.json", "Weather for a city.", "Weather for any city."),
            2,
        ),
        ("no cache", ["--tooleval-no-cache"], None, MINI_SAMPLES),
        ("the same run again", [], None, 0),
    ]
    seen = []
    for what, options, change, _ in steps:
        data = change() if change is not None else []
        before = fake_openai.stats.requests
        pytester.runpytest(*live, *options, *data).assert_outcomes(passed=MINI_SAMPLES)
        seen.append((what, fake_openai.stats.requests - before))
    assert seen == [(what, expected) for what, _, _, expected in steps]
    assert {body["model"] for body in fake_openai.stats.json_bodies} == {"fake-model", "fake-model-2"}
