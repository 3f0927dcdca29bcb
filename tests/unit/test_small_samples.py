"""Tiny samples cannot fool the comparison or the gate: the exact sign-flip test and the MOVER interval a
combined figure falls back to, the floor on a bootstrap p-value, the units behind a figure, and the gate lines
that name the largest cause of errors and a partial run (docs/release-gate.md, "Small samples")."""

from __future__ import annotations

import itertools
import math
from collections.abc import Set
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_tooleval.report.compare import (
    BOOTSTRAP_MIN_CATEGORY,
    BOOTSTRAP_MIN_DISCORDANT,
    BOOTSTRAP_MIN_UNITS,
    Comparison,
    compare,
    run_spreads,
    suite_members,
)
from pytest_tooleval.report.gate import (
    ErrorCause,
    GateResult,
    error_causes,
    evaluate_gate,
    evaluate_regressions,
    largest_cause,
    partial_run,
)
from pytest_tooleval.report.html import gate_lines
from pytest_tooleval.report.markdown import render_markdown
from pytest_tooleval.report.stats import (
    mcnemar_exact,
    mover_interval,
    paired_difference_interval,
    sign_flip_test,
    wilson_interval,
)
from pytest_tooleval.report.suite_summary import Unit
from pytest_tooleval.report.summary import RunSummary, SuiteSummary
from pytest_tooleval.suites.acebench.categories import ALL_CATEGORIES
from pytest_tooleval.suites.acebench.plugin_suite import SUITE as ACEBENCH
from pytest_tooleval.suites.yamlsuite.plugin_suite import SUITE as YAML

# --- the sign-flip test ---------------------------------------------------------------------------------------


def brute_force(changes: list[float]) -> float:
    """Every sign pattern of the non-zero changes, counted one by one."""
    moved = [change for change in changes if change]
    observed = abs(sum(moved))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(moved))
        if abs(sum(sign * abs(change) for sign, change in zip(signs, moved, strict=True))) >= observed - 1e-9
    )
    return hits / 2.0 ** len(moved)


@pytest.mark.parametrize(("lost", "gained"), [(b, c) for b in range(9) for c in range(9)])
def test_on_pass_fail_units_of_one_proportion_it_is_the_exact_mcnemar_test(lost: int, gained: int) -> None:
    assert sign_flip_test([-1.0] * lost + [1.0] * gained + [0.0] * 5) == pytest.approx(mcnemar_exact(lost, gained))


def test_one_change_is_never_evidence_and_k_changes_one_way_give_the_smallest_p() -> None:
    for weight in (1.0, 0.5, 1 / 3, 1e-4):
        assert sign_flip_test([-weight]) == 1.0
        assert sign_flip_test([0.0, weight, 0.0]) == 1.0
    assert sign_flip_test([]) == 1.0 and sign_flip_test([0.0, 0.0]) == 1.0
    for k in range(1, 15):
        assert sign_flip_test([-0.25] * k) == pytest.approx(min(1.0, 2 * 0.5**k))


@pytest.mark.parametrize(
    "changes",
    [
        [-1 / 3, -1 / 3, 1 / 6],  # a flip in each of two one-case categories, one back in a two-case one
        [-0.1 / 50, -0.1 / 50, -0.3 / 20, 0.3 / 20, 0.6 / 100],  # ACEBench-like weights
        [-1 / 3 * 2 / 3, 1 / 3 * 1 / 3, -0.5, 0.25, -0.125, 0.0625],  # shares of repeated asks
        [-0.2] * 4 + [0.05] * 6,
    ],
)
def test_with_weights_it_counts_every_sign_pattern(changes: list[float]) -> None:
    assert sign_flip_test(changes) == pytest.approx(brute_force(changes))


