"""pytest_tooleval.report.stats against values that can be checked by hand or against published examples."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Mapping
from statistics import NormalDist
from typing import Any

import pytest

from pytest_tooleval.report.stats import (
    POWER_FACTOR,
    BootstrapResult,
    bootstrap_interval,
    holm,
    mcnemar_exact,
    mde_paired,
    mde_two_proportions,
    paired_bootstrap,
    paired_bootstrap_many,
    paired_difference_interval,
    proportion_bootstrap_many,
    wilson_interval,
)

Z95 = NormalDist().inv_cdf(0.975)


# --- Wilson -------------------------------------------------------------------------------------------------------


def test_wilson_newcombe_single_proportion_example() -> None:
    # 81/263: the first worked example of Newcombe (1998), "Two-sided confidence intervals for the single
    # proportion", whose Wilson interval is 0.2553 to 0.3662
    lower, upper = wilson_interval(81, 263)
    assert (round(lower, 4), round(upper, 4)) == (0.2553, 0.3662)


def test_wilson_at_the_boundaries() -> None:
    lower, upper = wilson_interval(0, 10)
    assert lower == 0.0
    assert upper == pytest.approx(Z95**2 / (10 + Z95**2))  # at 0 successes the upper limit is z^2 / (n + z^2)
    assert upper == pytest.approx(0.2775, abs=1e-4)
    lower, upper = wilson_interval(10, 10)
    assert lower == pytest.approx(0.7225, abs=1e-4)
    assert upper == 1.0


def test_wilson_by_hand() -> None:
    n, p, z = 50, 35 / 50, Z95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert wilson_interval(35, 50) == pytest.approx((centre - half, centre + half), abs=1e-12)
    # the limits are the roots of the score-test equation (pi - p)^2 = z^2 pi (1 - pi) / n
    for pi in wilson_interval(35, 50):
        assert (pi - p) ** 2 == pytest.approx(z * z * pi * (1 - pi) / n)


def test_wilson_no_data_and_levels() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    narrow, wide = wilson_interval(35, 50, 0.8), wilson_interval(35, 50, 0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    with pytest.raises(ValueError):
        wilson_interval(1, 10, confidence=1.0)


# --- McNemar ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (8, 0, 2 * 0.5**8),
        (0, 8, 2 * 0.5**8),
        (4, 0, 0.125),
        (5, 5, 1.0),
        (10, 2, 2 * (1 + 12 + 66) / 2**12),
        (0, 0, 1.0),
        (1, 0, 1.0),
    ],
)
def test_mcnemar_exact_known_values(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_large_counts() -> None:
    p = mcnemar_exact(1500, 1400)
    assert math.isfinite(p)
    assert 0.0 <= p <= 1.0
    # close to the normal approximation with continuity correction, z = (|b - c| - 1) / sqrt(b + c)
    z = (100 - 1) / math.sqrt(2900)
    assert p == pytest.approx(2 * (1 - NormalDist().cdf(z)), abs=2e-3)
    assert 0.0 <= mcnemar_exact(3000, 1) < 1e-300
    assert mcnemar_exact(2000, 2000) == 1.0


# --- Newcombe method 10 -------------------------------------------------------------------------------------------


def _wilson_by_bisection(x: int, n: int, z: float) -> tuple[float, float]:
    """Wilson limits as the roots of the score equation |p - pi| = z sqrt(pi (1 - pi) / n), found numerically."""
    p = x / n

    def inside(pi: float) -> bool:
        return abs(p - pi) <= z * math.sqrt(pi * (1 - pi) / n)

    def root(lo: float, hi: float) -> float:
        # lo is outside the interval, hi inside: bisect on the boundary
        lo_in = inside(lo)
        for _ in range(200):
            mid = (lo + hi) / 2
            if inside(mid) == lo_in:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = 0.0 if x == 0 else root(0.0, p)
    upper = 1.0 if x == n else root(1.0, p)
    return lower, upper


def _newcombe_reference(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, float]:
    """Method 10 written from its definition in Newcombe's notation: the first classification (here the current
    run) is "positive" in cells A (both) and B (first only), the second (the baseline) in A and C (second only)."""
    big_a, big_b, big_c, big_d = a, c, b, d  # Newcombe's B = current only = our c; his C = baseline only = our b
    n = big_a + big_b + big_c + big_d
    p1, p2 = (big_a + big_b) / n, (big_a + big_c) / n
    l1, u1 = _wilson_by_bisection(big_a + big_b, n, z)
    l2, u2 = _wilson_by_bisection(big_a + big_c, n, z)
    e, f, g, h = big_a + big_b, big_c + big_d, big_a + big_c, big_b + big_d
    cross = big_a * big_d - big_b * big_c
    if e * f * g * h == 0:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(e * f * g * h)
    elif cross >= 0:
        phi = 0.0
    else:
        phi = cross / math.sqrt(e * f * g * h)
    theta = p1 - p2
    delta = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    epsilon = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return max(-1.0, theta - delta), min(1.0, theta + epsilon)


TABLES = [
    (59, 16, 6, 80),
    (1, 7, 1, 12),
    (1, 1, 7, 12),
    (10, 5, 15, 20),
    (0, 3, 0, 0),
    (0, 0, 0, 9),
    (30, 0, 0, 0),
    (0, 12, 9, 0),
    (5, 0, 20, 2),
    (200, 31, 17, 752),
    (1, 0, 0, 1),
]


@pytest.mark.parametrize("table", TABLES)
def test_newcombe_matches_the_formula_and_its_properties(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    n = a + b + c + d
    lower, upper = paired_difference_interval(a, b, c, d)
    assert (lower, upper) == pytest.approx(_newcombe_reference(a, b, c, d), abs=1e-9)
    assert -1.0 <= lower <= (c - b) / n <= upper <= 1.0
    # swapping the runs negates the interval
    swapped = paired_difference_interval(a, c, b, d)
    assert swapped == pytest.approx((-upper, -lower), abs=1e-12)


def test_newcombe_published_values() -> None:
    # Cavo et al. (2012), as analysed by Fagerland, Lydersen & Laake (Newcombe square-and-add, -0.1186 to -0.0046;
    # the R package contingencytables checks the same figures): rows 59, 6 / 16, 80 with the first classification
    # as "current": current only = 6, baseline only = 16
    lower, upper = paired_difference_interval(59, 16, 6, 80)
    assert (c_minus_b := (6 - 16) / 161) == pytest.approx(-0.0621, abs=1e-4)
    assert (round(lower, 4), round(upper, 4)) == (-0.1186, -0.0046)
    assert lower < c_minus_b < upper
    # one concordant pass and one concordant fail: phi is corrected to 0 (ad - bc = 1 <= n/2), so the interval is
    # the square-and-add of two Wilson intervals for 1/2; the uncorrected phi = 1 would collapse it to (0, 0)
    assert paired_difference_interval(1, 0, 0, 1) == pytest.approx((-0.5734, 0.5734), abs=1e-4)


def test_newcombe_sign_convention() -> None:
    lower, upper = paired_difference_interval(40, 0, 30, 30)  # 30 units fixed, none broken: current is better
    assert 0.0 < lower < 0.3 < upper
    lower, upper = paired_difference_interval(40, 30, 0, 30)  # 30 units broken: current is worse
    assert lower < -0.3 < upper < 0.0


def test_newcombe_no_change_and_growing_n() -> None:
    lower, upper = paired_difference_interval(1000, 0, 0, 0)
    assert lower < 0.0 == (0 - 0) / 1000 <= upper
    assert upper - lower < 0.01
    widths = []
    for k in (1, 4, 16, 64):
        lower, upper = paired_difference_interval(20 * k, 6 * k, 3 * k, 11 * k)
        widths.append(upper - lower)
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < widths[0] / 4


def test_newcombe_edge_cases() -> None:
    assert paired_difference_interval(0, 0, 0, 0) == (-1.0, 1.0)
    # every unit broke: theta = -1, the lower limit stays at -1 and the upper one is -1 + sqrt(2) * (Wilson upper
    # limit for 0/5 = z^2 / (5 + z^2)), phi being 0 with an empty margin
    upper_0_of_5 = Z95**2 / (5 + Z95**2)
    assert paired_difference_interval(0, 5, 0, 0) == pytest.approx((-1.0, -1.0 + math.sqrt(2) * upper_0_of_5))
    with pytest.raises(ValueError):
        paired_difference_interval(1, -1, 0, 0)


# --- Holm ---------------------------------------------------------------------------------------------------------


def test_holm_known_values() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([]) == []
    assert holm([0.4, 0.3, 0.9]) == pytest.approx([0.9, 0.9, 0.9])  # capped at 1 before the running maximum
    assert holm([0.6, 0.7]) == [1.0, 1.0]


def test_holm_monotone_and_not_below_raw() -> None:
    raw = [0.001, 0.2, 0.012, 0.04, 0.5, 0.011, 0.03]
    adjusted = holm(raw)
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    assert [adjusted[i] for i in order] == sorted(adjusted)
    assert all(a >= r for a, r in zip(adjusted, raw, strict=True))
    assert all(a <= 1.0 for a in adjusted)
    assert adjusted[0] == pytest.approx(7 * 0.001)


# --- MDE ----------------------------------------------------------------------------------------------------------


def test_mde_values() -> None:
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert z == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    assert mde_two_proportions(0.7, 50) == pytest.approx(z * math.sqrt(2 * 0.21 / 50))
    assert mde_two_proportions(0.7, 50) == pytest.approx(0.2568, abs=1e-4)
    assert mde_paired(50, 0.2) == pytest.approx(z * math.sqrt(0.2 / 50))
    assert mde_paired(50, 0.2) == pytest.approx(0.1772, abs=1e-4)


def test_mde_shows_small_categories_cannot_show_five_points() -> None:
    assert mde_paired(50, 0.2) > 0.05
    assert mde_two_proportions(0.7, 50) > 0.05
    assert mde_paired(5000, 0.2) < 0.05
    assert mde_paired(0, 0.2) == 1.0
    assert mde_two_proportions(0.5, 0) == 1.0
    assert mde_two_proportions(0.5, 1) == 1.0  # capped
    assert mde_paired(50, 0.2, alpha=0.01) > mde_paired(50, 0.2)
    assert mde_paired(50, 0.2, power=0.9) > mde_paired(50, 0.2)


# --- bootstrap ----------------------------------------------------------------------------------------------------

Pair = tuple[int, int]  # (baseline outcome, current outcome)


def mean_difference(units: list[Pair]) -> float | None:
    if not units:
        return None
    return sum(current - baseline for baseline, current in units) / len(units)


def _mixed_clusters() -> dict[str, list[Pair]]:
    pattern: list[Pair] = [(1, 1), (1, 0), (0, 1), (0, 0), (1, 1), (0, 1)]
    return {f"cat{i}": [pattern[(i + j) % 6] for j in range(10 + 3 * i)] for i in range(5)}


def test_bootstrap_is_reproducible() -> None:
    clusters = _mixed_clusters()
    first = paired_bootstrap(clusters, mean_difference, seed=7, replicates=500)
    assert first == paired_bootstrap(clusters, mean_difference, seed=7, replicates=500)
    assert first != paired_bootstrap(clusters, mean_difference, seed=8, replicates=500)
    reordered = dict(reversed(list(clusters.items())))  # strata are visited by name, not by insertion order
    assert first == paired_bootstrap(reordered, mean_difference, seed=7, replicates=500)
    assert isinstance(first, BootstrapResult)
    assert first.replicates == 500


def test_bootstrap_is_identical_across_processes() -> None:
    code = (
        "from pytest_tooleval.report.stats import paired_bootstrap\n"
        "clusters = {f's{i}': [(f'u{i}-{j}', (i * j) % 3 == 0) for j in range(20)] for i in range(4)}\n"
        "stat = lambda units: sum(1.0 for name, ok in units if ok and name.endswith('1')) / len(units)\n"
        "print(repr(paired_bootstrap(clusters, stat, seed=3, replicates=300)))\n"
    )
    outputs = set()
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_bootstrap_no_change() -> None:
    clusters: dict[str, list[Pair]] = {"a": [(1, 1)] * 30, "b": [(0, 0)] * 20 + [(1, 1)] * 5}
    result = paired_bootstrap(clusters, mean_difference, replicates=300)
    assert result == BootstrapResult(estimate=0.0, interval=(0.0, 0.0), p_value=1.0, replicates=300, standard_error=0.0)


def test_bootstrap_strong_regression() -> None:
    everything_broke: dict[str, list[Pair]] = {"x": [(1, 0)] * 50}
    result = paired_bootstrap(everything_broke, mean_difference, replicates=300)
    assert result.estimate == -1.0
    assert result.interval == (-1.0, -1.0)
    assert result.p_value == pytest.approx(2 / 301)  # one added to each count: never 0
    mostly_broke: dict[str, list[Pair]] = {"x": [(1, 0)] * 20 + [(1, 1)] * 30, "y": [(0, 0)] * 10 + [(1, 0)] * 5}
    result = paired_bootstrap(mostly_broke, mean_difference)
    assert result.estimate == pytest.approx(-25 / 65)
    assert result.interval[0] < result.estimate < result.interval[1] < 0.0
    assert result.p_value < 0.05


def test_bootstrap_p_value_for_a_null_difference() -> None:
    balanced: dict[str, list[Pair]] = {"x": [(1, 0)] * 10 + [(0, 1)] * 10 + [(1, 1)] * 30}
    result = paired_bootstrap(balanced, mean_difference)
    assert result.estimate == 0.0
    assert result.interval[0] < 0.0 < result.interval[1]
    assert result.p_value > 0.5


def test_bootstrap_keeps_stratum_sizes() -> None:
    seen: list[int] = []

    def count_x(units: list[tuple[str, int]]) -> float:
        seen.append(sum(1 for stratum, _ in units if stratum == "x"))
        return float(len(units))

    clusters = {"x": [("x", i) for i in range(7)], "y": [("y", i) for i in range(13)], "empty": []}
    result = paired_bootstrap(clusters, count_x, replicates=200)
    assert seen == [7] * 201  # the original data, then every replicate
    assert result.estimate == 20.0
    assert result.interval == (20.0, 20.0)


def test_bootstrap_skips_undefined_replicates() -> None:
    calls: list[float | None] = []

    def rate_among_attempted(units: list[int]) -> float | None:
        attempted = [u for u in units if u >= 0]  # -1: not attempted; None when nothing was attempted
        value = None if not attempted else sum(attempted) / len(attempted)
        calls.append(value)
        return value

    result = paired_bootstrap({"x": [-1, 1]}, rate_among_attempted, replicates=400)
    valid = sum(1 for value in calls[1:] if value is not None)
    assert len(calls) == 401
    assert 0 < result.replicates == valid < 400  # about a quarter of the replicates draw -1 twice
    with pytest.raises(ValueError):
        paired_bootstrap({"x": [-1]}, rate_among_attempted)  # undefined on the original data


def test_bootstrap_interval_for_a_single_figure() -> None:
    clusters = {"x": [1] * 50 + [0] * 50, "y": [1] * 30 + [0] * 10}

    def pass_rate(units: list[int]) -> float:
        return sum(units) / len(units)

    lower, upper = bootstrap_interval(clusters, pass_rate, seed=11, replicates=1000)
    assert (lower, upper) == paired_bootstrap(clusters, pass_rate, seed=11, replicates=1000).interval
    assert lower < 80 / 140 < upper
    # stratified resampling is a little narrower than Wilson on the pooled 140 units, but of the same size
    w_lower, w_upper = wilson_interval(80, 140)
    assert 0.6 * (w_upper - w_lower) < upper - lower < 1.1 * (w_upper - w_lower)
    with pytest.raises(ValueError):
        bootstrap_interval(clusters, pass_rate, replicates=0)


def test_many_statistics_share_the_single_statistic_replicates() -> None:
    clusters = _mixed_clusters()
    single = paired_bootstrap(clusters, mean_difference, seed=11, replicates=400)

    def both(strata: dict[str, list[Pair]]) -> dict[str, float]:
        units = [unit for name in sorted(strata) for unit in strata[name]]
        values = {"mean": mean_difference(units) or 0.0}
        if len(strata) > 1:
            values["first"] = mean_difference(strata[min(strata)]) or 0.0
        return values

    many = paired_bootstrap_many(clusters, both, seed=11, replicates=400)
    assert set(many) == {"mean", "first"}
    assert (many["mean"].estimate, many["mean"].interval, many["mean"].p_value) == (
        single.estimate,
        single.interval,
        single.p_value,
    )
    spread = many["mean"].standard_error
    assert spread is not None and spread > 0
    assert abs(POWER_FACTOR - (1.959964 + 0.841621)) < 1e-5


def test_error_bars_do_not_depend_on_the_order_rows_arrived_in() -> None:
    from pytest_tooleval.report.compare import run_spreads
    from pytest_tooleval.report.suite_summary import Unit

    units = [Unit("en.a", f"en.a/{n}", n % 3 != 0) for n in range(40)] + [
        Unit("en.b", f"en.b/{n}", n % 2 == 0) for n in range(25)
    ]

    def combine(proportions: Mapping[str, float]) -> dict[str, float]:
        return {"en.mean": sum(proportions.values()) / len(proportions)}

    forwards = run_spreads(units, combine, replicates=300)
    assert run_spreads(list(reversed(units)), combine, replicates=300) == forwards
    assert forwards["en.mean"].interval[0] < forwards["en.mean"].value < forwards["en.mean"].interval[1]


# --- the binomial shortcut of a run's own bootstrap ----------------------------------------------------------------


def test_a_resampled_count_of_passes_is_drawn_from_its_binomial() -> None:
    """7 passes of 10: over 20,000 replicates, each count's share matches binomial(10, 0.7) to within 4 standard
    errors, and no count outside 0..10 is drawn."""
    replicates = 20_000
    result = proportion_bootstrap_many(
        {"a": (7, 10)}, lambda shares: {"count": shares["a"] * 10}, seed=3, replicates=replicates
    )
    assert result["count"].replicates == replicates
    counts: dict[int, int] = {}
    seen: list[float] = []

    def record(shares: Mapping[str, float]) -> dict[str, float]:
        seen.append(shares["a"])
        return {"share": shares["a"]}

    proportion_bootstrap_many({"a": (7, 10)}, record, seed=3, replicates=replicates)
    for share in seen[1:]:  # the first is the estimate
        counts[round(share * 10)] = counts.get(round(share * 10), 0) + 1
    assert set(counts) <= set(range(11))
    for count in range(11):
        expected = math.comb(10, count) * 0.7**count * 0.3 ** (10 - count)
        error = math.sqrt(expected * (1 - expected) / replicates)
        assert abs(counts.get(count, 0) / replicates - expected) <= 4 * error + 1e-9, count


def test_the_binomial_shortcut_gives_the_unit_by_unit_bootstrap_interval() -> None:
    """The same bootstrap distribution as resampling the units: a weighted combination of three categories gets
    the same percentile interval from both, to within their Monte Carlo noise at 4,000 replicates."""
    sizes = {"a": (31, 40), "b": (9, 25), "c": (180, 200)}
    weights = {"a": 0.5, "b": 0.3, "c": 0.2}
    units = {name: [True] * passed + [False] * (n - passed) for name, (passed, n) in sizes.items()}

    def combine(shares: Mapping[str, float]) -> dict[str, float]:
        return {"overall": sum(weights[name] * share for name, share in shares.items())}

    shortcut = proportion_bootstrap_many(sizes, combine, seed=5, replicates=4000)["overall"]
    by_units = paired_bootstrap_many(
        units,
        lambda drawn: combine({name: sum(got) / len(got) for name, got in drawn.items()}),
        seed=5,
        replicates=4000,
    )["overall"]
    assert shortcut.estimate == by_units.estimate == pytest.approx(0.5 * 31 / 40 + 0.3 * 9 / 25 + 0.2 * 0.9)
    assert shortcut.standard_error is not None and by_units.standard_error is not None
    assert shortcut.standard_error == pytest.approx(by_units.standard_error, rel=0.08)
    for mine, theirs in zip(shortcut.interval, by_units.interval, strict=True):
        assert mine == pytest.approx(theirs, abs=0.01)


def test_a_category_that_passed_everything_or_nothing_is_the_same_in_every_replicate() -> None:
    result = proportion_bootstrap_many(
        {"all": (12, 12), "none": (0, 5), "empty": (0, 0)},
        lambda shares: {"sum": shares["all"] + shares["none"], "names": float(len(shares))},
        seed=1,
        replicates=50,
    )
    assert result["sum"].interval == (1.0, 1.0)
    assert result["names"].interval == (2.0, 2.0)  # a category without units is left out


def test_a_large_category_does_not_overflow() -> None:
    result = proportion_bootstrap_many(
        {"big": (6_000, 20_000)}, lambda shares: {"share": shares["big"]}, seed=2, replicates=400
    )
    low, high = result["share"].interval
    assert low < 0.3 < high and high - low == pytest.approx(2 * 1.96 * math.sqrt(0.3 * 0.7 / 20_000), rel=0.2)


def _units_of(counts: Mapping[str, tuple[int, int]]) -> list[Any]:
    from pytest_tooleval.report.suite_summary import Unit

    return [Unit(name, f"{name}/{n}", n < passed) for name, (passed, size) in counts.items() for n in range(size)]


def test_a_linear_combination_is_bootstrapped_as_its_weighted_sum() -> None:
    """Groups and OVERALL are weighted sums of the category accuracies: run_spreads evaluates them as such in
    each replicate, and gets what calling the suite's combination gives, to 1e-12."""
    from pytest_tooleval.report.compare import run_spreads

    counts = {"en.a": (30, 40), "en.b": (12, 25), "en.c": (50, 60)}
    calls = []

    def combine(shares: Mapping[str, float]) -> dict[str, float]:
        calls.append(1)
        group = (shares["en.a"] + shares["en.b"]) / 2
        return {"en.group": group, "en.overall": 0.1 + 0.6 * group + 0.3 * shares["en.c"]}

    spreads = run_spreads(_units_of(counts), combine, replicates=500)
    assert len(calls) < 50  # not once per replicate: the weights and the checks
    direct = proportion_bootstrap_many(counts, combine, replicates=500)
    for name in ("en.group", "en.overall"):
        assert spreads[name].interval == pytest.approx(direct[name].interval, abs=1e-12)


def test_a_combination_that_is_not_linear_is_called_in_every_replicate() -> None:
    from pytest_tooleval.report.compare import run_spreads

    counts = {"en.a": (30, 40), "en.b": (12, 25)}
    calls = []

    def combine(shares: Mapping[str, float]) -> dict[str, float]:
        calls.append(1)
        return {"en.best": max(shares.values())}

    spreads = run_spreads(_units_of(counts), combine, replicates=300)
    direct = proportion_bootstrap_many(counts, combine, replicates=300)
    assert spreads["en.best"].interval == direct["en.best"].interval
    assert len(calls) > 2 * 300  # both bootstraps called it in every replicate
