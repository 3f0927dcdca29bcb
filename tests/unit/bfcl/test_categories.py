"""--tooleval-bfcl-categories: bfcl's group names spelt out, unknown names refused with the closest one."""

from __future__ import annotations

import pytest

from pytest_tooleval.errors import DataError
from pytest_tooleval.suites.bfcl.data import CATEGORIES, GROUPS, MEMORY, WEB_SEARCH, chosen_categories
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES as MULTI_TURN


def test_groups_spell_out_as_bfcls_own_test_collections() -> None:
    assert chosen_categories(["multi_turn"]) == MULTI_TURN
    scoring = (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH)
    assert chosen_categories(["all_scoring"]) == scoring
    assert chosen_categories(["all"]) == (*scoring, "format_sensitivity")  # reported beside Overall Acc
    memory = ("memory_kv", "memory_vector", "memory_rec_sum")
    assert chosen_categories(["memory"]) == memory
    assert chosen_categories(["agentic"]) == (*memory, "web_search_base", "web_search_no_snippet")
    assert chosen_categories(["single_turn"]) == tuple(CATEGORIES)
    assert chosen_categories(["non_python"]) == ("simple_java", "simple_javascript")
    assert len(GROUPS["python"]) == 11 and "simple_java" not in GROUPS["python"]
    assert GROUPS["live"] == tuple(name for name in CATEGORIES if name.startswith("live_"))
    assert set(GROUPS["non_live"]) | set(GROUPS["live"]) == set(CATEGORIES)


def test_names_and_groups_mix_and_come_out_once_in_leaderboard_order() -> None:
    chosen = chosen_categories(["multi_turn_base", "live_simple", "multi_turn", "simple_python", "live"])
    assert chosen == ("simple_python", *GROUPS["live"], *MULTI_TURN)
    assert chosen_categories([]) == ()


def test_an_unknown_name_is_refused_with_the_closest_one() -> None:
    with pytest.raises(DataError, match=r"unknown multi_turn_bas \(did you mean 'multi_turn_base'\?\).*groups all"):
        chosen_categories(["multi_turn_bas"])
    with pytest.raises(DataError, match=r"unknown multiturn \(did you mean 'multi_turn'\?\)"):
        chosen_categories(["multiturn"])
