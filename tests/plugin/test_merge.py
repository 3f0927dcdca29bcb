"""`python -m pytest_tooleval merge`: shard reports joined equal the report of one run of every sample."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from pytest_tooleval.report.html import render_html
from pytest_tooleval.report.markdown import render_markdown
from upstream_data import recorded

CATEGORIES = "normal_atom_bool,normal_multi_turn_user_adjust,special_irrelevant,agent_multi_step"
GATE = ("--tooleval-fail-under=overall=0.95,special=0.99", "--tooleval-max-regression=overall=0.05")


@pytest.fixture
def acebench(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, data_root: Path, acebench_56dd66c_dir: Path
) -> pytest.Pytester:
    """The runs read the data root's default revision (56dd66c); the oracle plays its agent gold sequences."""
    recorded(acebench_56dd66c_dir, "agent_gold_sequences.json")
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(data_root.resolve()))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    result = pytester.runpytest_subprocess(
        "--tooleval-model=oracle", f"--tooleval-categories={CATEGORIES}", "-p", "no:cacheprovider", *args
    )
    assert result.parseoutcomes().get("errors", 0) == 0
    return result


def merge(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.run(sys.executable, "-m", "pytest_tooleval", "merge", *args)


def report(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return document


def verdicts(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{key: value for key, value in row.items() if key != "latency_s"} for row in document["samples"]]


def rendered(document: dict[str, Any]) -> tuple[str, str]:
    """The Markdown and the HTML, but for the wall time (a merge's is its slowest shard's)."""
    document = {**document, "totals": {**document["totals"], "wall_s": 0.0}}
    return render_markdown(document), render_html(document)


# one process under -m slow: the xdist run passes through the same path, and more of it (docs/development.md)
@pytest.mark.parametrize(
    "workers", [pytest.param([], marks=pytest.mark.slow), ["-n", "2"]], ids=["one-process", "xdist"]
)
def test_merged_shards_equal_one_run_of_every_sample(acebench: pytest.Pytester, workers: list[str]) -> None:
    run(acebench, "--tooleval-report=baseline.json", "--tooleval-scorer=fixed")  # a baseline made differently
    single = run(acebench, "--tooleval-report=single.json", "--tooleval-baseline=baseline.json", *GATE, *workers)
    for index in (1, 2, 3):  # shards do not gate: the merge does
        run(acebench, f"--tooleval-shard={index}/3", f"--tooleval-report=shard{index}.json", *workers)
    merged = merge(
        acebench,
        "shard3.json",
        "shard1.json",
        "shard2.json",
        "-o",
        "full.json",
        "--markdown",
        "full.md",
        "--fail-under",
        "overall=0.95,special=0.99",
        "--baseline",
        "baseline.json",
        "--max-regression",
        "overall=0.05",
    )
    one, joined = report(acebench, "single.json"), report(acebench, "full.json")
    assert one["gate"]["passed"] is False  # the oracle's multi-turn misses (acebench-scoring §4.8) fail overall
    assert (single.ret, merged.ret) == (1, 1)
    assert joined["summary"] == one["summary"]
    assert joined["gate"] == one["gate"]
    assert joined["comparison"] == one["comparison"] and one["comparison"]["figures"]
    assert verdicts(joined) == verdicts(one) and len(verdicts(one)) == 243
    assert rendered(joined) == rendered(one)
    assert (acebench.path / "full.md").read_text(encoding="utf-8") == render_markdown(joined)
    assert joined["run"]["shards"] == 3 and joined["run"]["missing_shards"] == [] and joined["run"]["not_run"] == []
    # as the plugin's own run says them: the baseline's difference, then the gate, then what was written
    single.stdout.fnmatch_lines(["tooleval baseline: made differently: scorer was 'fixed', is 'official' *"])
    merged.stdout.fnmatch_lines(
        [
            "tooleval baseline: made differently: scorer was 'fixed', is 'official' (the "
            "difference may be the change, not the model)",
            "tooleval gate: acebench.en.overall MISSED: 0.931 < 0.950 (short by 0.019)",
            "tooleval gate: acebench.en.special = 1.000 >= 0.990 ok",
            "tooleval gate: FAILED*",
            "tooleval report: full.json",
            "tooleval report: full.md",
        ]
    )


def test_a_missing_shard_or_unrun_sample_makes_the_merge_incomplete(acebench: pytest.Pytester) -> None:
    run(acebench, "--tooleval-shard=1/3", "--tooleval-report=shard1.json")
    # a shard that stopped at its first failure collected samples it never ran
    stopped = run(acebench, "--tooleval-shard=2/3", "--tooleval-report=shard2.json", "--maxfail=1")
    assert stopped.ret == 1
    unrun = report(acebench, "shard2.json")["run"]["not_run"]
    assert unrun and all(test_id.startswith("en-") for test_id in unrun)
    merged = merge(acebench, "shard1.json", "shard2.json", "-o", "partial.json")
    assert merged.ret == 1
    assert merged.stderr.lines == [
        f"tooleval merge: INCOMPLETE: shard 3/3 is missing; {len(unrun)} samples a shard "
        f"collected never ran: {', '.join(unrun[:10])}" + (f" and {len(unrun) - 10} more" if len(unrun) > 10 else "")
    ]
    assert report(acebench, "partial.json")["run"]["incomplete"] is not None
    gated = merge(acebench, "shard1.json", "shard2.json", "--fail-under", "overall=0.1")
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(
        ["tooleval gate: INCOMPLETE: shard 3/3 is missing*", "tooleval gate: FAILED (partial run: *)"]
    )


def test_shards_of_different_runs_or_overlapping_shards_are_refused(acebench: pytest.Pytester) -> None:
    run(acebench, "--tooleval-shard=1/2", "--tooleval-report=a1.json")
    run(acebench, "--tooleval-shard=2/2", "--tooleval-report=a2.json", "--tooleval-scorer=fixed")
    run(acebench, "--tooleval-shard=2/3", "--tooleval-report=b2.json")
    run(acebench, "--tooleval-report=whole.json")
    refused = {
        ("a1.json", "a2.json"): "error: merge: a2.json was made differently from a1.json: scorer is 'fixed', not "
        "'official'; merge the shards of one run (the same options, data and plugin version)",
        ("a1.json", "b2.json"): "error: merge: the reports are not shards of one split (a1.json: 1/2, b2.json: 2/3): "
        "run every shard with the same --tooleval-shard I/N count",
        ("a1.json", "a1.json"): "error: merge: shard 1/2 is given twice: a1.json and a1.json",
        ("whole.json", "whole.json"): None,  # not shards: the overlap is found sample by sample
        ("a1.json", "missing.json"): "error: merge: no such file missing.json: name the reports the shards wrote "
        "with --tooleval-report",
    }
    for files, line in refused.items():
        result = merge(acebench, *files, "-o", "out.json")
        assert result.ret == 2, files
        assert not (acebench.path / "out.json").exists()
        if line is None:
            assert len(result.stderr.lines) == 1
            assert result.stderr.lines[0].startswith("error: merge: sample en-")
            assert result.stderr.lines[0].endswith(
                "is in both whole.json and whole.json: the shards overlap (merge each shard's report once)"
            )
        else:
            assert result.stderr.lines == [line]
    # a misspelt gate name is refused before anything is written, with the closest figure
    for option, name, hint in (
        ("--fail-under", "acebench.overal=0.5", "acebench.en.overall"),
        ("--max-regression", "en.specal=0.05", "en.special"),
    ):
        result = merge(acebench, "a1.json", "--baseline", "whole.json", option, name, "-o", "out.json")
        assert result.ret == 2 and not (acebench.path / "out.json").exists()
        assert [line.split(";")[0] for line in result.stderr.lines] == [
            f"error: merge: {option}: no figure {name.split('=')[0]!r} in the merged run (did you mean {hint!r}?)"
        ]