def test_too_many_distinct_sums_are_estimated_by_random_patterns_as_a_valid_test() -> None:
    changes = [-(1 + index / 97) / 40 for index in range(14)] + [(1 + index / 89) / 40 for index in range(3)]
    exact = sign_flip_test(changes)
    assert exact == pytest.approx(brute_force(changes))
    estimated = sign_flip_test(changes, max_states=50, draws=4000, seed=5)
    assert estimated != exact and estimated == pytest.approx(exact, abs=0.02)
    assert sign_flip_test(changes, max_states=50, draws=4000, seed=5) == estimated  # seeded
    assert sign_flip_test([-1.0 / (i + 1) for i in range(30)], max_states=10, draws=999) >= 1 / 1000  # never 0


# --- the MOVER interval ---------------------------------------------------------------------------------------


def test_mover_of_one_part_is_its_own_interval_scaled_and_of_two_the_square_and_add() -> None:
    assert mover_interval([(0.5, -0.2, (-0.6, 0.1))]) == pytest.approx((-0.3, 0.05))
    assert mover_interval([(-1.0, -0.2, (-0.6, 0.1))]) == pytest.approx((-0.1, 0.6))  # a negative weight swaps
    low, high = mover_interval([(0.5, -0.2, (-0.6, 0.1)), (0.5, 0.0, (-0.4, 0.3))])
    assert low == pytest.approx(-0.1 - math.hypot(0.2, 0.2))
    assert high == pytest.approx(-0.1 + math.hypot(0.15, 0.15))
    assert mover_interval([(0.5, -1.0, (-1.0, -0.9)), (0.5, -1.0, (-1.0, -0.9))])[0] == -1.0  # inside its range


def test_newcombe_takes_the_fractional_table_of_shares() -> None:
    assert paired_difference_interval(3.0, 1.0, 0.0, 1.0) == paired_difference_interval(3, 1, 0, 1)
    # two units asked three times: 3/3 -> 1/3 and 3/3 -> 3/3, spread over the table as 4/3, 2/3, 0, 0
    low, high = paired_difference_interval(4 / 3, 2 / 3, 0.0, 0.0)
    assert -1.0 <= low < -1 / 3 < high
    assert high > 0.0  # two units cannot show that a third of one unit's asks was a real loss


# --- a comparison of tiny categories --------------------------------------------------------------------------


def yaml_rows(sizes: dict[str, int], failed: Set[str] = frozenset(), variant: str = "") -> list[dict[str, Any]]:
    """One row per case of the YAML suite: categories of the given sizes, cases `<category>_<n>`, every one
    passed but those in `failed`."""
    rows = []
    for category, size in sizes.items():
        for index in range(size):
            case = f"{category}_{index}"
            row = {
                "suite": "yaml",
                "id": case,
                "test_id": case,
                "category": category,
                "language": "",
                "index": index,
                "category_size": size,
                "outcome": "failed" if case in failed else "passed",
            }
            rows.append({**row, "variant": variant} if variant else row)
    return rows


def compared(rows: list[dict[str, Any]], before: list[dict[str, Any]], replicates: int = 2000) -> Comparison:
    members = {"yaml": suite_members(YAML), "acebench": suite_members(ACEBENCH)}
    return compare(rows, {"samples": [*before], "fingerprint": {}}, "baseline.json", {}, members, replicates=replicates)


