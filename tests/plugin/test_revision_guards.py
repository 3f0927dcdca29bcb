"""Runs of two ACEBench revisions are never taken for one benchmark: a baseline of the other revision is refused,
so is a merge of shards of two, and the response cache serves every sample whose prompt did not change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI

DATA = os.environ.get("TOOLEVAL_DATA_DIR")
# normal_atom_list: one sample (normal_atom_list_38) has another question at 56dd66c, the other 49 the same prompt
CATEGORY = "normal_atom_list"
CHANGED_QUESTION = "normal_atom_list_38"


@pytest.fixture(autouse=True)
def both_revisions(data_root: Path, acebench_dir: Path, acebench_56dd66c_dir: Path) -> None:
    """Every test here runs both revisions off the data root (DATA): each one's fixture skips, named, without it."""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return pytester.runpytest_subprocess(
        f"--tooleval-data-dir={Path(DATA or '').resolve()}",
        f"--tooleval-categories={CATEGORY}",
        "-p",
        "no:cacheprovider",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        *args,
    )


def test_a_baseline_of_the_other_revision_is_refused_naming_both(pytester: pytest.Pytester) -> None:
    old = _run(
        pytester, "--tooleval-model=oracle", "--tooleval-acebench-revision=e6db74b", "--tooleval-report=old.json"
    )
    assert old.ret == 0
    assert json.loads((pytester.path / "old.json").read_text())["fingerprint"]["acebench"]["revision"] == "e6db74b"
    result = _run(pytester, "--tooleval-model=oracle", "--tooleval-baseline=old.json", "--tooleval-report=new.json")
    assert result.ret == 4
    errors = [line for line in result.errlines if "--tooleval-baseline" in line]
    assert len(errors) == 1
    assert "scored against ACEBench e6db74b, this run against 56dd66c" in errors[0]
    assert "python -m pytest_tooleval rescore" in errors[0] and "--acebench-revision 56dd66c" in errors[0]
    assert not (pytester.path / "new.json").exists()  # nothing ran
    # the same revision compares as before
    same = _run(
        pytester,
        "--tooleval-model=oracle",
        "--tooleval-acebench-revision=e6db74b",
        "--tooleval-baseline=old.json",
        "--tooleval-report=same.json",
    )
    assert same.ret == 0
    assert json.loads((pytester.path / "same.json").read_text())["comparison"] is not None


def test_a_report_from_before_revisions_were_named_counts_as_e6db74b(pytester: pytest.Pytester) -> None:
    """Reports made before this change have no revision: e6db74b was the only one pinned."""
    assert (
        _run(
            pytester, "--tooleval-model=oracle", "--tooleval-acebench-revision=e6db74b", "--tooleval-report=old.json"
        ).ret
        == 0
    )
    document = json.loads((pytester.path / "old.json").read_text())
    del document["fingerprint"]["acebench"]["revision"]
    (pytester.path / "old.json").write_text(json.dumps(document))
    refused = _run(pytester, "--tooleval-model=oracle", "--tooleval-baseline=old.json")
    assert refused.ret == 4
    assert any("scored against ACEBench e6db74b, this run against 56dd66c" in line for line in refused.errlines)
    assert (
        _run(
            pytester, "--tooleval-model=oracle", "--tooleval-acebench-revision=e6db74b", "--tooleval-baseline=old.json"
        ).ret
        == 0
    )


def test_shards_of_two_revisions_do_not_merge(pytester: pytest.Pytester) -> None:
    for index, revision in ((1, "e6db74b"), (2, "56dd66c")):
        result = _run(
            pytester,
            "--tooleval-model=oracle",
            f"--tooleval-acebench-revision={revision}",
            f"--tooleval-shard={index}/2",
            f"--tooleval-report=shard{index}.json",
        )
        assert result.ret == 0
    merged = subprocess.run(
        [sys.executable, "-m", "pytest_tooleval", "merge", "shard1.json", "shard2.json", "-o", "full.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 2
    assert merged.stderr.strip().count("\n") == 0, merged.stderr
    assert "scored against acebench 56dd66c" in merged.stderr and "against e6db74b" in merged.stderr
    assert not (pytester.path / "full.json").exists()


def test_switching_revision_asks_only_the_samples_whose_prompt_changed(pytester: pytest.Pytester) -> None:
    server = FakeOpenAI().start()
    server.responder = lambda body: "[]"
    try:
        live = ["--tooleval-model=fake-model", f"--tooleval-base-url={server.base_url}", "--tooleval-api-key=sk-x"]
        first = _run(pytester, *live, "--tooleval-acebench-revision=e6db74b", "--tooleval-report=old.json")
        assert first.ret == 1  # every answer is wrong: what matters is what was asked
        assert server.stats.requests == 50
        second = _run(pytester, *live, "--tooleval-report=new.json", "--tooleval-cache=reuse")
        assert second.ret == 1
        assert server.stats.requests == 51  # normal_atom_list_38 alone: its question changed at 56dd66c
        report = json.loads((pytester.path / "new.json").read_text())
        rows: dict[str, Any] = {row["id"]: row for row in report["samples"]}
        assert len(rows) == 50 and all(row["revision"] == "56dd66c" for row in rows.values())
        assert CHANGED_QUESTION in rows
    finally:
        server.stop()
