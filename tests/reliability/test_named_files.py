"""Files a user names are read with a bound, and only when they are regular files (issue 40): a FIFO, a device or a
socket where a replay file, the bfcl-eval wheel, a quarantine file, a baseline or shard report, tooleval.yaml, a
suite file or the GPT4Tools test set should be is refused before it is opened, with one line naming it (exit status
4; 2 for the merge command); so is a file larger than its kind is ever read whole. Before, a FIFO nobody writes
hung the run, and /dev/zero as the wheel was read until the memory ran out.

Each run has a hang guard (`GUARD_S`): the test asserts the outcome, never how long it took.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from pytest_tooleval.suites.bfcl.upstream import load_pin
from refused_runs import refused_line, run_guarded

GUARD_S = 60.0  # a hang guard for each merge and memory-bounded run, never a bound the test asserts
FIFO = "a named pipe (FIFO), not a regular file"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return run_guarded(pytester, *args, why="a named file was read unbounded?")


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def oracle(mini: list[str]) -> list[str]:
    return [*mini, "--tooleval-model=oracle"]


def wheel_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, wheel: Path) -> list[str]:
    """A BFCL run whose data is not in the (empty) cache, so the wheel named is read to fill it."""
    for name in ("TOOLEVAL_DATA_DIR", "TOOLEVAL_BFCL_WHEEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_bfcl=benchmark_source("bfcl"))
    return [
        "--tooleval-model=oracle",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "--tooleval-offline",
        f"--tooleval-bfcl-wheel={wheel}",
        "-p",
        "no:cacheprovider",
        "test_bfcl.py",
    ]


def wheel_hint() -> str:
    return f"point --tooleval-bfcl-wheel (or TOOLEVAL_BFCL_WHEEL) at {load_pin().wheel}"


# -- FIFOs ----------------------------------------------------------------------------------------------------
# (what a case names, given the pytester folder, the mini ACEBench options and monkeypatch) -> (args, the line)
Case = Callable[[pytest.Pytester, list[str], pytest.MonkeyPatch], tuple[list[str], str]]


def replay_file(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    path = fifo(pytester.path / "outputs.jsonl")
    return [*mini, f"--tooleval-model=replay:{path}"], f"ERROR: {path}: {FIFO}"


def replay_folder(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    (pytester.path / "outputs" / "a.jsonl").parent.mkdir()
    (pytester.path / "outputs" / "a.jsonl").write_text('{"id": "normal_atom_bool_0", "result": "[f()]"}\n')
    path = fifo(pytester.path / "outputs" / "b.jsonl")
    return [*mini, f"--tooleval-model=replay:{pytester.path / 'outputs'}"], f"ERROR: {path}: {FIFO}"


def quarantine(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    path = fifo(pytester.path / "quarantine.yaml")
    return [*oracle(mini), f"--tooleval-quarantine={path}"], f"ERROR: --tooleval-quarantine: {path}: {FIFO}"


def baseline(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    path = fifo(pytester.path / "baseline.json")
    return [*oracle(mini), f"--tooleval-baseline={path}"], f"ERROR: --tooleval-baseline: {path}: {FIFO}"


def config_file(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    """tooleval.yaml beside the ini file: before, a FIFO there was passed over as no file at all."""
    path = fifo(pytester.path / "tooleval.yaml")
    return oracle(mini), f"ERROR: {path}: {FIFO}"


def suite_file(pytester: pytest.Pytester, mini: list[str], _: pytest.MonkeyPatch) -> tuple[list[str], str]:
    """A FIFO among the suite files the run finds, beside a sound one."""
    (pytester.path / "sound.tooleval.yaml").write_text(
        "tools:\n  - name: note\n    parameters: {type: object, properties: {text: {type: string}}}\n"
        "cases:\n  - name: take_a_note\n    user: Take a note saying hi.\n"
        "    expect: {calls: [{name: note, arguments: {text: hi}}]}\n",
        encoding="utf-8",
    )
    path = fifo(pytester.path / "piped.tooleval.yaml")
    return oracle(mini), f"ERROR: {path}: {FIFO}"


def gpt4tools_test_set(
    pytester: pytest.Pytester,
    _: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[str], str]:
    monkeypatch.delenv("TOOLEVAL_GPT4TOOLS_PATH", raising=False)
    pytester.makepyfile(test_gpt4tools=benchmark_source("gpt4tools"))
    path = fifo(pytester.path / "gpt4tools_test.json")
    return (
        [
            "--tooleval-model=oracle",
            f"--tooleval-gpt4tools-path={path}",
            "--tooleval-offline",
            f"--tooleval-cache-dir={pytester.path / 'cache'}",
            "-p",
            "no:cacheprovider",
            "test_gpt4tools.py",
        ],
        f"ERROR: --tooleval-gpt4tools-path: {path}: {FIFO}",
    )


def bfcl_wheel(pytester: pytest.Pytester, _: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], str]:
    path = fifo(pytester.path / "bfcl_eval.whl")
    return wheel_run(pytester, monkeypatch, path), f"ERROR: {path}: {FIFO}: {wheel_hint()}"


CASES: dict[str, Case] = {
    "replay-file": replay_file,
    "replay-folder": replay_folder,
    "quarantine": quarantine,
    "baseline": baseline,
    "tooleval-yaml": config_file,
    "suite-file": suite_file,
    "gpt4tools-test-set": gpt4tools_test_set,
    "bfcl-wheel": bfcl_wheel,
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_fifo_named_as_a_file_is_one_line(
    pytester: pytest.Pytester, mini: list[str], monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    args, expected = case(pytester, mini, monkeypatch)
    assert refused_line(run(pytester, *args)) == expected


def test_a_fifo_given_to_the_merge_is_one_line(tmp_path: Path) -> None:
    path = fifo(tmp_path / "shard1.json")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_tooleval", "merge", str(path)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=GUARD_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the merge did not end within the {GUARD_S:.0f} s hang guard")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: merge: {path}: {FIFO}\n")


# -- devices and sizes -----------------------------------------------------------------------------------------


def test_a_device_as_the_wheel_is_one_line(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/null reads as an empty file; it is refused as the device it is."""
    line = refused_line(run(pytester, *wheel_run(pytester, monkeypatch, Path("/dev/null"))))
    assert line == f"ERROR: /dev/null: a character device, not a regular file: {wheel_hint()}"


