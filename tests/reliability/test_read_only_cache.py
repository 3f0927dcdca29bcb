"""A cache folder the run cannot write: a read-only mount, a HOME where ~/.cache cannot be made, a path under a
file. What needs nothing written goes on: a live model is asked uncached (one line says so), the oracle, replay
and --tooleval-no-cache open no response cache at all, and with xdist the run board and the rpm/tpm limits
file live in a private temporary folder for the run. What must be written stops the run with one line and
exit status 4: data to download, the --tooleval-batch ledger, a report in a folder that cannot be written.

The tests run as root, whom permission bits do not stop: the read-only folders are tmpfs mounts made read-only
(`mount -o ro`), and the tests skip, saying why, where mounting is not allowed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _reliability import read_report

from fake_openai import FakeOpenAI
from mini_acebench import SAMPLES, write_mini_acebench
from pytest_tooleval.data.download import cache_path
from pytest_tooleval.suites.acebench import data

WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
UNCACHED = (
    "tooleval: response cache in {folder}: cannot be written ({reason}); this run's answers were not "
    "cached (each was asked and scored): point --tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at a writable "
    "folder to keep them"
)


@contextlib.contextmanager
def read_only(path: Path, seed: dict[str, bytes] | None = None) -> Iterator[Path]:
    """A tmpfs at `path` holding `seed` (relative path: bytes), then mounted read-only (root only)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"needs root to mount a read-only tmpfs: {mounted.stderr.strip()}")
    try:
        for relative, content in (seed or {}).items():
            (path / relative).parent.mkdir(parents=True, exist_ok=True)
            (path / relative).write_bytes(content)
        subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True, capture_output=True)
        with pytest.raises(OSError):
            (path / "probe").write_bytes(b"")  # read-only for root too
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.fixture
def private_tmp(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runs' system temporary folder (TMPDIR), apart from other tests' and from /tmp."""
    folder = pytester.mkdir("tmp")
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def without_cache_dir(options: list[str]) -> list[str]:
    return [option for option in options if not option.startswith("--tooleval-cache-dir")]


def tooleval_lines(output: str) -> list[str]:
    """The plugin's lines about its storage (the run's header names the cache folder too: not those)."""
    said = ("response cache", "run board", "cannot be written", "not cached")
    return [line for line in output.splitlines() if line.startswith("tooleval: ") and any(s in line for s in said)]


def leftovers(folder: Path) -> list[str]:
    """The files a run left under `folder` (the run board and limits files are removed at its end)."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def spare_folders(tmp: Path) -> list[str]:
    """The folders made in the system's temporary folder `tmp`: the runs folder of a run board (or limits file)
    that could not be made in the cache folder."""
    return sorted(path.name for path in tmp.iterdir())


SPARE = f"pytest-tooleval-runs-{os.getuid()}"


# -- what needs nothing written goes on ----------------------------------------------------------------------


@WORKERS
def test_a_read_only_cache_folder_asks_uncached_with_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], private_tmp: Path, workers: list[str]
) -> None:
    cache = pytester.path / "cache"
    with read_only(cache):
        first = pytester.runpytest_subprocess(*live, *workers, "--tooleval-report=report.json", timeout=120)
        second = pytester.runpytest_subprocess(*live, *workers, timeout=120)
    for result in (first, second):
        assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
        result.assert_outcomes(passed=SAMPLES)
        assert tooleval_lines(result.stdout.str()) == [UNCACHED.format(folder=cache, reason="Read-only file system")]
        assert not result.stderr.str().strip()
    assert fake_openai.stats.requests == 2 * SAMPLES  # nothing cached: the second run asks everything again
    faults = read_report(pytester.path / "report.json")["storage_faults"]
    assert [(fault["store"], fault["folder"], fault["off"]) for fault in faults] == [
        ("response cache", str(cache), True)
    ]
    assert spare_folders(private_tmp) == ([SPARE] if workers else [])  # xdist: the run board went there
    assert leftovers(private_tmp) == []  # the board and its files, there for the run, are gone


@pytest.mark.parametrize("model", ["no-cache", "oracle", "replay"])
@WORKERS
def test_no_cache_and_models_not_live_open_no_response_cache(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live: list[str],
    private_tmp: Path,
    model: str,
    workers: list[str],
) -> None:
    replay = pytester.path / "outputs.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": f"normal_atom_bool_{n}", "result": answer}) + "\n"
            for n, answer in enumerate(["[get_weather(city='Paris')]", "[get_weather(city='Rome', days=3)]"])
        )
    )
    options = {
        "no-cache": [*live, "--tooleval-no-cache"],
        "oracle": [*without_cache_dir(live), "--tooleval-model=oracle"],
        "replay": [*without_cache_dir(live), f"--tooleval-model=replay:{replay}", "-k", "normal_atom_bool"],
    }[model]
    passed = 2 if model == "replay" else SAMPLES
    if not workers:  # in a folder that can be written too
        writable = pytester.mkdir("writable")
        result = pytester.runpytest_subprocess(*options, f"--tooleval-cache-dir={writable}", timeout=120)
        result.assert_outcomes(passed=passed)
        assert leftovers(writable) == []  # not even the response cache's lock file
    cache = pytester.path / "cache"
    with read_only(cache):
        result = pytester.runpytest_subprocess(*options, *workers, f"--tooleval-cache-dir={cache}", timeout=120)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=passed)
    assert tooleval_lines(result.stdout.str()) == [] and not result.stderr.str().strip()  # nothing to say
    assert fake_openai.stats.requests == ((1 if workers else 2) * SAMPLES if model == "no-cache" else 0)
    assert leftovers(private_tmp) == []