def test_the_reported_case_one_flip_in_three_one_case_categories() -> None:
    # issue 24: yaml.fc.overall: 1.000 -> 0.667, -0.333 [-0.333, -0.333], p=0.001 ... REGRESSION; `bootstrap, 0`
    sizes = {"weather": 1, "calendar": 1, "email": 1}
    comparison = compared(yaml_rows(sizes, {"email_0"}, "fc"), yaml_rows(sizes, variant="fc"))
    overall = comparison.figure("yaml.fc.overall")
    assert overall is not None and overall.interval is not None and overall.difference is not None
    assert overall.baseline == 1.0 and overall.current == pytest.approx(2 / 3)
    assert overall.p == 1.0 and overall.test == "exact"
    low, high = overall.interval
    assert low < overall.difference < 0.0 < high  # never a zero-width interval
    assert (overall.units, overall.pass_to_fail, overall.fail_to_pass) == (3, 1, 0)
    checks = evaluate_regressions(comparison, {"overall": 0.0}, 0.05)
    assert [check.regressed for check in checks] == [False]
    assert checks[0].line().endswith(": drop > margin 0.000, not significant at 0.05 ok")


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_one_flipped_sample_of_categories_of_this_size_is_not_significant(size: int) -> None:
    sizes = {"weather": size, "calendar": size, "email": size}
    comparison = compared(yaml_rows(sizes, {"calendar_0"}), yaml_rows(sizes))
    overall = comparison.figure("yaml.overall")
    calendar = comparison.figure("yaml.calendar.accuracy")
    assert overall is not None and calendar is not None and overall.interval is not None
    assert overall.difference is not None
    assert overall.difference == pytest.approx(-1 / size / 3)
    assert (overall.p, overall.test, overall.units, overall.pass_to_fail) == (1.0, "exact", 3 * size, 1)
    assert overall.interval[0] < overall.difference < 0.0 < overall.interval[1]
    assert (calendar.p, calendar.test, calendar.units, calendar.pass_to_fail) == (1.0, "McNemar", size, 1)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_many_flips_in_tiny_categories_are_still_found(size: int) -> None:
    sizes = {f"c{index}": size for index in range(12)}
    lost = {f"c{index}_0" for index in range(12)}  # the first case of every category broke
    comparison = compared(yaml_rows(sizes, lost), yaml_rows(sizes))
    overall = comparison.figure("yaml.overall")
    assert overall is not None and overall.interval is not None
    exact = 12 * size < BOOTSTRAP_MIN_UNITS or size < BOOTSTRAP_MIN_CATEGORY
    assert overall.test == ("exact" if exact else "bootstrap")
    assert overall.p is not None and overall.p < 0.01
    if exact:
        assert overall.p == pytest.approx(2 * 0.5**12)  # all 12 moved one way, equal weights
    assert overall.interval[1] < 0.0 and overall.pass_to_fail == 12


def test_the_bootstrap_needs_units_categories_and_discordant_units_and_its_p_is_floored() -> None:
    assert (BOOTSTRAP_MIN_UNITS, BOOTSTRAP_MIN_CATEGORY, BOOTSTRAP_MIN_DISCORDANT) == (30, 5, 10)
    sizes = {"a": 20, "b": 20}
    nine = {f"a_{index}" for index in range(9)}
    overall = compared(yaml_rows(sizes, nine), yaml_rows(sizes)).figure("yaml.overall")
    assert overall is not None and overall.test == "exact"  # 40 units, but only 9 moved
    assert overall.p == pytest.approx(2 * 0.5**9)
    ten = nine | {"b_0"}
    overall = compared(yaml_rows(sizes, ten), yaml_rows(sizes)).figure("yaml.overall")
    assert overall is not None and overall.test == "bootstrap" and overall.interval is not None
    assert overall.p is not None and overall.p >= mcnemar_exact(10, 0)
    assert overall.interval[0] < overall.interval[1] < 0.0


def test_every_unit_moving_alike_gets_an_interval_of_some_width() -> None:
    sizes = {"a": 15, "b": 15}
    everything = {f"{category}_{index}" for category in sizes for index in range(15)}
    overall = compared(yaml_rows(sizes, everything), yaml_rows(sizes)).figure("yaml.overall")
    assert overall is not None and overall.test == "bootstrap" and overall.interval is not None
    assert overall.difference == -1.0 and overall.interval[0] == -1.0 < overall.interval[1] < 0.0
    assert overall.p == pytest.approx(2 / 2001)  # the bootstrap's, above the floor 2 * 0.5^30


