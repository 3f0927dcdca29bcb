"""ACEBench aggregation: multi-turn dialogues (acebench-scoring §6), per-category rounding (§8.1), groups and
OVERALL (§8.2)."""

from __future__ import annotations

import pytest

from pytest_tooleval.suites.acebench.aggregate import (
    WEIGHTS,
    CategoryScore,
    SampleScore,
    category_score,
    official_groups,
    summarize,
)
from pytest_tooleval.suites.acebench.categories import (
    AGENT_CATEGORIES,
    ALL_CATEGORIES,
    NORMAL_CATEGORIES,
    SPECIAL_CATEGORIES,
)

ADJUST = "normal_multi_turn_user_adjust"


def _steps(category: str, flags: dict[tuple[int, int], bool | None]) -> list[SampleScore]:
    return [SampleScore(category, f"{category}_{d}_{s}", valid) for (d, s), valid in flags.items()]


@pytest.mark.parametrize(
    ("flags", "accuracy", "process", "n", "steps", "correct_steps"),
    [
        # the §6 worked example, given out of order: dialogue 0 [T, T], dialogue 1 [T, F, T]
        ({(1, 2): True, (0, 1): True, (1, 0): True, (0, 0): True, (1, 1): False}, 0.5, 0.834, 2, 5, 4),
        # numeric, not text, order of dialogue indices: 10 is not between 1 and 2
        ({(10, 0): False, (1, 0): True, (2, 0): True, (1, 1): True}, 0.667, 0.667, 3, 4, 3),
        ({(0, 0): True, (0, 1): True, (0, 2): False}, 0.0, 0.667, 1, 3, 2),
        ({}, 0.0, 0.0, 0, 0, 0),
    ],
)
def test_multi_turn_dialogues(
    flags: dict[tuple[int, int], bool | None], accuracy: float, process: float, n: int, steps: int, correct_steps: int
) -> None:
    score = category_score(ADJUST, _steps(ADJUST, flags))
    assert (score.accuracy, score.process_acc, score.n, score.steps, score.correct_steps) == (
        accuracy,
        process,
        n,
        steps,
        correct_steps,
    )


def test_a_dialogue_with_an_unscored_step_is_unscored() -> None:
    score = category_score(ADJUST, _steps(ADJUST, {(0, 0): True, (0, 1): None, (1, 0): True}))
    assert (score.n, score.scored, score.correct, score.accuracy) == (2, 1, 1, 1.0)


@pytest.mark.parametrize(
    ("category", "flags", "accuracy", "process_acc"),
    [
        ("normal_atom_bool", [True, True, False], 0.667, None),
        ("special_incomplete", [True, True, False], 2 / 3, None),  # special figures are not rounded
        ("agent_multi_step", [True, False, False], 0.333, 0.333),  # process 1.0 / 0.0 / 0.0 by default
    ],
)
def test_single_sample_categories(category: str, flags: list[bool], accuracy: float, process_acc: float | None) -> None:
    rows = [SampleScore(category, f"{category}_{i}", valid) for i, valid in enumerate(flags)]
    score = category_score(category, rows)
    observed = (score.n, score.scored, score.correct, score.accuracy, score.process_acc)
    assert observed == (3, 3, sum(flags), accuracy, process_acc)


def test_agent_process_is_the_rounded_mean_of_the_samples() -> None:
    rows = [
        SampleScore("agent_multi_turn", "agent_multi_turn_0", True, 1.0),
        SampleScore("agent_multi_turn", "agent_multi_turn_1", False, 0.3333),
        SampleScore("agent_multi_turn", "agent_multi_turn_2", False, 0.5),
    ]
    assert category_score("agent_multi_turn", rows) == CategoryScore("agent_multi_turn", 3, 3, 1, 0.333, 0.611)


def test_weights_are_upstreams() -> None:
    assert WEIGHTS == {"NORMAL": 0.578, "SPECIAL": 0.2676, "AGENT": 0.1545}


