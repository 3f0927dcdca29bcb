"""--tooleval-shard i/n: n runs that each ask their share cover every sample exactly once, stably."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from pytest_tooleval.run.shards import assign_shards, cluster_key
from pytest_tooleval.suites.acebench.data import AceCase, select
from pytest_tooleval.suites.acebench.revisions import DEFAULT, revision
from pytest_tooleval.suites.base import Case
from upstream_data import recorded

DATA = Path(os.environ.get("TOOLEVAL_DATA_DIR") or "/nonexistent").resolve()
#: the folder of the default ACEBench revision under the data root: what the runs below read
ACEBENCH = DATA / revision(DEFAULT).folder


@pytest.mark.skipif(not (ACEBENCH).is_dir(), reason="needs the upstream data")
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_three_shards_cover_every_sample_exactly_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    recorded(ACEBENCH, "agent_gold_sequences.json")  # the oracle plays them in the agent_multi_step samples
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(DATA))
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    categories = "normal_atom_bool,normal_multi_turn_user_adjust,special_irrelevant,agent_multi_step"
    seen: list[tuple[str, str]] = []
    for index in (1, 2, 3):
        result = pytester.runpytest_subprocess(
            "--tooleval-model=oracle",
            f"--tooleval-categories={categories}",
            f"--tooleval-shard={index}/3",
            f"--tooleval-report=shard{index}.json",
            "-p",
            "no:cacheprovider",
            *workers,
        )
        assert result.ret in (0, 1)  # the oracle's known misses (multi-turn, acebench-scoring §4.8) fail some tests
        assert result.parseoutcomes().get("errors", 0) == 0
        rows = json.loads((pytester.path / f"shard{index}.json").read_text())["samples"]
        assert rows  # every shard has work
        seen += [(row["language"], row["id"]) for row in rows]
    everything = [(case.language, case.id) for case in select(ACEBENCH, ("en",), tuple(categories.split(",")))]
    assert sorted(seen) == sorted(everything) and len(seen) == len(set(seen))


def test_shards_balance_every_category_and_barely_move_as_samples_come_and_go() -> None:
    from pytest_tooleval.suites.acebench.plugin_suite import SUITE

    def weight(case: Case) -> float:  # the suite's own, as the run calls it: on the suite's cases
        assert isinstance(case, AceCase)
        return SUITE.hints.weight(case)

    categories = ("normal_atom_bool", "normal_multi_turn_user_adjust", "special_incomplete")
    cases = select(ACEBENCH, ("en",), categories) if (ACEBENCH).is_dir() else []
    if not cases:
        pytest.skip("needs the upstream data")
    before = assign_shards(cases, 4, weight)
    assert assign_shards(cases[::-1], 4, weight) == before  # the order of collection does not matter
    # a dialogue's steps share a shard, so its accuracy can be computed where it ran
    steps: dict[str, set[int]] = {}
    for case in cases:
        if "multi_turn" in case.category:
            steps.setdefault(case.cluster, set()).add(before[cluster_key(case)])
    assert steps and all(len(shards) == 1 for shards in steps.values())
    # each category is cut into four parts of equal weight, to within one cluster's weight
    for category in categories:
        members = [case for case in cases if case.category == category]
        cluster_weights: dict[tuple[str, str, str], float] = {}
        for case in members:
            cluster_weights[cluster_key(case)] = cluster_weights.get(cluster_key(case), 0.0) + SUITE.hints.weight(case)
        loads = [
            sum(weight for key, weight in cluster_weights.items() if before[key] == shard) for shard in (1, 2, 3, 4)
        ]
        assert max(loads) - min(loads) <= 2 * max(cluster_weights.values()), (category, loads)
    # removing seven samples of one category moves a few others of it, and none of any other category
    removed = {case.id for case in [case for case in cases if case.category == "normal_atom_bool"][::7][:7]}
    after = assign_shards([case for case in cases if case.id not in removed], 4, weight)
    moved = [key for key, shard in after.items() if before[key] != shard]
    assert all(key[2].startswith("normal_atom_bool") for key in moved)
    assert len(moved) <= 12, moved


@pytest.mark.parametrize("value", ["0/3", "4/3", "two", "1-3"])
def test_a_bad_shard_is_one_line(pytester: pytest.Pytester, value: str) -> None:
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    result = pytester.runpytest_subprocess(
        "--tooleval-model=oracle", f"--tooleval-shard={value}", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --tooleval-shard: {value!r} is not a shard; expected I/N with 1 <= I <= N, e.g. 2/3"
    ]


def test_a_subsample_is_stratified_and_stable_for_a_seed() -> None:
    from pytest_tooleval.run.shards import subsample

    if not (ACEBENCH).is_dir():
        pytest.skip("needs the upstream data")
    # subsample takes a list[Case], which is invariant: a list of AceCase is not one
    cases: list[Case] = [
        *select(ACEBENCH, ("en",), ("normal_atom_bool", "normal_multi_turn_user_adjust", "agent_multi_turn"))
    ]
    first = subsample(cases, 0.2, seed=7)
    assert [case.id for case in first] == [case.id for case in subsample(cases, 0.2, seed=7)]
    assert {case.id for case in first} != {case.id for case in subsample(cases, 0.2, seed=8)}
    per_category = {
        category: {case.cluster for case in first if case.category == category}
        for category in ("normal_atom_bool", "normal_multi_turn_user_adjust", "agent_multi_turn")
    }
    assert {name: len(clusters) for name, clusters in per_category.items()} == {
        "normal_atom_bool": 10,
        "normal_multi_turn_user_adjust": 10,
        "agent_multi_turn": 6,
    }  # 20% of 50, 50, 30
    # a dialogue is taken whole: every step of each chosen dialogue
    chosen = per_category["normal_multi_turn_user_adjust"]
    assert [case.id for case in first if case.cluster in chosen] == [
        case.id for case in cases if case.cluster in chosen
    ]
    assert {case.id for case in subsample(cases, 0.1, seed=7)} <= {case.id for case in first}  # nested by fraction


def test_a_subsampled_run_is_marked_partial(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ACEBENCH).is_dir():
        pytest.skip("needs the upstream data")
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(DATA))
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    result = pytester.runpytest_subprocess(
        "--tooleval-model=oracle",
        "--tooleval-categories=normal_atom_bool",
        "--tooleval-sample=0.2",
        "--tooleval-seed=7",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=10)
    result.stdout.fnmatch_lines(
        [
            f"ACEBench en ({DEFAULT}): partial run (*1 category ran only part of its samples)",
            "normal_atom_bool * 10/10 * 0 * 1.000 * [0.722, 1.000]*",
        ]
    )


def test_a_subsampled_run_shows_every_suites_scored_of_what_ran(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41: with --tooleval-sample, BFCL's table said `26/258` (of the category) where ACEBench's said
    `10/10` (of what ran). Every suite's scored/total is now of the samples that ran; the title says the run took
    part of a category, and BFCL's report keeps the category's size as `benchmark_total`."""
    if not (ACEBENCH.is_dir() and (DATA / "bfcl").is_dir()):
        pytest.skip("needs the upstream data")
    monkeypatch.setenv("TOOLEVAL_DATA_DIR", str(DATA))
    pytester.makepyfile(test_acebench=benchmark_source("acebench"), test_bfcl=benchmark_source("bfcl"))
    (pytester.path / "mine.tooleval.yaml").write_text(
        "tools:\n  - {name: noop, description: Does nothing., parameters: {type: object, properties: {}}}\ncases:\n"
        + "".join(
            f"  - {{name: c{index}, category: words, user: Say {index}., expect: {{no_call: true}}}}\n"
            for index in range(6)
        ),
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess(
        "--tooleval-model=oracle",
        "--tooleval-categories=normal_atom_bool",
        "--tooleval-bfcl-categories=live_simple",
        "--tooleval-sample=0.1",
        "--tooleval-seed=7",
        "--tooleval-offline",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
    )
    summary = json.loads((pytester.path / "report.json").read_text())["summary"]
    ran = summary["bfcl"]["prompt"]["categories"]["live_simple"]
    assert (ran["scored"], ran["n"], ran["benchmark_total"]) == (26, 26, 258)
    assert summary["yaml"]["blocks"][0]["categories"]["words"]["n"] == 1
    result.stdout.fnmatch_lines(
        [
            "ACEBench en (*): partial run (*1 category ran only part of its samples)",
            "normal_atom_bool * 5/5 * 0 *",
            "BFCL v4 single-turn (prompt): partial run (not run: *; ran only part of: live_simple)",
            "live_simple * 26/26 * 0 *",
            "your cases (*.tooleval.yaml)",
            "words * 1/1 * 0 *",
        ]
    )