def test_an_acebench_overall_counts_the_units_and_flips_of_its_language_only() -> None:
    def rows(language: str, wrong: set[str]) -> list[dict[str, Any]]:
        return [
            {
                "suite": "acebench",
                "id": f"{category}_{index}",
                "test_id": f"{language}-{category}_{index}",
                "category": category,
                "language": language,
                "index": index,
                "category_size": 2,
                "outcome": "failed" if f"{category}_{index}" in wrong else "passed",
            }
            for category in ("normal_atom_bool", "special_irrelevant")
            for index in range(2)
        ]

    comparison = compared(
        rows("en", {"normal_atom_bool_0"}) + rows("zh", {"special_irrelevant_1"}), rows("en", set()) + rows("zh", set())
    )
    for language in ("en", "zh"):
        overall = comparison.figure(f"acebench.{language}.overall")
        assert overall is not None
        assert (overall.units, overall.pass_to_fail, overall.fail_to_pass, overall.p) == (4, 1, 0, 1.0)


def test_a_runs_own_combined_interval_of_tiny_categories_is_the_mover_of_their_wilson_intervals() -> None:
    units = [Unit("a.accuracy", "a/0", True), Unit("b.accuracy", "b/0", True), Unit("c.accuracy", "c/0", False)]
    overall = run_spreads(units, YAML.figures.combine)["overall"]
    parts = [
        (1 / 3, 1.0, wilson_interval(1, 1)),
        (1 / 3, 1.0, wilson_interval(1, 1)),
        (1 / 3, 0.0, wilson_interval(0, 1)),
    ]
    assert overall.value == pytest.approx(2 / 3)
    assert overall.interval == pytest.approx(mover_interval(parts))  # the bootstrap's was [0.667, 0.667]
    assert 0.0 < overall.interval[0] < 2 / 3 < overall.interval[1] < 1.0
    every = [Unit("a.accuracy", f"a/{index}", True) for index in range(40)]  # every replicate alike
    assert run_spreads(every, YAML.figures.combine)["overall"].interval == pytest.approx(wilson_interval(40, 40))


CATEGORIES = [name for name in ALL_CATEGORIES if "multi_turn" not in name]  # a sample is a unit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    suite=st.sampled_from(["yaml", "acebench"]),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=8),
    seed=st.randoms(use_true_random=False),
    data=st.data(),
)
def test_a_single_flipped_sample_is_never_significant_for_any_layout(
    suite: str, sizes: list[int], seed: Any, data: st.DataObject
) -> None:
    layout = dict(zip(seed.sample(CATEGORIES, len(sizes)), sizes, strict=False))
    baseline = []
    for category, size in layout.items():
        for index in range(size):
            row = {
                "suite": suite,
                "id": f"{category}_{index}",
                "test_id": f"{category}_{index}",
                "category": category,
                "language": "en" if suite == "acebench" else "",
                "index": index,
                "category_size": size,
                "outcome": "passed" if seed.random() < 0.7 else "failed",
            }
            baseline.append(row)
    flipped = data.draw(st.integers(0, len(baseline) - 1))
    current = [dict(row) for row in baseline]
    current[flipped]["outcome"] = "failed" if baseline[flipped]["outcome"] == "passed" else "passed"
    comparison = compared(current, baseline, replicates=200)
    assert comparison.figures
    for entry in comparison.figures:
        assert entry.p is not None and entry.p >= 0.5, entry  # one flip: 1.0 wherever it counts
        assert entry.interval is not None and entry.interval[0] < entry.interval[1], entry
        assert entry.pass_to_fail + entry.fail_to_pass <= 1
    gated = evaluate_regressions(comparison, {"overall": 0.0, "accuracy": 0.0, "normal": 0.0}, 0.05)
    assert not any(check.regressed for check in gated if check.difference is not None)


# --- the gate: the largest cause of errors, a partial run -----------------------------------------------------


def error_row(category: str, message: str, test_id: str, repeat: int = 1) -> dict[str, Any]:
    row = {"suite": "acebench", "category": category, "outcome": "error", "error": message, "test_id": test_id}
    return {**row, "repeat": repeat} if repeat > 1 else row


NO_USER = (
    "SampleError: agent_multi_turn needs a model to play the user: pass --tooleval-user-model NAME "
    "(ACEBench uses gpt-4o); the sample is not scored without one"
)


