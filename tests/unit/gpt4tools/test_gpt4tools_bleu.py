"""BLEU-1 as pycocoevalcap Bleu(n=1) computes it, and numpy's summation order."""

from __future__ import annotations

import math

import pytest

from pytest_tooleval.suites.gpt4tools.metrics import bleu1, np_mean, np_sum


# The reference values table of toolalpaca-gpt4tools §5.4 (pycocoevalcap 1.2).
@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("a red car", "red car", 0.606531),
        ("a red car", "a red car on road", 0.6),
        (" a red car", "a red car", 1.0),
        ("A red car", "a red car", 0.666667),
        ("the the the", "the", 0.135335),
        ("what is in the image?", "what is in the image", 0.8),
        ("a red car", "", 0.0),
    ],
)
def test_bleu1_matches_the_spec_table(reference: str, hypothesis: str, expected: float) -> None:
    assert round(bleu1(reference, hypothesis), 6) == expected


def test_a_perfect_match_scores_just_under_one() -> None:
    # pycocoevalcap's 1e-15/1e-9 constants apply the brevity penalty even at equal lengths.
    score = bleu1("a red car", "a red car")
    assert 1.0 - 1e-8 < score < 1.0


def test_hypothesis_counts_are_clipped_by_the_reference() -> None:
    assert round(bleu1("the cat", "the the the"), 6) == 0.333333


def test_tokens_split_on_any_whitespace() -> None:
    assert bleu1("a red car", "a\tred\n car") == bleu1("a red car", "a red car")


def test_empty_strings_score_zero_but_an_empty_reference_does_not() -> None:
    assert bleu1("", "") == 0.0
    # No brevity penalty (the hypothesis is longer), so only the tiny constant is left.
    assert 0.0 < bleu1("", "car") < 1e-14


def test_np_sum_adds_fewer_than_eight_values_in_order() -> None:
    assert np_sum([1e16, 1.0, 1.0]) == 1e16


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # Values numpy 2.4 gives; adding left to right would lose every 1.0 and give 1e16.
        ([1e16] + [1.0] * 15, 1.0000000000000014e16),
        ([1e16] + [1.0] * 130, 1.0000000000000124e16),
        ([1e16] + [1.0] * 199, 1.0000000000000188e16),
    ],
)
def test_np_sum_sums_pairwise_like_numpy(values: list[float], expected: float) -> None:
    assert np_sum(values) == expected


def test_np_mean_of_nothing_is_nan() -> None:
    assert math.isnan(np_mean([]))
    assert np_mean([1e16] + [1.0] * 15) == 625000000000000.9