MEMORY_GUARD = 1 << 30  # bytes of address space for the run below: /dev/zero read unbounded hits it at once


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_GUARD, MEMORY_GUARD))


def test_dev_zero_as_the_wheel_is_refused_unread(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, /dev/zero was read until the memory ran out: this run's address space is capped (a MemoryError,
    not the machine's memory, if it is read again), besides the hang guard."""
    args = wheel_run(pytester, monkeypatch, Path("/dev/zero"))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=GUARD_S,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run did not end within the {GUARD_S:.0f} s hang guard")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-3000:] + done.stderr[-3000:]
    assert [line for line in done.stderr.splitlines() if line.strip()] == [
        f"ERROR: /dev/zero: a character device, not a regular file: {wheel_hint()}"
    ]


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no room on the disk (it reads as zeros)."""
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def test_a_wheel_past_the_download_limit_is_refused_unread(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sparse(pytester.path / "bfcl_eval.whl", (64 << 20) + 1)
    line = refused_line(run(pytester, *wheel_run(pytester, monkeypatch, path)))
    assert line == (
        f"ERROR: {path}: 67,108,865 bytes, more than 64 MiB, the most the plugin reads from one file: {wheel_hint()}"
    )


def test_a_yaml_file_past_its_limit_is_refused_unread(pytester: pytest.Pytester, mini: list[str]) -> None:
    path = sparse(pytester.path / "quarantine.yaml", (16 << 20) + 1)
    line = refused_line(run(pytester, *oracle(mini), f"--tooleval-quarantine={path}"))
    assert line == (
        f"ERROR: --tooleval-quarantine: {path}: 16,777,217 bytes, more than 16 MiB, the most the plugin "
        "reads from one file"
    )