def test_errors_group_by_category_and_by_their_reason_with_what_names_one_sample_taken_out() -> None:
    rows = [error_row("agent_multi_turn", NO_USER, f"en-agent_multi_turn_{index}") for index in range(30)]
    rows += [
        error_row(
            "normal_atom_bool",
            f"InfrastructureError: HTTP 500 for request 'req_{index}7f3a' after "
            f"{index % 3 + 1} attempts\nTraceback ...",
            f"en-normal_atom_bool_{index}",
        )
        for index in range(4)
    ]
    rows += [error_row("agent_multi_turn", "InternalError: the rollout broke", "zh-agent_multi_turn_0")]
    rows += [error_row("agent_multi_turn", NO_USER, "en-agent_multi_turn_0-r2", repeat=2)]  # a repeat: not counted
    rows += [
        {"suite": "acebench", "category": "agent_multi_turn", "outcome": "failed", "error": NO_USER, "test_id": "x"}
    ]
    causes = error_causes(rows)
    assert [(category, count) for category, _, count in causes] == [
        ("agent_multi_turn", 30),
        ("normal_atom_bool", 4),
        ("agent_multi_turn", 1),
    ]
    assert causes[1][1] == "InfrastructureError: HTTP 500 for request 'req_07f3a' after 1 attempts"  # its first line
    cause = largest_cause(rows)
    assert cause == ErrorCause("agent_multi_turn", NO_USER[:117] + "...", 30, 2, 5)
    assert cause.text() == f"30 agent_multi_turn: {NO_USER[:117]}...; and 5 errors of 2 other causes"
    assert ErrorCause.from_dict(cause.as_dict()) == cause
    assert ErrorCause.from_dict({"category": "x"}) is None and ErrorCause.from_dict(None) is None
    assert largest_cause([error_row("special_incomplete", "", "a")]) == ErrorCause(
        "special_incomplete", "no message", 1
    )
    assert largest_cause(rows[-1:]) is None


def suite_summary(name: str, partial: bool, errors: int, data: dict[str, Any] | None = None) -> SuiteSummary:
    counts = {"total": 100, "scored": 100 - errors, "passed": 50, "failed": 50 - errors, "errors": errors}
    return SuiteSummary(name, [], {"en.overall": 0.5}, partial, counts, data or {})


def test_the_error_rate_line_names_the_largest_cause_when_it_misses() -> None:
    rows = [error_row("agent_multi_turn", NO_USER.split(";")[0], f"en-agent_multi_turn_{index}") for index in range(3)]
    summary = RunSummary({"acebench": suite_summary("acebench", False, 3)})
    missed = evaluate_gate(summary, {}, 0.02, rows=rows)
    assert missed.largest_cause is not None and missed.partial is None
    assert missed.lines() == [
        "tooleval gate: error rate MISSED: 0.030 > 0.020 (3 agent_multi_turn: SampleError: agent_multi_turn needs a "
        "model to play the user: pass --tooleval-user-model NAME (ACEBench uses gpt-4o))",
        "tooleval gate: FAILED",
    ]
    met = evaluate_gate(summary, {}, 0.05, rows=rows)
    assert met.lines() == ["tooleval gate: error rate 0.030 <= 0.050 ok", "tooleval gate: PASSED"]
    # the report's renderers say what the terminal says
    document = {
        "gate": {
            "passed": False,
            "checks": [],
            "regressions": [],
            "notes": [],
            "error_rate": 0.03,
            "max_error_rate": 0.02,
            "largest_cause": missed.largest_cause.as_dict(),
            "partial": None,
        }
    }
    assert gate_lines(document["gate"])[-1] == (missed.lines()[-2], "fail")
    assert f"- error rate **MISSED**: 0.030 > 0.020 ({missed.largest_cause.text()})" in render_markdown(document)