def test_official_groups_reproduce_a_published_row() -> None:
    # GPT-4o's combined row (acebench-scoring §8.2): normal 87.6, special 93.0, agent 63.8, overall 85.4.
    accuracies = {name: 0.934 for name in NORMAL_CATEGORIES if "atom" in name}
    accuracies |= {"normal_single_turn_single_function": 0.845, "normal_single_turn_parallel_function": 0.845}
    accuracies |= {"normal_multi_turn_user_switch": 0.77, "normal_multi_turn_user_adjust": 0.77}
    accuracies |= {"normal_similar_api": 0.85, "normal_preference": 0.83}
    accuracies |= {name: 0.93 for name in SPECIAL_CATEGORIES} | {name: 0.638 for name in AGENT_CATEGORIES}
    groups, overall = official_groups(accuracies)
    values = {name: group.value for name, group in groups.items()}
    assert values == {
        "ATOM": 0.934,
        "SINGLE_TURN": 0.845,
        "MULTI_TURN": 0.77,
        "NORMAL": 0.876,
        "SPECIAL": 0.93,
        "AGENT": 0.638,
    }
    assert overall == 0.854


def test_official_groups_count_a_missing_category_as_zero() -> None:
    groups, overall = official_groups({name: 1.0 for name in ALL_CATEGORIES if name != "agent_multi_step"})
    assert (groups["AGENT"].value, groups["AGENT"].missing) == (0.5, ("agent_multi_step",))
    assert overall == round(0.2676 + 0.578 + 0.1545 * 0.5, 3)


def _run(categories: tuple[str, ...], flags: list[bool]) -> list[SampleScore]:
    rows = []
    for category in categories:
        if "multi_turn_user" in category:
            rows += _steps(category, {(i, 0): valid for i, valid in enumerate(flags)})
        else:
            rows += [SampleScore(category, f"{category}_{i}", valid) for i, valid in enumerate(flags)]
    return rows


def test_full_run_uses_the_official_formula() -> None:
    summary = summarize(_run(ALL_CATEGORIES, [True, False, False]))
    assert not summary.partial and summary.reasons == ()
    assert summary.categories["special_irrelevant"].accuracy == 1 / 3
    assert {name: group.value for name, group in summary.groups.items()} == {
        "ATOM": 0.333,
        "SINGLE_TURN": 0.333,
        "MULTI_TURN": 0.333,
        "NORMAL": 0.333,
        "SPECIAL": 0.333,
        "AGENT": 0.333,
    }
    assert summary.overall == round(0.2676 * 0.333 + 0.578 * 0.333 + 0.1545 * 0.333, 3) == 0.333


def test_partial_run_is_renormalised_and_flagged() -> None:
    rows = _run(NORMAL_CATEGORIES, [True, False]) + _run(SPECIAL_CATEGORIES, [True, True, False])
    summary = summarize(rows)
    assert summary.partial and "2 of 17 categories did not run" in summary.reasons
    assert "AGENT" not in summary.groups
    assert (summary.groups["NORMAL"].value, summary.groups["SPECIAL"].value) == (0.5, 0.667)
    assert summary.overall == round((0.578 * 0.5 + 0.2676 * 0.667) / (0.578 + 0.2676), 3) == 0.553


def test_a_subset_of_samples_is_partial_when_counts_are_known() -> None:
    rows = _run(ALL_CATEGORIES, [True])
    assert not summarize(rows).partial
    summary = summarize(rows, expected={name: 2 for name in ALL_CATEGORIES})
    assert summary.partial and summary.reasons == ("17 categories ran only part of their samples",)


def test_unscored_samples_make_a_run_partial() -> None:
    rows = [*_run(ALL_CATEGORIES, [True]), SampleScore("normal_atom_bool", "normal_atom_bool_9", None)]
    summary = summarize(rows)
    assert summary.partial and summary.categories["normal_atom_bool"].scored == 1


def test_unknown_category_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown ACEBench categories"):
        summarize([SampleScore("normal_atom_other", "normal_atom_other_0", True)])