@pytest.mark.parametrize("model", ["live", "oracle"])
@WORKERS
def test_a_home_where_the_cache_folder_cannot_be_made(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live: list[str],
    monkeypatch: pytest.MonkeyPatch,
    private_tmp: Path,
    model: str,
    workers: list[str],
) -> None:
    home = pytester.path / "home"
    monkeypatch.delenv("TOOLEVAL_CACHE_DIR", raising=False)
    options = without_cache_dir(live) + (["--tooleval-model=oracle"] if model == "oracle" else [])
    with read_only(home):
        monkeypatch.setenv("HOME", str(home))  # ~/.cache/pytest-tooleval cannot be made
        result = pytester.runpytest_subprocess(*options, *workers, timeout=120)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=SAMPLES)
    expected = [UNCACHED.format(folder=home / ".cache" / "pytest-tooleval", reason="Read-only file system")]
    assert tooleval_lines(result.stdout.str()) == (expected if model == "live" else [])
    assert fake_openai.stats.requests == (SAMPLES if model == "live" else 0)


@WORKERS
def test_a_cache_folder_under_a_file_asks_uncached_with_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], private_tmp: Path, workers: list[str]
) -> None:
    (pytester.path / "a-file").write_text("")
    cache = pytester.path / "a-file" / "cache"
    result = pytester.runpytest_subprocess(
        *without_cache_dir(live), f"--tooleval-cache-dir={cache}", *workers, timeout=120
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=SAMPLES)
    assert tooleval_lines(result.stdout.str()) == [UNCACHED.format(folder=cache, reason="Not a directory")]
    assert fake_openai.stats.requests == SAMPLES


@WORKERS
def test_rate_limits_with_a_read_only_cache_hold_from_a_temporary_folder(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], private_tmp: Path, workers: list[str]
) -> None:
    cache = pytester.path / "cache"
    with read_only(cache):
        result = pytester.runpytest_subprocess(
            *live, *workers, "--tooleval-rpm=60000", "--tooleval-tpm=10000000", "--tooleval-no-cache", timeout=120
        )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=SAMPLES)
    assert fake_openai.stats.requests == SAMPLES
    assert spare_folders(private_tmp) == [SPARE] and leftovers(private_tmp) == []  # the limits file went there


def test_data_already_in_a_read_only_cache_is_read(pytester: pytest.Pytester, mini: list[str]) -> None:
    source = write_mini_acebench(pytester.path / "downloaded")
    cache = pytester.path / "cache"
    folder = cache_path(data.load_pin(), Path("."))  # where a download puts it, under the cache folder
    seed = {str(folder / path.relative_to(source)): path.read_bytes() for path in source.rglob("*") if path.is_file()}
    options = [option for option in mini if not option.startswith("--tooleval-data-dir")]
    with read_only(cache, seed):
        result = pytester.runpytest_subprocess(*options, "--tooleval-model=oracle", timeout=120)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=SAMPLES)


# -- what must be written stops the run: one line, exit status 4 ---------------------------------------------


def assert_one_usage_line(result: pytest.RunResult, expected: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert [line for line in result.stderr.lines if line.strip()] == [expected]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@WORKERS
def test_data_to_download_into_a_read_only_cache_is_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], workers: list[str]
) -> None:
    options = [option for option in live if not option.startswith("--tooleval-data-dir")]
    cache = pytester.path / "cache"
    with read_only(cache):
        result = pytester.runpytest_subprocess(*options, *workers, timeout=120)
    assert_one_usage_line(
        result,
        f"ERROR: ACEBench 56dd66c data must be downloaded into {cache}, which cannot be "
        "written (Read-only file system): point --tooleval-data-dir (or TOOLEVAL_DATA_DIR) "
        "at a copy of the data, or --tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at a "
        "writable folder",
    )
    assert fake_openai.stats.requests == 0


@WORKERS
def test_a_batch_with_a_read_only_cache_is_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], workers: list[str]
) -> None:
    cache = pytester.path / "cache"
    with read_only(cache):
        result = pytester.runpytest_subprocess(*live, *workers, "--tooleval-batch", timeout=120)
    assert_one_usage_line(
        result,
        f"ERROR: --tooleval-batch keeps its ledger and its answers in the cache folder "
        f"{cache}, which cannot be written (Read-only file system): point "
        "--tooleval-cache-dir (or TOOLEVAL_CACHE_DIR) at a writable folder",
    )
    stats = fake_openai.stats
    assert (stats.requests, stats.files_uploaded, stats.batches_created) == (0, 0, 0)


def test_a_report_into_a_read_only_folder_is_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    cache = pytester.path / "cache"
    with read_only(cache):
        result = pytester.runpytest_subprocess(*live, f"--tooleval-report={cache / 'report.json'}", timeout=120)
    assert_one_usage_line(
        result, f"ERROR: --tooleval-report: cannot write {cache / 'report.json'}: {cache} is not writable"
    )
    assert fake_openai.stats.requests == 0