def test_the_verdict_of_a_partial_run_says_what_it_left_out() -> None:
    acebench = {
        "en": {"partial": True, "partial_reasons": ["14 of 17 categories did not run"]},
        "zh": {
            "partial": True,
            "partial_reasons": ["14 of 17 categories did not run", "2 samples or dialogues have no verdict"],
        },
    }
    summary = RunSummary(
        {
            "acebench": suite_summary("acebench", True, 0, acebench),
            "yaml": suite_summary("yaml", True, 0, {"partial": True}),
            "gpt4tools": suite_summary("gpt4tools", False, 0),
        }
    )
    assert partial_run(summary) == (
        "acebench: 14 of 17 categories did not run, 2 samples or dialogues have no "
        "verdict; yaml: not every sample was scored"
    )
    gate = evaluate_gate(summary, {"overall": 0.4}, 0.02)
    assert gate.passed and gate.lines()[-1] == f"tooleval gate: PASSED (partial run: {partial_run(summary)})"
    failed = evaluate_gate(summary, {"overall": 0.6}, 0.02)
    assert failed.lines()[-1] == f"tooleval gate: FAILED (partial run: {partial_run(summary)})"
    whole = RunSummary({"gpt4tools": suite_summary("gpt4tools", False, 0)})
    assert partial_run(whole) is None and evaluate_gate(whole, {}, 0.02).lines()[-1] == "tooleval gate: PASSED"
    document = {
        "gate": {
            "passed": True,
            "checks": [],
            "regressions": [],
            "notes": [],
            "error_rate": 0.0,
            "max_error_rate": 0.02,
            "partial": "yaml: not every sample was scored",
        }
    }
    assert "**Gate: PASSED** (partial run: yaml: not every sample was scored)" in render_markdown(document)
    assert GateResult([], 0.0, 0.02, partial="x").lines()[-1] == "tooleval gate: PASSED (partial run: x)"


# --- a combined figure that is one category ----------------------------------------------------------------


def bfcl_rows(category: str, size: int, failed: set[int]) -> list[dict[str, Any]]:
    return [
        {
            "suite": "bfcl",
            "id": f"{category}_{index}-0-0",
            "test_id": f"{category}_{index}-0-0",
            "category": category,
            "language": "",
            "index": index,
            "category_size": size,
            "outcome": "failed" if index in failed else "passed",
        }
        for index in range(size)
    ]


def test_a_combined_figure_of_one_category_has_that_categorys_interval() -> None:
    """Issue 41: a run of live_simple alone showed `live_simple [0.001, 0.022]` beside `Live AST summary [0.000,
    0.012]`: the same 258 samples, a Wilson interval beside a bootstrap percentile one. The figure that is one
    category's accuracy (weight 1, nothing else) now has the category's interval, in the run's table and in the
    comparison with a baseline."""
    from pytest_tooleval.suites.bfcl.plugin_suite import SUITE as BFCL
    from pytest_tooleval.suites.bfcl.summary import summarize_bfcl

    rows = bfcl_rows("live_simple", 258, set(range(1, 258)))  # one of 258 passed
    block = summarize_bfcl(rows).data["prompt"]
    category, live = block["categories"]["live_simple"], block["groups"]["live.ast"]
    assert live["value"] == category["accuracy"]
    assert live["interval"] == category["interval"] == pytest.approx(list(wilson_interval(1, 258)))
    assert live["detectable"] == category["detectable"]
    # a group that reads several categories keeps its bootstrap
    both = summarize_bfcl(rows + bfcl_rows("live_multiple", 40, {0})).data["prompt"]
    assert both["groups"]["live.ast"]["interval"] != both["categories"]["live_simple"]["interval"]

    members = {"bfcl": suite_members(BFCL)}
    before = bfcl_rows("live_simple", 258, set())
    now = bfcl_rows("live_simple", 258, set(range(20)))  # 20 flips: enough for the bootstrap, were it used
    comparison = compare(now, {"samples": [*before], "fingerprint": {}}, "baseline.json", {}, members)
    proportion, combined = comparison.figure("bfcl.live_simple.accuracy"), comparison.figure("bfcl.live.ast")
    assert proportion is not None and combined is not None and combined.kind == "combined"
    assert (combined.interval, combined.p, combined.test, combined.units, combined.pass_to_fail) == (
        proportion.interval,
        proportion.p,
        "McNemar",
        258,
        20,
    )
    assert combined.p == mcnemar_exact(20, 0)
